/**
 * A result whose text is no UTF-8 (a worker that cut its error inside a character,
 * or wrote a lone surrogate: JavaScript's protobufjs sends those bytes as they are)
 * is refused alone, naming the field (REFUSED_INVALID: nothing recorded, the attempt
 * still the slot's). The node ended the whole stream, and the attempt failed as
 * "worker lost" and ran again, the worker's own failure and nonRetryable lost.
 * One node, a raw slot, a real redis-server.
 */
import { ExternalTaskServiceDefinition, pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { ClientError, createClient, Status } from 'nice-grpc';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('invalid-text'));
});
afterEach(() => t.close());

it('refuses a step result with a failure message that is no UTF-8, and takes the valid one that follows', async () => {
  const s = openSlot(t.worker);
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, failure: { message: 'cut inside \uD83D', type: 'Bad', non_retryable: true } } });
  const refused = (await s.nextOf('result_ack')).result_ack!;
  expect(refused).toMatchObject({ task_token: task.task_token, verdict: pb.ResultVerdict.REFUSED_INVALID });
  expect(refused.error).toMatch(/^step_result\.failure\.message: not valid UTF-8 text/);
  expect((await t.matching.getTask({ task_id: taskId })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });

  s.send({ step_result: { task_token: task.task_token, failure: { message: 'cut inside \uFFFD', type: 'Bad', non_retryable: true } } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  const outcome = (await t.matching.waitOutcome({ task_id: taskId, wait_ms: 2000 })).outcome!;
  expect(outcome).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });
  expect(outcome.error).toMatchObject({ message: 'cut inside \uFFFD', type: 'Bad', non_retryable: true });
  s.reset();
});

it('a request with text that is no UTF-8 is still refused whole, naming the field, and writes nothing; on an enqueue stream the stream goes on', async () => {
  const step = { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' };
  const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: ClientError) => e);
  // A lone surrogate: protobufjs writes it as bytes that are no UTF-8 (CESU-8).
  expect(await refusal(t.matching.enqueueStep({ step: { ...step, tenant: 'acme\uDE00' } }))).toMatchObject({
    code: Status.INVALID_ARGUMENT, details: 'ZD_INVALID_ARGUMENT: step.tenant: is not valid UTF-8 text',
  });
  expect(await refusal(t.matching.enqueueSteps({ steps: [step, { ...step, flow_id: 'g\uD800h' }] }))).toMatchObject({
    code: Status.INVALID_ARGUMENT, details: 'ZD_INVALID_ARGUMENT: steps[1].flow_id: is not valid UTF-8 text',
  });
  // On an enqueue stream, that request alone: the stream carries the producer's other enqueues.
  const answers: pb.EnqueueStreamResponse[] = [];
  for await (const a of t.matching.enqueueStream((async function* () {
    yield { request_id: 1, steps: [{ ...step, step_type: 's\uDBFF' }] };
    await new Promise((r) => setTimeout(r, 100));
    yield { request_id: 2, steps: [{ ...step, flow_type: 'other' }] };
  })())) answers.push(a);
  expect(answers.map((a) => a.request_id)).toEqual([1, 2]);
  expect(answers[0]!.error).toMatchObject({ code: Status.INVALID_ARGUMENT, message: 'ZD_INVALID_ARGUMENT: steps[0].step_type: is not valid UTF-8 text' });
  expect(answers[1]!.results).toMatchObject([{ created: true }]);
  const written = (await t.matching.describeQueues({ tenant: 'acme' })).queues;
  expect(written.map((q) => `${q.flow_type}:${q.step_type}`)).toEqual(['other:s']);
  const ext = createClient(ExternalTaskServiceDefinition, t.channel);
  expect(await refusal(ext.fetchAndLock({ worker_id: 'w', topics: [{ tenant: 'acme', flow_type: 'order', step_type: '\uDC00' }] }))).toMatchObject({
    code: Status.INVALID_ARGUMENT, details: 'ZD_INVALID_ARGUMENT: topics[0].step_type: is not valid UTF-8 text',
  });
  // A Register's: the stream ends naming it.
  const s = openSlot(t.worker, registerFrame({ flow_types: ['order', 'pay\uD800'] }));
  expect(await s.ended).toMatchObject({ code: Status.INVALID_ARGUMENT, details: 'ZD_INVALID_ARGUMENT: register.flow_types[1]: is not valid UTF-8 text' });
  expect((await t.matching.describeQueues({ tenant: 'acme' })).queues).toEqual(written);
});

it('a stream the node ends over a second Register fails the attempt it held for that, not as a reset', async () => {
  const s = openSlot(t.worker);
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'g', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  await s.nextOf('step_task');
  s.send(registerFrame());
  await expect(s.ended).resolves.toMatchObject({ code: Status.INVALID_ARGUMENT });
  const task = (await t.matching.getTask({ task_id: taskId })).task!;
  expect(task.last_error?.message).toMatch(/^worker lost: stream ended by the node: .*register: was sent again/);
});

it('passes over a heartbeat whose token is no UTF-8: the stream and its attempt run on, and the next result is taken', async () => {
  // A heartbeat has no answer; ending the stream for it would fail the attempt as worker lost.
  const s = openSlot(t.worker);
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'h', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  const task = (await s.nextOf('step_task')).step_task!;
  // Kept short: protobufjs writes a lone surrogate of a short string as bytes that are no UTF-8.
  s.send({ heartbeat: { task_token: `${task.task_token!.slice(0, 8)}\uD83D` } });
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await s.nextOf('result_ack')).result_ack).toMatchObject({ task_token: task.task_token, verdict: pb.ResultVerdict.ACCEPTED });
  expect((await t.matching.waitOutcome({ task_id: taskId, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  s.reset();
});

it('refuses a decline whose token is no UTF-8, naming the field, and the slot keeps its task', async () => {
  const s = openSlot(t.worker);
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'd', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ decline: { task_token: `${task.task_token!.slice(0, 8)}\uD83D`, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  const refused = (await s.nextOf('result_ack')).result_ack!;
  expect(refused.verdict).toBe(pb.ResultVerdict.REFUSED_INVALID);
  expect(refused.error).toMatch(/^decline\.task_token: not valid UTF-8 text/);
  expect((await t.matching.getTask({ task_id: taskId })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await t.matching.waitOutcome({ task_id: taskId, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  s.reset();
});
