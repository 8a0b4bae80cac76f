/**
 * A store call that ends an attempt and meets a Redis error (a failover, a
 * dropped connection) is not lost: the gateway runs it again in the
 * background until Redis answers, so the attempt never stays "running" with
 * no slot holding it (every task gets exactly one outcome, DESIGN §11). The
 * error is injected once into the node's real store; Redis itself is real.
 */
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const step = (flow: string) => ({
  tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 3, initial_interval_ms: 50 },
});

/** Makes the next call of `name` on the node's store reject as a dropped connection would. */
function failOnce(name: 'complete' | 'fail' | 'heartbeat' | 'release' | 'timeout'): () => number {
  const store = t.node.store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const real = store[name]!.bind(store);
  let calls = 0;
  store[name] = (...args: unknown[]) => (calls++ === 0 ? Promise.reject(new Error('Connection is closed.')) : real(...args));
  return () => calls;
}

/** A node of its own, a slot of `appWorkerId`, and a Step of `flow` running in it. */
async function running(flow: string, appWorkerId = 'w1') {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  const s = openSlot(t.worker, registerFrame({ app_worker_id: appWorkerId }));
  await s.nextOf('registered');
  const r = await t.matching.enqueueStep({ step: step(flow) });
  const task = (await s.nextOf('step_task')).step_task!;
  return { s, r, task };
}

it('records a result whose completion met a Redis error once Redis answers', async () => {
  const { s, r, task } = await running('c');
  const calls = failOnce('complete');
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  const outcome = (await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 })).outcome;
  expect(outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
  expect(Buffer.from(outcome!.output!).toString()).toBe('done');
  expect(calls()).toBeGreaterThanOrEqual(2);
  s.reset();
});

it('fails the attempt of a reset stream whose failure met a Redis error once Redis answers', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  const s = openSlot(t.worker, registerFrame({ app_worker_id: 'w1' }));
  await s.nextOf('registered');
  const r = await t.matching.enqueueStep({ step: step('f') });
  await s.nextOf('step_task');
  const calls = failOnce('fail');
  s.reset(); // worker lost mid-task: the attempt must fail (worker_lost) and be retried
  const again = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await again.nextOf('registered');
  expect((await again.nextOf('step_task', 5000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 2 });
  expect(calls()).toBeGreaterThanOrEqual(2);
  again.reset();
});

/** Makes the first call of `name` land in Redis and then reject, as a reply lost to a dropped connection would. */
function loseReplyOnce(name: 'complete' | 'fail'): () => number {
  const store = t.node.store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const real = store[name]!.bind(store);
  let calls = 0;
  store[name] = async (...args: unknown[]) => {
    const result = await real(...args);
    if (calls++ === 0) throw new Error('Connection is closed.');
    return result;
  };
  return () => calls;
}

const completedOutcomes = async () =>
  (await t.node.metrics.registry.getSingleMetric('dexzd_outcomes_total')!.get()).values.find((v) => v.labels.status === 'COMPLETED')?.value;

it('counts and announces a completion whose reply was lost once its call runs again', async () => {
  const { s, r, task } = await running('lost-c');
  const calls = loseReplyOnce('complete');
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  // the run again answers as the first run did: the outcome is counted (and its waiters rung) once
  await waitFor(async () => calls() >= 2 && (await completedOutcomes()) === 1, { timeoutMs: 5000, description: 'the completion counted once' });
  expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 100 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED });
  s.reset();
});

it('schedules the retry of a failure whose reply was lost once, and starts it without waiting for a recount', async () => {
  const { s, r, task } = await running('lost-f');
  const calls = loseReplyOnce('fail');
  s.send({ step_result: { task_token: task.task_token, failure: { message: 'boom', type: 'Io' } } });
  const again = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await again.nextOf('registered');
  // the owner hears of the retry from the run again, not from its backlog count 5 s later
  expect((await again.nextOf('step_task', 2500)).step_task).toMatchObject({ task_id: r.task_id, attempt: 2 });
  expect(calls()).toBeGreaterThanOrEqual(2);
  again.reset();
  s.reset();
});

it('gives back a task whose start committed but whose reply was lost', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'), { 'matching.syncMatchWait': '10ms' });
  // queued first (no worker), so that an owner's offer starts it, not the enqueue
  const r = await t.matching.enqueueStep({ step: step('s') });
  await new Promise((res) => setTimeout(res, 100));
  const store = t.node.store;
  const real = store.start.bind(store);
  let calls = 0;
  store.start = async (...args: Parameters<typeof store.start>) => {
    const result = await real(...args);
    if (calls++ === 0) throw new Error('Connection is closed.'); // committed, then the reply went missing
    return result;
  };
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  // the first start ran in Redis but the slot never heard: the task must come back and start again
  expect((await s.nextOf('step_task', 5000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  expect(calls).toBeGreaterThanOrEqual(2);
  s.reset();
});

it('keeps the stream and the attempt of a worker whose heartbeat met a Redis error', async () => {
  const { s, r, task } = await running('h');
  const calls = failOnce('heartbeat');
  s.send({ heartbeat: { task_token: task.task_token } });
  await waitFor(() => calls() >= 1, { description: 'the heartbeat met the error' });
  expect(calls()).toBe(1);
  s.send({ heartbeat: { task_token: task.task_token } }); // the next one lands
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  s.reset();
});

it('gives back a declined task whose return met a Redis error once Redis answers, unconsumed', async () => {
  const { s, r, task } = await running('d');
  const calls = failOnce('release');
  s.send({ decline: { task_token: task.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  const other = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await other.nextOf('registered');
  expect((await other.nextOf('step_task', 5000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  expect(calls()).toBeGreaterThanOrEqual(2);
  other.reset();
  s.reset();
});

/** Wraps the node store's `name` so that its first call runs `after` once the real call returned (or threw with its reply "lost"). */
function afterFirst(name: 'enqueueMany' | 'start', after: (args: unknown[]) => Promise<void>, throwAfter: boolean): () => number {
  const store = t.node.store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const real = store[name]!.bind(store);
  let calls = 0;
  store[name] = async (...args: unknown[]) => {
    const r = await real(...args);
    if (calls++ === 0) {
      await after(args);
      if (throwAfter) throw new Error('Connection is closed.'); // committed, then the reply went missing
    }
    return r;
  };
  return () => calls;
}

/** A second slot, of another app worker, that must be offered the task as attempt 1 (returned unconsumed). */
it('hands to another slot an RPC held behind the ack of a result whose completion met a Redis error', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  const s = openSlot(t.worker, registerFrame({ accepts_task_after_ack: true }));
  await s.nextOf('registered');
  await t.matching.enqueueStep({ step: step('rpc-held') });
  const t1 = (await s.nextOf('step_task')).step_task!;
  // Waits for the busy slot.
  const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 5000 })
    .then((r) => ({ output: Buffer.from(r.output ?? []).toString() }), (e: Error) => ({ error: e.message }));
  await waitFor(() => t.node.gateway.rpcsWaiting === 1, { timeoutMs: 3000, description: 'the call waits' });
  const store = t.node.store as unknown as { complete: (...a: unknown[]) => Promise<unknown> };
  const real = store.complete.bind(store);
  let calls = 0;
  store.complete = async (...args: unknown[]) => {
    if (calls++ > 0) return real(...args);
    await new Promise((res) => setTimeout(res, 300)); // the call is handed to the freed slot meanwhile, behind the ack
    throw new Error('Command timed out');
  };
  s.send({ step_result: { task_token: t1.task_token, output: Buffer.from('done') } });
  await expect(s.nextOf('rpc_task', 3000)).rejects.toThrow();
  // The worker never saw the call: it runs on the next slot instead of failing its caller.
  const other = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await other.nextOf('registered');
  const rpc = (await other.nextOf('rpc_task', 3000)).rpc_task!;
  other.send({ rpc_result: { task_token: rpc.task_token, output: Buffer.from('ran on w2') } });
  expect(await call).toEqual({ output: 'ran on w2' });
  other.reset();
});

async function takenUnconsumedBy(taskId: string): Promise<void> {
  const other = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await other.nextOf('registered');
  expect((await other.nextOf('step_task', 5000)).step_task).toMatchObject({ task_id: taskId, attempt: 1 });
  other.reset();
}

it('gives back a Step started at enqueue whose reply was lost and whose return met a Redis error', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  let id = '';
  afterFirst('enqueueMany', async (args) => {
    id = (args[0] as { taskId: string }[])[0]!.taskId;
  }, true);
  const releases = failOnce('release');
  // The script started it in the bound slot; the node heard an error, so the client did too.
  const err = await t.matching.enqueueStep({ step: step('e1') }).catch((e: Error) => e);
  expect(err).toBeInstanceOf(Error);
  // Its slot is free again, and the Step, returned once Redis answers, comes to it unconsumed.
  expect((await s.nextOf('step_task', 5000)).step_task).toMatchObject({ task_id: id, attempt: 1 });
  s.reset();
  expect(releases()).toBeGreaterThanOrEqual(2);
});

it('gives back a Step started at enqueue whose stream went away before the write, when the return met a Redis error', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  afterFirst('enqueueMany', async () => {
    s.reset();
    await s.ended;
    await new Promise((res) => setTimeout(res, 100)); // the node sees the stream end
  }, false);
  const releases = failOnce('release');
  const r = await t.matching.enqueueStep({ step: step('e2') });
  await takenUnconsumedBy(r.task_id!);
  expect(releases()).toBeGreaterThanOrEqual(2);
});

it('gives back an offered Step whose stream went away before the write, when the return met a Redis error', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'), { 'matching.syncMatchWait': '10ms' });
  const r = await t.matching.enqueueStep({ step: step('o1') }); // queued: the owner's offer starts it
  await new Promise((res) => setTimeout(res, 100));
  const s = openSlot(t.worker, registerFrame());
  afterFirst('start', async () => {
    s.reset();
    await s.ended;
    await new Promise((res) => setTimeout(res, 100));
  }, false);
  const releases = failOnce('release');
  await s.nextOf('registered').catch(() => undefined);
  await takenUnconsumedBy(r.task_id!);
  expect(releases()).toBeGreaterThanOrEqual(2);
});

it('times out an attempt whose first expiry met a Redis error, on the owner timer\'s next run', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const calls = failOnce('fail'); // the owner's expiry is the only caller of fail here
  const r = await t.matching.enqueueStep({ step: { ...step('ht'), heartbeat_timeout_ms: 300 } });
  await s.nextOf('step_task');
  const other = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await other.nextOf('registered');
  // Not the backlog count's re-arm (every 5 s): the failed timer runs again by itself.
  expect((await other.nextOf('step_task', 3000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 2 });
  expect(calls()).toBeGreaterThanOrEqual(2);
  other.reset();
  s.reset();
});

it('times out a queued Step past its flow deadline when the first timeout met a Redis error', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  const calls = failOnce('timeout'); // the owner's flow-deadline pass
  const r = await t.matching.enqueueStep({ step: { ...step('fd'), flow_type: 'nobody', flow_deadline_ms: Date.now() + 300 } });
  const outcome = (await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 3000 })).outcome;
  expect(outcome?.status).toBe(pb.OutcomeStatus.TIMED_OUT);
  expect(calls()).toBeGreaterThanOrEqual(2);
});

it('returns unconsumed the next Step held behind the ack of a result whose completion met a Redis error', async () => {
  t = await startTestNode(redis.url, uniquePrefix('blip'));
  // A worker that takes its next task right behind an ack (as the SDK's do): its slot is freed on the result.
  const s = openSlot(t.worker, registerFrame({ accepts_task_after_ack: true }));
  await s.nextOf('registered');
  const once = { ...step('held-1'), retry_policy: { max_attempts: 1 } };
  const r1 = await t.matching.enqueueStep({ step: once });
  const t1 = (await s.nextOf('step_task')).step_task!;
  const r2 = await t.matching.enqueueStep({ step: { ...once, flow_id: 'held-2' } }); // queued behind the busy slot
  await new Promise((res) => setTimeout(res, 200));
  const store = t.node.store as unknown as { complete: (...a: unknown[]) => Promise<unknown> };
  const real = store.complete.bind(store);
  let calls = 0;
  store.complete = async (...args: unknown[]) => {
    if (calls++ > 0) return real(...args);
    await new Promise((res) => setTimeout(res, 300)); // long enough for the next start to be held behind the ack
    throw new Error('Command timed out');
  };
  s.send({ step_result: { task_token: t1.task_token, output: Buffer.from('done') } });
  // The stream ends without the held task reaching the worker.
  await expect(s.nextOf('step_task', 3000)).rejects.toThrow();
  expect((await t.matching.waitOutcome({ task_id: r1.task_id, wait_ms: 5000 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
  // The next Step, which only ever had a single attempt to spend, was never run: it comes back as attempt 1.
  await takenUnconsumedBy(r2.task_id!);
});
