/**
 * The owner's timers (src/owner/partition.ts, one heap per partition): several
 * delayed Steps, running attempts or flow deadlines of one partition share one
 * timer each kind, armed for the earliest. A later one must never push an
 * earlier one back, and once the earliest has fired the next one must still
 * fire at its own time (DESIGN §4, §6), over real gRPC and a real redis-server.
 *
 * Each test keeps its Steps in one flow (one partition) and one queue, and ends
 * within a few seconds of the node's start, before its periodic backlog count
 * arms the timers again from Redis.
 */
import { pb } from '../../src/wire';
import { fetchClients, topic } from '../helpers/fetch';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'otimers');

function step(over: Partial<pb.IStepSpec> = {}): pb.IStepSpec {
  return { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', ...over };
}

it('offers a delayed Step at its ready_at though a later delayed Step of its queue was enqueued after it', async () => {
  const s = await env.registeredSlot();
  const now = Date.now();
  const soon = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'soon', ready_at_ms: now + 500 }) });
  const later = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'later', ready_at_ms: now + 3000 }) });
  expect(later.partition).toBe(soon.partition);

  const first = (await s.nextOf('step_task', 2500)).step_task!;
  const offeredAt = Date.now();
  expect(first).toMatchObject({ task_id: soon.task_id, attempt: 1 });
  expect(offeredAt).toBeGreaterThanOrEqual(now + 500 - 5);
  expect(offeredAt).toBeLessThan(now + 3000);
  s.send({ step_result: { task_token: first.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');

  // The later one waits for its own ready_at.
  const second = (await s.nextOf('step_task', 5000)).step_task!;
  expect(second).toMatchObject({ task_id: later.task_id, attempt: 1 });
  expect(Date.now()).toBeGreaterThanOrEqual(now + 3000 - 5);
});

it('offers a delayed Step at its ready_at though a later delayed Step of its queue was enqueued before it', async () => {
  const s = await env.registeredSlot();
  const now = Date.now();
  const later = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'later', ready_at_ms: now + 3000 }) });
  const soon = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'soon', ready_at_ms: now + 300 }) });
  expect(soon.partition).toBe(later.partition);

  const first = (await s.nextOf('step_task', 2500)).step_task!;
  expect(first).toMatchObject({ task_id: soon.task_id, attempt: 1 });
  expect(Date.now()).toBeGreaterThanOrEqual(now + 300 - 5);
  expect(Date.now()).toBeLessThan(now + 1500);
  s.reset();
});

it('times out each running attempt at its own heartbeat deadline, the earlier one first: FAILED at attempt 1, its slot told', async () => {
  const a = await env.registeredSlot({ app_worker_id: 'wa' });
  const policy = { max_attempts: 1 };
  const early = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'early', heartbeat_timeout_ms: 300, retry_policy: policy }) });
  const taskA = (await a.nextOf('step_task')).step_task!;
  expect(taskA).toMatchObject({ task_id: early.task_id, attempt: 1 });
  const b = await env.registeredSlot({ app_worker_id: 'wb' });
  const late = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'late', heartbeat_timeout_ms: 1500, retry_policy: policy }) });
  const taskB = (await b.nextOf('step_task')).step_task!;
  expect(taskB).toMatchObject({ task_id: late.task_id, attempt: 1 });
  expect(late.partition).toBe(early.partition);
  const lateDue = Number(taskB.started_at_ms) + 1500;

  // The earlier deadline is not pushed back to the later one's.
  expect((await a.nextOf('cancel', 3000)).cancel!.task_token).toBe(taskA.task_token);
  const oa = (await env.t.matching.waitOutcome({ task_id: early.task_id, wait_ms: 1000 })).outcome!;
  expect(oa).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });
  expect(oa.error).toMatchObject({ type: 'timeout' });
  expect(Number(oa.finished_at_ms)).toBeLessThan(lateDue);

  // And the later one still ends at its own, though nothing started or heartbeat since.
  expect((await b.nextOf('cancel', 2500)).cancel!.task_token).toBe(taskB.task_token);
  const ob = (await env.t.matching.waitOutcome({ task_id: late.task_id, wait_ms: 1000 })).outcome!;
  expect(ob).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });
  expect(Number(ob.finished_at_ms)).toBeGreaterThanOrEqual(lateDue);
});

it('times out an attempt started after one with a later deadline at its own, earlier deadline', async () => {
  const a = await env.registeredSlot({ app_worker_id: 'wa' });
  const policy = { max_attempts: 1 };
  const late = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'late', heartbeat_timeout_ms: 1500, retry_policy: policy }) });
  const taskA = (await a.nextOf('step_task')).step_task!;
  expect(taskA).toMatchObject({ task_id: late.task_id, attempt: 1 });
  const lateDue = Number(taskA.started_at_ms) + 1500;
  // The owner's attempt timer is armed for the later deadline; a second attempt starts with an earlier one.
  const b = await env.registeredSlot({ app_worker_id: 'wb' });
  const early = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'early', heartbeat_timeout_ms: 300, retry_policy: policy }) });
  const taskB = (await b.nextOf('step_task')).step_task!;
  expect(taskB).toMatchObject({ task_id: early.task_id, attempt: 1 });
  expect(early.partition).toBe(late.partition);

  expect((await b.nextOf('cancel', 3000)).cancel!.task_token).toBe(taskB.task_token);
  const ob = (await env.t.matching.waitOutcome({ task_id: early.task_id, wait_ms: 1000 })).outcome!;
  expect(ob).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });
  expect(Number(ob.finished_at_ms)).toBeGreaterThanOrEqual(Number(taskB.started_at_ms) + 300);
  expect(Number(ob.finished_at_ms)).toBeLessThan(lateDue - 500);
  a.reset();
});

it('times out each queued Step at its own flow deadline, the earlier one first', async () => {
  const now = Date.now();
  // No worker of the flow type: both wait in their queue.
  const first = await env.t.matching.enqueueStep({ step: step({ flow_type: 'nobody', step_execution_id: 'd1', flow_deadline_ms: now + 400 }) });
  const second = await env.t.matching.enqueueStep({ step: step({ flow_type: 'nobody', step_execution_id: 'd2', flow_deadline_ms: now + 1500 }) });
  expect(second.partition).toBe(first.partition);

  const o1 = (await env.t.matching.waitOutcome({ task_id: first.task_id, wait_ms: 2500 })).outcome!;
  expect(o1).toMatchObject({ status: pb.OutcomeStatus.TIMED_OUT, attempt: 1 });
  // Nothing to retry: the error says so to an engine reading the outcome.
  expect(o1.error).toMatchObject({ type: 'timeout', non_retryable: true });
  expect(o1.error!.message).toContain('flow deadline');
  expect(Number(o1.finished_at_ms)).toBeGreaterThanOrEqual(now + 400);
  expect(Number(o1.finished_at_ms)).toBeLessThan(now + 1500);

  const o2 = (await env.t.matching.waitOutcome({ task_id: second.task_id, wait_ms: 2500 })).outcome!;
  expect(o2).toMatchObject({ status: pb.OutcomeStatus.TIMED_OUT, attempt: 1 });
  expect(Number(o2.finished_at_ms)).toBeGreaterThanOrEqual(now + 1500);
});

it('times out a queued Step at its flow deadline though one with a later deadline was enqueued before it', async () => {
  const now = Date.now();
  // No worker of the flow type: both wait in their queue; the later deadline arms the owner's timer first.
  const later = await env.t.matching.enqueueStep({ step: step({ flow_type: 'nobody', step_execution_id: 'd1', flow_deadline_ms: now + 1500 }) });
  const sooner = await env.t.matching.enqueueStep({ step: step({ flow_type: 'nobody', step_execution_id: 'd2', flow_deadline_ms: now + 300 }) });
  expect(sooner.partition).toBe(later.partition);

  const o = (await env.t.matching.waitOutcome({ task_id: sooner.task_id, wait_ms: 2500 })).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.TIMED_OUT, attempt: 1 });
  expect(Number(o.finished_at_ms)).toBeGreaterThanOrEqual(now + 300);
  expect(Number(o.finished_at_ms)).toBeLessThan(now + 1000);
});

it('leaves a running Step to its attempt past its flow deadline: no Cancel then, and its result is still recorded', async () => {
  const s = await env.registeredSlot();
  const deadline = Date.now() + 300;
  const r = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'runs-on', flow_deadline_ms: deadline }) });
  const task = (await s.nextOf('step_task')).step_task!;
  expect(task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  await expect(s.nextOf('cancel', deadline + 400 - Date.now())).rejects.toThrow(/no frame/);
  expect((await env.t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });

  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('late but done') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  const o = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  expect(Buffer.from(o.output!).toString()).toBe('late but done');
});

it('ends TIMED_OUT at attempt 1, its slot told, a Step whose attempt times out after its flow deadline passed', async () => {
  const s = await env.registeredSlot();
  const deadline = Date.now() + 300;
  const r = await env.t.matching.enqueueStep({
    step: step({ step_execution_id: 'hb-late', flow_deadline_ms: deadline, heartbeat_timeout_ms: 900, retry_policy: { max_attempts: 3, initial_interval_ms: 50 } }),
  });
  const task = (await s.nextOf('step_task')).step_task!;
  // The flow deadline passes while it runs: nothing happens to it then.
  await expect(s.nextOf('cancel', deadline + 300 - Date.now())).rejects.toThrow(/no frame/);
  // Its heartbeat deadline ends the attempt; a retry would start past the flow deadline.
  expect((await s.nextOf('cancel', 2000)).cancel!.task_token).toBe(task.task_token);
  const o = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.TIMED_OUT, attempt: 1 });
  expect(Number(o.finished_at_ms)).toBeGreaterThanOrEqual(Number(task.started_at_ms) + 900);
  await expect(s.nextOf('step_task', 300)).rejects.toThrow(/no frame/);
});

it('wakes a WaitOutcome on a queued Step when its flow deadline ends it, at once', async () => {
  const deadline = Date.now() + 300;
  const r = await env.t.matching.enqueueStep({ step: step({ flow_type: 'nobody', step_execution_id: 'bell', flow_deadline_ms: deadline }) });
  const waiting = env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 });
  const bell = env.t.node['bell'];
  await waitFor(() => bell.waiting === 1, { intervalMs: 2, description: 'the waiter waits' });
  expect((await waiting).outcome!.status).toBe(pb.OutcomeStatus.TIMED_OUT);
  // Woken by the timeout's notice, not by the waiter's periodic look a second after it
  // began to wait (about 700 ms past the deadline).
  expect(Date.now() - deadline).toBeLessThan(450);
});

it('wakes a WaitOutcome on a running Step when its last attempt times out, at once', async () => {
  const a = await env.registeredSlot();
  const r = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'hb-bell', heartbeat_timeout_ms: 300, retry_policy: { max_attempts: 1 } }) });
  const task = (await a.nextOf('step_task')).step_task!;
  const due = Number(task.started_at_ms) + 300;
  const waiting = env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 });
  const bell = env.t.node['bell'];
  await waitFor(() => bell.waiting === 1, { intervalMs: 2, description: 'the waiter waits' });
  const o = (await waiting).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });
  expect(o.error).toMatchObject({ type: 'timeout' });
  // Woken by the owner's notice of the outcome, not by the waiter's periodic look a second after it began.
  expect(Date.now() - due).toBeLessThan(450);
});

it('backs off a heartbeat-timed-out attempt by the retry policy: attempt 2 is offered at its ready_at, not before', async () => {
  const s = await env.registeredSlot();
  const r = await env.t.matching.enqueueStep({
    step: step({ step_execution_id: 'backoff', heartbeat_timeout_ms: 300, retry_policy: { max_attempts: 2, initial_interval_ms: 800 } }),
  });
  const first = (await s.nextOf('step_task')).step_task!;
  expect(first).toMatchObject({ task_id: r.task_id, attempt: 1 });
  expect((await s.nextOf('cancel', 2000)).cancel!.task_token).toBe(first.task_token);
  const queued = (await env.t.matching.getTask({ task_id: r.task_id })).task!;
  expect(queued).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 2 });
  expect(queued.last_error).toMatchObject({ type: 'timeout' });
  const readyAt = Number(queued.ready_at_ms);
  expect(readyAt).toBeGreaterThanOrEqual(Number(first.started_at_ms) + 300 + 800);

  // The worker lets go of the cancelled attempt: its late result is refused, and its slot is idle
  // again, without the retry until then.
  s.send({ step_result: { task_token: first.task_token, output: Buffer.from('late') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.REFUSED_STALE);
  const second = (await s.nextOf('step_task', readyAt + 2000 - Date.now())).step_task!;
  expect(Date.now()).toBeGreaterThanOrEqual(readyAt - 5);
  expect(second).toMatchObject({ task_id: r.task_id, attempt: 2 });
  expect(Number(second.started_at_ms)).toBeGreaterThanOrEqual(readyAt);
  s.send({ step_result: { task_token: second.task_token, output: Buffer.from('ok') } });
  expect((await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 2 });
});

it('hands the retry of a timed-out attempt to a fetch worker long-polling its topic at its ready_at', async () => {
  const { external } = fetchClients(env.t);
  const a = await env.registeredSlot();
  const r = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'to-fetch', heartbeat_timeout_ms: 300, retry_policy: { max_attempts: 2, initial_interval_ms: 200 } }) });
  const task = (await a.nextOf('step_task')).step_task!;
  const readyAt = Number(task.started_at_ms) + 300 + 200;
  const fetched = external.fetchAndLock({ worker_id: 'F', topics: [topic({ flow_type: 'order', step_type: 'charge' })], max_tasks: 1, wait_ms: 3000 });
  // The slot is told its attempt timed out, and leaves: the retry is the fetch worker's.
  expect((await a.nextOf('cancel', 2000)).cancel!.task_token).toBe(task.task_token);
  a.reset();
  const got = await fetched;
  expect(got.tasks.map((x) => [x.task_id, x.attempt])).toEqual([[r.task_id, 2]]);
  expect(Date.now()).toBeGreaterThanOrEqual(readyAt - 5);
  expect(Date.now() - readyAt).toBeLessThan(500);
});

it('moves the heartbeat deadline a whole heartbeat timeout past each Heartbeat: beats well apart keep attempt 1', async () => {
  const s = await env.registeredSlot();
  const r = await env.t.matching.enqueueStep({
    step: step({ step_execution_id: 'beats', heartbeat_timeout_ms: 2000, retry_policy: { max_attempts: 3, initial_interval_ms: 50 } }),
  });
  const task = (await s.nextOf('step_task')).step_task!;
  // Each beat comes 1.3 s after the last: within the 2 s timeout, though past two thirds of it.
  for (let i = 0; i < 3; i++) {
    await expect(s.nextOf('cancel', 1300)).rejects.toThrow(/no frame/);
    s.send({ heartbeat: { task_token: task.task_token } });
  }
  await expect(s.nextOf('cancel', 300)).rejects.toThrow(/no frame/);
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
});
