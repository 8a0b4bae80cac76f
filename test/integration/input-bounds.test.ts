/**
 * Every bound on a producer's input is the largest value taken, not the first
 * one refused (DESIGN §11.6): a value at the bound is accepted and kept as
 * given, one past it is refused with INVALID_ARGUMENT naming the field (and
 * the config key of the limit, when one sets it), and writes nothing (§11.8).
 * What was accepted reaches GetTask and the worker's StepTask as enqueued.
 */
import { ClientError, Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { keySnapshot } from '../helpers/key-snapshot';

const redis = useEmbeddedRedis();
let t: TestNode;
let prefix: string;

/** The node's limits, small so values at them stay cheap. */
const L = { queue: 48, flowType: 16, payload: 1024, maxWait: 400 };
const YEAR_366_MS = 366 * 86_400_000;
const LAST_DATE_MS = 8_640_000_000_000;
const TIMER_MAX_MS = 2 ** 31 - 1;

beforeAll(async () => {
  prefix = uniquePrefix('bounds');
  t = await startTestNode(redis.url, prefix, {
    'limits.maxPayloadBytes': L.payload, 'limits.maxBatch': 5, 'limits.maxWait': `${L.maxWait}ms`,
    'matching.maxQueueLength': L.queue, 'matching.maxFlowTypeLength': L.flowType, 'matching.dispatchWait': '200ms', 'matching.stickyWait': '100ms',
    'steps.maxAttempts': 3,
  });
});
afterAll(() => t.close());

let seq = 0;
/** A Step of a flow type no worker here runs, in a flow of its own. */
const spec = (over: Partial<pb.IStepSpec> = {}): pb.IStepSpec => ({
  tenant: 'acme', flow_id: `b${++seq}`, flow_type: 'unrun', step_type: 'charge', step_execution_id: 's1', ...over,
});

const snapshot = () => keySnapshot(redis, prefix);

/** The call fails with INVALID_ARGUMENT whose message names `field` first and holds each of `also`; Redis is as it was. */
async function refused(call: () => Promise<unknown>, field: string, ...also: string[]): Promise<void> {
  const before = await snapshot();
  const err = await call().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.INVALID_ARGUMENT);
  expect((err as ClientError).details.startsWith(`ZD_INVALID_ARGUMENT: ${field}: `)).toBe(true);
  for (const text of also) expect((err as ClientError).details).toContain(text);
  expect(await snapshot()).toEqual(before);
}

const x = (n: number) => 'x'.repeat(n);
// "acme:order:" is 11 characters: a step type of 37 makes a queue name of exactly matching.maxQueueLength.
const stepTypeFilling = (queueLength: number) => 's'.repeat(queueLength - 'acme:order:'.length);

describe('a StepSpec field at its bound is taken; one past it is refused, naming the field', () => {
  it.each<[string, Partial<pb.IStepSpec>, Partial<pb.IStepSpec>, string, string[]]>([
    ['flow type of matching.maxFlowTypeLength', { flow_type: 'f'.repeat(L.flowType) }, { flow_type: 'f'.repeat(L.flowType + 1) }, 'flow_type', ['(matching.maxFlowTypeLength)']],
    ['queue name of matching.maxQueueLength', { flow_type: 'order', step_type: stepTypeFilling(L.queue) }, { flow_type: 'order', step_type: stepTypeFilling(L.queue + 1) }, 'step_type', ['(matching.maxQueueLength)']],
    ['flow id of 512 characters', { flow_id: x(512) }, { flow_id: x(513) }, 'flow_id', ['the limit is 512']],
    ['step execution id of 512 characters', { step_execution_id: x(512) }, { step_execution_id: x(513) }, 'step_execution_id', ['the limit is 512']],
    ['input of limits.maxPayloadBytes', { input: Buffer.alloc(L.payload, 7) }, { input: Buffer.alloc(L.payload + 1, 7) }, 'input', ['(limits.maxPayloadBytes)']],
    ['method timeout of 366 days', { method_timeout_ms: YEAR_366_MS }, { method_timeout_ms: YEAR_366_MS + 1 }, 'method_timeout_ms', [`${YEAR_366_MS} ms`]],
    ['heartbeat timeout of 366 days', { heartbeat_timeout_ms: YEAR_366_MS }, { heartbeat_timeout_ms: YEAR_366_MS + 1 }, 'heartbeat_timeout_ms', [`${YEAR_366_MS} ms`]],
    ['ready_at at the last date', { ready_at_ms: LAST_DATE_MS }, { ready_at_ms: LAST_DATE_MS + 1 }, 'ready_at_ms', []],
    ['flow deadline at the last date', { flow_deadline_ms: LAST_DATE_MS }, { flow_deadline_ms: LAST_DATE_MS + 1 }, 'flow_deadline_ms', []],
    ['max attempts of 10000', { retry_policy: { max_attempts: 10_000 } }, { retry_policy: { max_attempts: 10_001 } }, 'retry_policy.max_attempts', ['10000']],
    ['backoff coefficient of 100', { retry_policy: { backoff_coefficient: 100 } }, { retry_policy: { backoff_coefficient: 100.01 } }, 'retry_policy.backoff_coefficient', []],
    ['backoff coefficient of 1', { retry_policy: { backoff_coefficient: 1 } }, { retry_policy: { backoff_coefficient: 0.99 } }, 'retry_policy.backoff_coefficient', []],
    ['initial interval of 366 days', { retry_policy: { initial_interval_ms: YEAR_366_MS } }, { retry_policy: { initial_interval_ms: YEAR_366_MS + 1 } }, 'retry_policy.initial_interval_ms', []],
    ['max interval of 366 days', { retry_policy: { max_interval_ms: YEAR_366_MS } }, { retry_policy: { max_interval_ms: YEAR_366_MS + 1 } }, 'retry_policy.max_interval_ms', []],
    ['64 non-retryable types', { retry_policy: { non_retryable: Array.from({ length: 64 }, (_, i) => `T${i}`) } }, { retry_policy: { non_retryable: Array.from({ length: 65 }, (_, i) => `T${i}`) } }, 'retry_policy.non_retryable', ['64']],
    ['a non-retryable type of 256 characters', { retry_policy: { non_retryable: ['ok', x(256)] } }, { retry_policy: { non_retryable: ['ok', x(257)] } }, 'retry_policy.non_retryable[1]', ['the limit is 256']],
    ['sticky worker id of matching.maxQueueLength', { sticky_worker_id: 'w'.repeat(L.queue) }, { sticky_worker_id: 'w'.repeat(L.queue + 1) }, 'sticky_worker_id', [`the limit is ${L.queue}`]],
  ])('%s', async (_name, at, past, field, also) => {
    const r = await t.matching.enqueueStep({ step: spec(at) });
    expect(r.created).toBe(true);
    await refused(() => t.matching.enqueueStep({ step: spec(past) }), `step.${field}`, ...also);
    // In a batch the same field is named under its index, and none of the batch is written.
    await refused(() => t.matching.enqueueSteps({ steps: [spec(), spec(), spec(), spec(past)] }), `steps[3].${field}`, ...also);
  });
});

describe('what an accepted StepSpec becomes', () => {
  it('keeps max attempts, ready_at and the flow deadline as given, and takes steps.maxAttempts for 0', async () => {
    const readyAt = Date.now() + 3_600_000;
    const deadline = Date.now() + 7_200_000;
    const given = await t.matching.enqueueStep({ step: spec({ ready_at_ms: readyAt, flow_deadline_ms: deadline, retry_policy: { max_attempts: 10_000 } }) });
    expect((await t.matching.getTask({ task_id: given.task_id })).task).toMatchObject({
      state: pb.TaskState.QUEUED, ready_at_ms: readyAt, flow_deadline_ms: deadline, max_attempts: 10_000,
    });
    const omitted = await t.matching.enqueueStep({ step: spec({ retry_policy: { max_attempts: 0 } }) });
    expect((await t.matching.getTask({ task_id: omitted.task_id })).task).toMatchObject({ max_attempts: 3, flow_deadline_ms: 0 });
  });

  it('hands a worker the input, timeouts and flow deadline as enqueued, and 0 for those omitted', async () => {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: 'mapped', flow_types: ['mapped'] }));
    await slot.nextOf('registered');
    const deadline = Date.now() + 600_000;
    const input = Buffer.alloc(L.payload, 0xab);
    const full = await t.matching.enqueueStep({ step: spec({
      flow_type: 'mapped', input, method_timeout_ms: 50_000, heartbeat_timeout_ms: 70_000, flow_deadline_ms: deadline,
    }) });
    const task = (await slot.nextOf('step_task')).step_task!;
    expect(task).toMatchObject({ task_id: full.task_id, method_timeout_ms: 50_000, heartbeat_timeout_ms: 70_000, flow_deadline_ms: deadline, attempt: 1 });
    expect(Buffer.from(task.input!).equals(input)).toBe(true);
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);

    const bare = await t.matching.enqueueStep({ step: spec({ flow_type: 'mapped' }) });
    const plain = (await slot.nextOf('step_task')).step_task!;
    expect(plain).toMatchObject({ task_id: bare.task_id, method_timeout_ms: 0, heartbeat_timeout_ms: 0, flow_deadline_ms: 0 });
    expect(plain.input).toHaveLength(0);
    slot.send({ step_result: { task_token: plain.task_token, output: Buffer.from('ok') } });
    await slot.nextOf('result_ack');
    slot.halfClose();
    await slot.ended;
  });

  it('records in its outcome when the Step was enqueued, and a failure as the worker sent it', async () => {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: 'outcomes', flow_types: ['failing'] }));
    await slot.nextOf('registered');
    for (const nonRetryable of [true, false]) {
      const r = await t.matching.enqueueStep({ step: spec({ flow_type: 'failing', retry_policy: { max_attempts: 1 } }) });
      const enqueuedAt = Number((await t.matching.getTask({ task_id: r.task_id })).task!.enqueued_at_ms);
      const task = (await slot.nextOf('step_task')).step_task!;
      await new Promise((res) => setTimeout(res, 20)); // the outcome is written later than the enqueue
      slot.send({ step_result: { task_token: task.task_token, failure: { message: 'no stock', type: 'Stock', non_retryable: nonRetryable } } });
      await slot.nextOf('result_ack');
      const o = (await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: L.maxWait })).outcome!;
      expect(o).toMatchObject({
        status: pb.OutcomeStatus.FAILED, attempt: 1, idempotency_key: r.task_id,
        error: { message: 'no stock', type: 'Stock', non_retryable: nonRetryable },
      });
      expect(Number(o.enqueued_at_ms)).toBe(enqueuedAt);
      expect(Number(o.finished_at_ms)).toBeGreaterThan(enqueuedAt);
    }
    slot.halfClose();
    await slot.ended;
  });
});

describe('the other MatchingService calls at their bounds', () => {
  it('takes a tenant of matching.maxQueueLength in CancelFlow and DescribeQueues, and refuses one longer', async () => {
    const tenant = 't'.repeat(L.queue);
    await expect(t.matching.cancelFlow({ tenant, flow_id: 'f' })).resolves.toMatchObject({ cancelled_queued: 0 });
    await expect(t.matching.describeQueues({ tenant })).resolves.toMatchObject({ queues: [] });
    await refused(() => t.matching.cancelFlow({ tenant: `${tenant}t`, flow_id: 'f' }), 'tenant', '(matching.maxQueueLength)');
    await refused(() => t.matching.describeQueues({ tenant: `${tenant}t` }), 'tenant', '(matching.maxQueueLength)');
  });

  it('takes a DescribeQueues flow type of matching.maxFlowTypeLength, and refuses one longer', async () => {
    await t.matching.enqueueStep({ step: spec({ flow_type: 'q'.repeat(L.flowType) }) });
    const r = await t.matching.describeQueues({ tenant: 'acme', flow_type: 'q'.repeat(L.flowType) });
    expect(r.queues).toEqual([expect.objectContaining({ flow_type: 'q'.repeat(L.flowType), step_type: 'charge', ready: 1 })]);
    await refused(() => t.matching.describeQueues({ tenant: 'acme', flow_type: 'q'.repeat(L.flowType + 1) }), 'flow_type', '(matching.maxFlowTypeLength)');
  });

  it('takes a CancelFlow reason of 1024 characters, and gives it to the outcome', async () => {
    const step = spec();
    const queued = await t.matching.enqueueStep({ step });
    const reason = 'r'.repeat(1024);
    await refused(() => t.matching.cancelFlow({ tenant: 'acme', flow_id: step.flow_id, reason: `${reason}r` }), 'reason', 'the limit is 1024');
    expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: step.flow_id, reason })).toMatchObject({ cancelled_queued: 1 });
    const o = (await t.matching.waitOutcome({ task_id: queued.task_id, wait_ms: L.maxWait })).outcome!;
    expect(o).toMatchObject({ status: pb.OutcomeStatus.CANCELLED, error: { message: reason } });
  });

  it('waits a WaitOutcome of exactly limits.maxWait, and refuses one longer', async () => {
    const queued = await t.matching.enqueueStep({ step: spec() });
    const started = Date.now();
    expect((await t.matching.waitOutcome({ task_id: queued.task_id, wait_ms: L.maxWait })).outcome).toBeFalsy();
    expect(Date.now() - started).toBeGreaterThanOrEqual(L.maxWait - 50);
    await refused(() => t.matching.waitOutcome({ task_id: queued.task_id, wait_ms: L.maxWait + 1 }), 'wait_ms', `${L.maxWait} ms`);
  });

  it('takes an InvokeRpc timeout of 2^31 - 1 ms and names of their limits, and refuses a longer timeout', async () => {
    const rpc = { tenant: 'acme', flow_id: 'r', flow_type: 'f'.repeat(L.flowType), rpc_name: 'n'.repeat(L.queue), input: Buffer.alloc(L.payload), sticky_worker_id: 'w'.repeat(L.queue) };
    // No worker runs the flow type: past validation, the call fails finding one.
    const err = await t.matching.invokeRpc({ ...rpc, timeout_ms: TIMER_MAX_MS }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
    await refused(() => t.matching.invokeRpc({ ...rpc, timeout_ms: TIMER_MAX_MS + 1 }), 'timeout_ms', `${TIMER_MAX_MS} ms`);
  });

  it('gives an InvokeRpc without timeout_ms limits.maxWait to run (not matching.dispatchWait), and one with it its timeout', async () => {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: 'rpc-budget', flow_types: ['rpcb'] }));
    await slot.nextOf('registered');
    for (const [timeout, budget] of [[0, L.maxWait], [5000, 5000]]) {
      const before = Date.now();
      const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'rb', flow_type: 'rpcb', rpc_name: 'peek', timeout_ms: timeout });
      const task = (await slot.nextOf('rpc_task')).rpc_task!;
      const after = Date.now();
      expect(Number(task.deadline_ms)).toBeGreaterThanOrEqual(before + budget);
      expect(Number(task.deadline_ms)).toBeLessThanOrEqual(after + budget);
      slot.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('ok') } });
      expect(Buffer.from((await call).output!).toString()).toBe('ok');
      await slot.nextOf('result_ack');
    }
    slot.halfClose();
    await slot.ended;
  });
});
