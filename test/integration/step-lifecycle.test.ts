/**
 * The single-node task lifecycle over real gRPC and a real redis-server:
 * delivery, results, the retry policy, non-consuming returns, cancellation,
 * delays and deadlines (DESIGN §4–§6, §8).
 */
import { Status } from 'nice-grpc';
import { pb, PROTOCOL_VERSION } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { type RawSlot } from '../helpers/raw-slot';
import { useSlotNode } from '../helpers/slot-node';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'life');

const slot = (over: Partial<pb.IRegister> = {}) => env.slot(over);

function step(over: Partial<pb.IStepSpec> = {}): pb.IStepSpec {
  return { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in'), ...over };
}

async function registered(s: RawSlot) {
  const f = await s.nextOf('registered');
  expect(f.registered!.server_protocol_version).toBe(PROTOCOL_VERSION);
  expect(f.registered!.max_concurrent_tasks_cap).toBe(256);
  return f;
}

it('delivers a Step, records its output as the one COMPLETED outcome, and keeps the id idempotent', async () => {
  const s = slot();
  await registered(s);
  const r = await env.t.matching.enqueueStep({ step: step() });
  expect(r.created).toBe(true);
  const again = await env.t.matching.enqueueStep({ step: step({ input: Buffer.from('other') }) });
  expect(again).toMatchObject({ task_id: r.task_id, created: false });

  const task = (await s.nextOf('step_task')).step_task!;
  expect(task).toMatchObject({ task_id: r.task_id, attempt: 1, flow_id: 'f1', step_type: 'charge' });
  expect(Buffer.from(task.input!).toString()).toBe('in');
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('out') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);

  const o = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1, app_worker_id: 'w1', idempotency_key: r.task_id });
  expect(Buffer.from(o.output!).toString()).toBe('out');
  // Every field of the outcome, from the done record (WaitOutcome) and from the stream entry (ConsumeOutcomes).
  const [streamed] = (await env.t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10 })).outcomes;
  for (const x of [o, streamed!]) {
    expect(x).toMatchObject({
      task_id: r.task_id, tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1',
      status: pb.OutcomeStatus.COMPLETED, attempt: 1, app_worker_id: 'w1', idempotency_key: r.task_id,
    });
    expect(Number(x.enqueued_at_ms)).toBeGreaterThan(0);
    expect(Number(x.finished_at_ms)).toBeGreaterThanOrEqual(Number(x.enqueued_at_ms));
    expect(x.error ?? null).toBeNull();
  }
  expect(streamed!.outcome_id).toBe(o.outcome_id);
  // GetTask of a finished task answers its outcome as WaitOutcome does.
  const done = (await env.t.matching.getTask({ task_id: r.task_id })).task!;
  expect(done).toMatchObject({
    state: pb.TaskState.DONE, tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1',
    attempt: 1, app_worker_id: 'w1', enqueued_at_ms: o.enqueued_at_ms,
  });
  expect(done.outcome).toMatchObject({ outcome_id: o.outcome_id, status: pb.OutcomeStatus.COMPLETED, idempotency_key: r.task_id });
  expect(Buffer.from(done.outcome!.output!).toString()).toBe('out');
  // Within outcomes.retention the same Step is not enqueued again.
  expect((await env.t.matching.enqueueStep({ step: step() })).created).toBe(false);
  expect((await env.t.matching.enqueueStep({ step: step({ step_execution_id: 's2' }) })).created).toBe(true);
});

it('keeps a repeated enqueue with another flow or step type from reaching that type\'s workers', async () => {
  // Queued with no worker of its flow type: the repeat's notice must name the queue the task is in.
  const r = await env.t.matching.enqueueStep({ step: step() });
  const billing = slot({ app_worker_id: 'billing', flow_types: ['billing'] });
  await registered(billing);
  for (let i = 0; i < 5; i++) {
    const again = await env.t.matching.enqueueStep({ step: step({ flow_type: 'billing', step_type: `x${i}` }) });
    expect(again).toMatchObject({ task_id: r.task_id, created: false });
  }
  await expect(billing.nextOf('step_task', 600)).rejects.toThrow(/no frame/);
  // The owner made no queue for the repeats' names either.
  expect([...env.t.node.owner.get(r.partition!)!.queues.keys()]).toEqual(['acme:order:charge']);
  // A worker of the Step's own type gets it, as first enqueued.
  const order = slot();
  await registered(order);
  expect((await order.nextOf('step_task')).step_task).toMatchObject({ task_id: r.task_id, flow_type: 'order', step_type: 'charge' });
});

it('does not start a Step whose flow deadline passed before its enqueue, even in an idle slot', async () => {
  const s = slot();
  await registered(s);
  const r = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'late', flow_deadline_ms: Date.now() - 10_000 }) });
  expect(r.created).toBe(true);
  const o = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.TIMED_OUT);
  await expect(s.nextOf('step_task', 300)).rejects.toThrow(/no frame/);
});

it('runs the retry policy: attempt+1 after backoff, then a terminal FAILED outcome after maxAttempts', async () => {
  const s = slot();
  await registered(s);
  const r = await env.t.matching.enqueueStep({ step: step({ retry_policy: { max_attempts: 2, initial_interval_ms: 300 } }) });
  const first = (await s.nextOf('step_task')).step_task!;
  const failedAt = Date.now();
  s.send({ step_result: { task_token: first.task_token, failure: { message: 'boom', type: 'Oops' } } });
  const ack = (await s.nextOf('result_ack')).result_ack!;
  expect(ack).toMatchObject({ verdict: pb.ResultVerdict.ACCEPTED, retry_scheduled: true });
  const queued = (await env.t.matching.getTask({ task_id: r.task_id })).task!;
  expect(queued).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 2 });
  expect(queued.last_error!.message).toBe('boom');

  const second = (await s.nextOf('step_task', 3000)).step_task!;
  expect(second.attempt).toBe(2);
  expect(Date.now() - failedAt).toBeGreaterThanOrEqual(250);
  expect(Buffer.from(second.input!).toString()).toBe('in');
  s.send({ step_result: { task_token: second.task_token, failure: { message: 'boom again', type: 'Oops' } } });
  expect((await s.nextOf('result_ack')).result_ack!.retry_scheduled).toBe(false);
  const o = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 2 });
  expect(o.error).toMatchObject({ message: 'boom again', type: 'Oops' });
});

it('keeps the last failure in GetTask when it has a type and no message', async () => {
  const s = slot();
  await registered(s);
  const r = await env.t.matching.enqueueStep({ step: step({ retry_policy: { max_attempts: 2, initial_interval_ms: 60_000 } }) });
  const task = (await s.nextOf('step_task')).step_task!;
  // An SDK handler that throws `new ValidationError()` sends its name as the type and no message.
  s.send({ step_result: { task_token: task.task_token, failure: { message: '', type: 'ValidationError' } } });
  expect((await s.nextOf('result_ack')).result_ack!.retry_scheduled).toBe(true);
  const queued = (await env.t.matching.getTask({ task_id: r.task_id })).task!;
  expect(queued).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 2 });
  expect(queued.last_error).toMatchObject({ message: '', type: 'ValidationError' });
});

it('ends a non-retryable failure at once, by flag or by the policy list of types', async () => {
  const s = slot();
  await registered(s);
  const a = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'nr-flag', retry_policy: { max_attempts: 5 } }) });
  let task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, failure: { message: 'bad', non_retryable: true } } });
  await s.nextOf('result_ack');
  expect((await env.t.matching.waitOutcome({ task_id: a.task_id, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });

  const b = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'nr-type', retry_policy: { max_attempts: 5, non_retryable: ['Fatal'] } }) });
  task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, failure: { message: 'fatal', type: 'Fatal' } } });
  await s.nextOf('result_ack');
  expect((await env.t.matching.waitOutcome({ task_id: b.task_id, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });
});

it('returns a declined task unconsumed (same attempt, same input) and offers it to another worker', async () => {
  const w1 = slot({ app_worker_id: 'lacks' });
  await registered(w1);
  const r = await env.t.matching.enqueueStep({ step: step() });
  const offered = (await w1.nextOf('step_task')).step_task!;
  const w2 = slot({ app_worker_id: 'has' });
  await registered(w2);
  w1.send({ decline: { task_token: offered.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  const taken = (await w2.nextOf('step_task')).step_task!;
  expect(taken).toMatchObject({ task_id: r.task_id, attempt: 1 });
  expect(Buffer.from(taken.input!).toString()).toBe('in');
  // The declining worker is not offered that type again while it stays connected.
  await env.t.matching.enqueueStep({ step: step({ step_execution_id: 's2' }) });
  await expect(w1.nextOf('step_task', 500)).rejects.toThrow(/no frame/);
});

it('fails the attempt when the stream resets mid-task, and returns it unconsumed on a half-close', async () => {
  const lost = slot({ app_worker_id: 'lost' });
  await registered(lost);
  const r = await env.t.matching.enqueueStep({ step: step() });
  expect((await lost.nextOf('step_task')).step_task!.attempt).toBe(1);
  lost.reset();
  const next = slot({ app_worker_id: 'next' });
  await registered(next);
  const retried = (await next.nextOf('step_task', 4000)).step_task!;
  expect(retried).toMatchObject({ task_id: r.task_id, attempt: 2 });

  // half-close while holding attempt 2: it comes back as attempt 2
  next.halfClose();
  const third = slot({ app_worker_id: 'third' });
  await registered(third);
  expect((await third.nextOf('step_task', 4000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 2 });
});

it('cancels a flow: queued Steps end at once, running ones get Cancel and their late result is refused', async () => {
  const s = slot();
  await registered(s);
  const running = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'run' }) });
  const task = (await s.nextOf('step_task')).step_task!;
  const queued = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'wait', step_type: 'other' }) });
  const c = await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1', reason: 'user asked' });
  expect(c).toMatchObject({ cancelled_queued: 1, cancelled_running: 1 });
  expect((await s.nextOf('cancel')).cancel!.task_token).toBe(task.task_token);
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('late') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.REFUSED_CANCELLED);
  for (const id of [running.task_id, queued.task_id]) {
    const o = (await env.t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!;
    expect(o.status).toBe(pb.OutcomeStatus.CANCELLED);
    expect(Buffer.from(o.output!).length).toBe(0);
  }
  // A cancel that matched nothing reports zero, not success.
  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1' })).toMatchObject({ cancelled_queued: 0, cancelled_running: 0 });
});

it('wakes a WaitOutcome on a queued Step its flow\'s cancel ended, at once', async () => {
  const r = await env.t.matching.enqueueStep({ step: step({ flow_type: 'nobody' }) });
  const waiting = env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 });
  // The waiter counts once its first look found nothing and it waits: its periodic look is
  // then a second away. Cancelling at once leaves that second to tell the notice from it.
  const bell = env.t.node['bell'];
  await waitFor(() => bell.waiting === 1, { intervalMs: 2, description: 'the waiter waits' });
  const cancelledAt = Date.now();
  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1' })).toMatchObject({ cancelled_queued: 1 });
  expect((await waiting).outcome!.status).toBe(pb.OutcomeStatus.CANCELLED);
  // Woken by the cancel's notice (a few ms), not by the periodic look (a second after the
  // waiter began to wait, just before cancelledAt): halfway, so a stall of this process
  // of up to half a second neither fails it nor lets the periodic look pass.
  expect(Date.now() - cancelledAt).toBeLessThan(500);
});

it('wakes a WaitOutcome on a running Step its flow\'s cancel ended, at once', async () => {
  // The running Step's outcome is written by the cancel, as a queued one's: its waiter
  // must hear of it from the cancel, not from its periodic look a second later.
  const s = slot();
  await registered(s);
  const r = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'run' }) });
  await s.nextOf('step_task');
  const waiting = env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 });
  const bell = env.t.node['bell'];
  await waitFor(() => bell.waiting === 1, { intervalMs: 2, description: 'the waiter waits' });
  const cancelledAt = Date.now();
  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1' })).toMatchObject({ cancelled_running: 1 });
  expect((await waiting).outcome!.status).toBe(pb.OutcomeStatus.CANCELLED);
  // Halfway to the periodic look, as above.
  expect(Date.now() - cancelledAt).toBeLessThan(500);
});

it('names a cancel without a reason "flow cancelled", to the running slot and in the outcomes', async () => {
  const s = slot();
  await registered(s);
  const running = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'run' }) });
  const task = (await s.nextOf('step_task')).step_task!;
  const queued = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'wait', step_type: 'other' }) });
  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1' })).toMatchObject({ cancelled_queued: 1, cancelled_running: 1 });
  expect((await s.nextOf('cancel')).cancel).toMatchObject({ task_token: task.task_token, reason: 'flow cancelled' });
  for (const id of [running.task_id, queued.task_id]) {
    const o = (await env.t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!;
    expect(o.status).toBe(pb.OutcomeStatus.CANCELLED);
    expect(o.error?.message).toBe('flow cancelled');
  }
});

it('holds a delayed Step until its readyAt and times a queued Step out at its flow deadline', async () => {
  const s = slot();
  await registered(s);
  const readyAt = Date.now() + 600;
  const delayed = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'later', ready_at_ms: readyAt }) });
  const task = (await s.nextOf('step_task', 3000)).step_task!;
  expect(task.task_id).toBe(delayed.task_id);
  expect(Date.now()).toBeGreaterThanOrEqual(readyAt - 5);

  const orphan = await env.t.matching.enqueueStep({
    step: step({ flow_id: 'f2', flow_type: 'nobody', step_execution_id: 'x', flow_deadline_ms: Date.now() + 400 }),
  });
  const o = (await env.t.matching.waitOutcome({ task_id: orphan.task_id, wait_ms: 3000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.TIMED_OUT);
  expect(o.attempt).toBe(1);
});

it('times out at its flow deadline a Step that started at its enqueue, failed, and waits for its retry', async () => {
  const s = slot();
  await registered(s);
  // The slot is idle: the Step starts inside its enqueue (placement never sees it).
  const deadline = Date.now() + 900;
  const r = await env.t.matching.enqueueStep({ step: step({ flow_id: 'fd', step_execution_id: 'x', flow_deadline_ms: deadline }) });
  const task = (await s.nextOf('step_task')).step_task!;
  expect(Number(task.started_at_ms)).toBe(Number(task.enqueued_at_ms));
  s.send({ step_result: { task_token: task.task_token, failure: { message: 'try later', type: 'busy', retry_after_ms: 300 } } });
  expect((await s.nextOf('result_ack')).result_ack!.retry_scheduled).toBe(true);
  s.reset(); // no worker left: the retry waits in its queue
  const o = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 3000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.TIMED_OUT);
  expect(Date.now()).toBeGreaterThanOrEqual(deadline - 5);
});

it('delivers outcomes to a consumer group at least once: unacked ones come back, acked ones do not', async () => {
  const s = slot();
  await registered(s);
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await env.t.matching.enqueueStep({ step: step({ step_execution_id: `o${i}` }) })).task_id);
  for (let i = 0; i < 3; i++) {
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
  }
  const got = await env.t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 2000 });
  expect(got.outcomes.map((o) => o.task_id).sort()).toEqual([...ids].sort());
  const [acked, ...rest] = got.outcomes;
  expect((await env.t.matching.ackOutcomes({ group: 'engine', outcome_ids: [acked!.outcome_id!] })).acked).toBe(1);
  // Acking again matches nothing and says so.
  expect((await env.t.matching.ackOutcomes({ group: 'engine', outcome_ids: [acked!.outcome_id!] })).acked).toBe(0);
  await new Promise((r) => setTimeout(r, 300));
  const again = await env.t.matching.consumeOutcomes({ group: 'engine', consumer: 'c2', max_count: 10, wait_ms: 2000, redeliver_after_ms: 200 });
  expect(again.outcomes.map((o) => o.task_id).sort()).toEqual(rest.map((o) => o.task_id).sort());
});

it('leaves an outcome delivered to one consumer to it until redeliver_after_ms has passed', async () => {
  const s = slot();
  await registered(s);
  const r = await env.t.matching.enqueueStep({ step: step({ step_execution_id: 'held' }) });
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  const first = await env.t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 2000 });
  expect(first.outcomes.map((o) => o.task_id)).toEqual([r.task_id]);
  // Another consumer asks at once: c1 is still working on it.
  const other = await env.t.matching.consumeOutcomes({ group: 'engine', consumer: 'c2', max_count: 10, wait_ms: 300, redeliver_after_ms: 5000 });
  expect(other.outcomes).toEqual([]);
});

it('describes a queue: ready, delayed, oldest ready and running Steps', async () => {
  const s = slot();
  await registered(s);
  const running = await env.t.matching.enqueueStep({ step: step({ flow_id: 'd1', step_execution_id: 'run' }) });
  expect((await s.nextOf('step_task')).step_task!.task_id).toBe(running.task_id);
  const before = Date.now();
  await env.t.matching.enqueueStep({ step: step({ flow_id: 'd2', step_execution_id: 'wait' }) });
  await env.t.matching.enqueueStep({ step: step({ flow_id: 'd3', step_execution_id: 'later', ready_at_ms: Date.now() + 60_000 }) });
  await new Promise((r) => setTimeout(r, 300)); // past the sync-match wait: queued
  const [q] = (await env.t.matching.describeQueues({ tenant: 'acme', flow_type: 'order' })).queues;
  expect(q).toMatchObject({ flow_type: 'order', step_type: 'charge', ready: 1, delayed: 1, running: 1 });
  expect(Number(q!.oldest_ready_at_ms)).toBeGreaterThanOrEqual(before - 5);
  expect((await env.t.matching.describeQueues({ tenant: 'other' })).queues).toEqual([]);
});

it('rejects registrations that break the protocol or the limits with the documented codes', async () => {
  const old = slot({ protocol_version: 99 });
  const err = (await old.ended) as Error & { code?: Status };
  expect(err.code).toBe(Status.FAILED_PRECONDITION);
  expect(err.message).toContain('99');
  expect(err.message).toContain(String(PROTOCOL_VERSION));

  const badName = slot({ tenant: 'no spaces' });
  expect(((await badName.ended) as Error & { code?: Status }).code).toBe(Status.INVALID_ARGUMENT);
  const tooMany = slot({ flow_types: Array.from({ length: 257 }, (_, i) => `f${i}`) });
  const e2 = (await tooMany.ended) as Error & { code?: Status };
  expect(e2.code).toBe(Status.INVALID_ARGUMENT);
  expect(e2.message).toContain('matching.maxFlowTypes');
});

describe('with matching.maxConcurrentTasksCap 2', () => {
  const capped = useSlotNode(redis, 'cap', { 'matching.maxConcurrentTasksCap': 2 });

  it('refuses more streams per app worker id than matching.maxConcurrentTasksCap', async () => {
    const a = capped.slot();
    const b = capped.slot();
    expect((await a.nextOf('registered')).registered!.max_concurrent_tasks_cap).toBe(2);
    await b.nextOf('registered');
    const c = capped.slot();
    // Refused, the stream's first answer is its error; let in past the bound, it would be `registered`.
    const err = (await c.next(5000).then((f) => (c.reset(), new Error(`let in: ${String(f.frame)}`)), (e: unknown) => e)) as Error & { code?: Status };
    expect(err.code).toBe(Status.RESOURCE_EXHAUSTED);
    expect(err.message).toContain('matching.maxConcurrentTasksCap');
  });
});
