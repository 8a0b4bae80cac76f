/**
 * Matching phases on one node (DESIGN §4): sticky first, then sync-match,
 * then the durable queue; unsupported types; and RPC dispatch. Raw streams,
 * real gRPC, real redis-server.
 */
import { ClientError, Status } from 'nice-grpc';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import type { Clock } from '../../src/util/clock';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
let prefix: string;
const open: RawSlot[] = [];
const STICKY_WAIT = 800;
const DISPATCH_WAIT = 1000;

async function start(over: Record<string, unknown> = {}, clock?: Clock) {
  prefix = uniquePrefix('disp');
  t = await startTestNode(redis.url, prefix, {
    'matching.stickyWait': `${STICKY_WAIT}ms`, 'matching.syncMatchWait': '200ms', 'matching.dispatchWait': `${DISPATCH_WAIT}ms`, ...over,
  }, { clock });
}
beforeEach(() => start());
afterEach(async () => {
  for (const s of open.splice(0)) s.reset();
  await t.close();
});

async function slot(app: string, over: Partial<pb.IRegister> = {}): Promise<RawSlot> {
  const s = openSlot(t.worker, registerFrame({ app_worker_id: app, ...over }));
  open.push(s);
  await s.nextOf('registered');
  return s;
}

async function enqueue(over: Partial<pb.IStepSpec> = {}): Promise<string> {
  const spec = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', ...over };
  return (await t.matching.enqueueStep({ step: spec })).task_id!;
}

async function take(s: RawSlot, timeoutMs = 3000): Promise<pb.IStepTask> {
  return (await s.nextOf('step_task', timeoutMs)).step_task!;
}

/** The one of `slots` that receives the next frame of `kind`, and that frame. */
async function frameFrom(slots: RawSlot[], kind: string): Promise<[RawSlot, pb.ServerFrame]> {
  for (let round = 0; round < 20; round++) {
    for (const s of slots) {
      const f = await s.nextOf(kind, 100).catch(() => undefined);
      if (f) return [s, f];
    }
  }
  throw new Error(`no slot received a ${kind}`);
}

async function takeFrom(slots: RawSlot[]): Promise<[RawSlot, pb.IStepTask]> {
  const [s, f] = await frameFrom(slots, 'step_task');
  return [s, f.step_task!];
}

async function complete(s: RawSlot, task: pb.IStepTask): Promise<void> {
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
}

async function nothing(s: RawSlot, ms: number, kind = 'step_task'): Promise<void> {
  await expect(s.nextOf(kind, ms)).rejects.toThrow(/no frame/);
}

async function queuedInMemory(): Promise<number> {
  const m = await t.node.metrics.registry.getSingleMetric('dexzd_matching_queued_tasks')!.get();
  return Number(m.values[0]?.value ?? 0);
}

/** Makes `appWorkerId` the remembered sticky worker of a flow, as a completed Step would. */
async function rememberSticky(flowId: string, appWorkerId: string): Promise<void> {
  const p = partitionOf('acme', flowId, t.config.cluster.partitions);
  await redis.command('SET', t.node.keys.sticky(p, 'acme', flowId), appWorkerId);
}

/** Makes A the remembered sticky worker of flow f1, then leaves its one slot busy with another flow's Step. */
async function stickyAndBusy(a: RawSlot): Promise<pb.IStepTask> {
  await enqueue({ step_execution_id: 'first' });
  await complete(a, await take(a));
  await enqueue({ flow_id: 'other', step_execution_id: 'long' });
  return take(a);
}

describe('sticky phase', () => {
  it('waits for the busy sticky worker instead of giving the Step to an idle one', async () => {
    const a = await slot('A');
    const long = await stickyAndBusy(a);
    const b = await slot('B');
    const id = await enqueue({ step_execution_id: 'second' });
    await nothing(b, 300);
    expect(await queuedInMemory()).toBe(1);
    await complete(a, long);
    expect((await take(a)).task_id).toBe(id);
    expect(await queuedInMemory()).toBe(0);
  });

  it('gives up on the sticky worker after matching.stickyWait', async () => {
    const a = await slot('A');
    await stickyAndBusy(a);
    const b = await slot('B');
    const since = Date.now();
    const id = await enqueue({ step_execution_id: 'second' });
    expect((await take(b)).task_id).toBe(id);
    expect(Date.now() - since).toBeGreaterThanOrEqual(STICKY_WAIT - 50);
  });

  it('stops waiting for the busy sticky worker at once when its last stream goes, mid-wait', async () => {
    const a = await slot('A');
    await stickyAndBusy(a);
    const b = await slot('B');
    const id = await enqueue({ step_execution_id: 'second' });
    await nothing(b, 200); // waiting for A
    const since = Date.now();
    a.reset(); // A crashes: no stream of it is left
    await a.ended;
    expect((await take(b)).task_id).toBe(id);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
  });

  it('skips the sticky phase at once when the sticky worker has no connected stream', async () => {
    const a = await slot('A');
    await enqueue({ step_execution_id: 'first' });
    await complete(a, await take(a));
    a.halfClose();
    await a.ended;
    const b = await slot('B');
    const since = Date.now();
    const id = await enqueue({ step_execution_id: 'second' });
    expect((await take(b)).task_id).toBe(id);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
  });

  it('skips the sticky phase at once while the sticky worker drains: a graceful restart costs no sticky wait', async () => {
    const a1 = await slot('A');
    const a2 = await slot('A');
    await enqueue({ step_execution_id: 'first' });
    const [s1, first] = await takeFrom([a1, a2]);
    await complete(s1, first);
    await enqueue({ flow_id: 'other', step_execution_id: 'long' });
    const [holder] = await takeFrom([a1, a2]);
    // A stops: its idle stream half-closes at once while the busy one finishes.
    (holder === a1 ? a2 : a1).halfClose();
    await (holder === a1 ? a2 : a1).ended;
    const b = await slot('B');
    const since = Date.now();
    const id = await enqueue({ step_execution_id: 'second' });
    expect((await take(b)).task_id).toBe(id);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
  });

  it('stops waiting for the busy sticky worker at once when it starts draining, mid-wait', async () => {
    // DESIGN §4: a draining sticky worker holds no Step in the sticky phase, however long it has waited.
    const a = await slot('A');
    await stickyAndBusy(a); // A's Step slot busy for the rest of the test
    const aRpc = await slot('A', { slot_kind: pb.SlotKind.RPC_ONLY }); // idle, and never takes a Step
    const b = await slot('B');
    const id = await enqueue({ step_execution_id: 'second' });
    await nothing(b, 200); // waiting for A
    expect(await queuedInMemory()).toBe(1);
    const since = Date.now();
    aRpc.halfClose(); // A stops: its idle stream half-closes, the busy one finishes its task
    await aRpc.ended;
    expect((await take(b)).task_id).toBe(id);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
  });

  it('forgets a stopping worker as the sticky worker of the flows it completes: back and busy, it holds none of their Steps', async () => {
    const a1 = await slot('A');
    const a2 = await slot('A');
    await enqueue({ step_execution_id: 'first' });
    const [s1, first] = await takeFrom([a1, a2]);
    await complete(s1, first);
    await enqueue({ step_execution_id: 'second' });
    const [holder, second] = await takeFrom([a1, a2]);
    // A stops: its idle stream half-closes, and the busy one completes the flow's Step.
    const idle = holder === a1 ? a2 : a1;
    idle.halfClose();
    await idle.ended;
    await complete(holder, second);
    const p = partitionOf('acme', 'f1', t.config.cluster.partitions);
    expect(await redis.command('GET', t.node.keys.sticky(p, 'acme', 'f1'))).toBeNull();
    holder.halfClose();
    await holder.ended;
    // A is back, busy with another flow's Step; B is idle.
    const a3 = await slot('A');
    await enqueue({ flow_id: 'other', step_execution_id: 'long' });
    await take(a3);
    const b = await slot('B');
    const since = Date.now();
    const id = await enqueue({ step_execution_id: 'third' });
    expect((await take(b)).task_id).toBe(id);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
  });

  it('skips the sticky worker at once for a type it declined', async () => {
    const a = await slot('A');
    await enqueue({ step_execution_id: 'first' });
    await complete(a, await take(a)); // A is the sticky worker of f1
    await enqueue({ flow_id: 'g', step_type: 'refund', step_execution_id: 'r0' });
    const r0 = await take(a);
    a.send({ decline: { task_token: r0.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    await enqueue({ flow_id: 'other', step_execution_id: 'long' });
    await take(a); // A is busy now
    const b = await slot('B');
    await complete(b, await take(b)); // B ran r0
    const since = Date.now();
    const id = await enqueue({ step_type: 'refund', step_execution_id: 'r1' });
    expect((await take(b)).task_id).toBe(id);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
  });

  it('moves its waiting sticky Steps of a type on once the sticky worker declines it, and serves the others at once', async () => {
    const a = await slot('A');
    await rememberSticky('f1', 'A');
    await enqueue({ flow_id: 'other', step_type: 'exotic', step_execution_id: 'long' });
    const long = await take(a); // A is busy, with a type it lacks
    await enqueue({ step_type: 'exotic', step_execution_id: 'x' }); // both wait for A in its sticky phase
    const y = await enqueue({ step_execution_id: 'y' });
    expect(await queuedInMemory()).toBe(2);
    const since = Date.now();
    a.send({ decline: { task_token: long.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    // A is idle and has declined "exotic": x leaves A's line, and y, behind it, goes to A now.
    expect((await take(a, STICKY_WAIT / 2)).task_id).toBe(y);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
  });

  it('moves its waiting sticky Steps of a type on once the sticky worker declines it, though a waiting RPC takes the slot that declined', async () => {
    const a = await slot('A');
    const b = await slot('B');
    await enqueue({ flow_id: 'other', step_type: 'exotic', step_execution_id: 'long', sticky_worker_id: 'A' });
    const long = await take(a); // A is busy, with a type it lacks
    // An RPC waits for A as its sticky worker (B is idle): A's slot goes to it once free.
    const call = t.matching.invokeRpc({
      tenant: 'acme', flow_id: 'r', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), sticky_worker_id: 'A', timeout_ms: 5000,
    });
    const x = await enqueue({ step_type: 'exotic', step_execution_id: 'x', sticky_worker_id: 'A' }); // waits for A in its sticky phase
    await waitFor(async () => (await queuedInMemory()) === 2, { timeoutMs: STICKY_WAIT / 2, description: 'the RPC and x waiting for A' });
    const since = Date.now();
    a.send({ decline: { task_token: long.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    const rpcTask = (await a.nextOf('rpc_task')).rpc_task!;
    // A lacks "exotic": x goes to B now, not once matching.stickyWait has passed (the declined
    // Step goes back to its queue too, and may reach B first).
    let task = await take(b, STICKY_WAIT / 2);
    if (task.task_id !== x) {
      await complete(b, task);
      task = await take(b, STICKY_WAIT / 2);
    }
    expect(task.task_id).toBe(x);
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
    a.send({ rpc_result: { task_token: rpcTask.task_token, output: Buffer.from('ok') } });
    expect(Buffer.from((await call).output!).toString()).toBe('ok');
  });

  it('prefers the sticky worker named in the request', async () => {
    const a = await slot('A');
    const b = await slot('B');
    const id = await enqueue({ step_execution_id: 'named', sticky_worker_id: 'B' });
    expect((await take(b)).task_id).toBe(id);
    await nothing(a, 200);
  });

  it('prefers the sticky worker named in the request over the one the flow remembers', async () => {
    // Guards the order of DESIGN §4 phase 1: the request field first, the remembered one only without it.
    const y = await slot('Y'); // connected first: a placement that ignored both would likely pick Y too
    const x = await slot('X');
    await rememberSticky('f1', 'Y');
    const id = await enqueue({ step_execution_id: 'named', sticky_worker_id: 'X' });
    expect((await take(x)).task_id).toBe(id);
    await nothing(y, 300);
  });

  describe('for a Step that becomes ready later (a delayed enqueue, a retry)', () => {
    it('offers a delayed Step to the sticky worker its request names, over an idle other', async () => {
      const a = await slot('A');
      const b = await slot('B');
      const id = await enqueue({ flow_id: 'd1', sticky_worker_id: 'B', ready_at_ms: Date.now() + 300 });
      await nothing(a, 600);
      expect((await take(b)).task_id).toBe(id);
    });

    it('waits for the busy remembered sticky worker of a delayed Step, not the idle other', async () => {
      const a = await slot('A');
      const long = await stickyAndBusy(a); // A: f1's sticky worker, busy
      const b = await slot('B');
      const id = await enqueue({ step_execution_id: 'later', ready_at_ms: Date.now() + 200 });
      await nothing(b, 200 + STICKY_WAIT / 2);
      await complete(a, long);
      expect((await take(a)).task_id).toBe(id);
    });

    it('offers a retry to the sticky worker first, over an idle other', async () => {
      const a = await slot('A');
      const b = await slot('B');
      const id = await enqueue({ flow_id: 'r1', sticky_worker_id: 'B', retry_policy: { max_attempts: 3, initial_interval_ms: 200 } });
      const first = await take(b);
      expect(first).toMatchObject({ task_id: id, attempt: 1 });
      b.send({ step_result: { task_token: first.task_token, failure: { message: 'try again', type: 'Flaky' } } });
      await b.nextOf('result_ack');
      await nothing(a, 600);
      expect(await take(b)).toMatchObject({ task_id: id, attempt: 2 });
    });
  });
});

/**
 * The node's own task script calls, by script (its Redis latency histogram): Redis's
 * commandstats also counts the lease renewals and queue prunes that fall in between.
 */
async function taskScriptCalls(): Promise<{ enqueues: number; starts: number; completions: number }> {
  const m = await t.node.metrics.registry.getSingleMetric('dexzd_redis_command_seconds')!.get();
  const n = (command: string) => m.values.find((v) => (v as { metricName?: string }).metricName === 'dexzd_redis_command_seconds_count'
    && v.labels.command === command)?.value ?? 0;
  return { enqueues: n('enqueueTask') + n('enqueueTasks'), starts: n('startTasks'), completions: n('completeTasks') };
}

describe('sync-match and the durable queue', () => {
  it('runs a Step that waited in the durable queue on three script calls: enqueue, start, complete', async () => {
    // DESIGN §2: three script calls per task on the happy path.
    const w = await slot('W');
    await enqueue({ flow_id: 'warm' });
    await complete(w, await take(w)); // the scripts are loaded: no NOSCRIPT retries below
    await enqueue({ flow_id: 'busy', step_execution_id: 'b' });
    const busy = await take(w);
    const before = await taskScriptCalls();
    const id = await enqueue({ flow_id: 'waits' });
    await sleep(300); // past syncMatchWait: it waits in the durable queue
    await complete(w, busy);
    const task = await take(w);
    expect(task).toMatchObject({ task_id: id, attempt: 1 });
    await complete(w, task);
    await sleep(100); // a second offer of the same head would have run its start by now
    expect(await taskScriptCalls()).toEqual({ enqueues: before.enqueues + 1, starts: before.starts + 1, completions: before.completions + 2 });
  });

  it('starts a Step in an idle slot within its enqueue script: one script call, no start round trip', async () => {
    const w = await slot('W');
    await enqueue({ flow_id: 'warm' });
    await complete(w, await take(w)); // the scripts are loaded: no NOSCRIPT retries below
    const calls = taskScriptCalls;
    const before = await calls();
    const id = await enqueue({ flow_id: 'fast' });
    const task = await take(w);
    expect(task.task_id).toBe(id);
    expect(task.attempt).toBe(1);
    expect(Number(task.started_at_ms)).toBe(Number(task.enqueued_at_ms));
    expect(await calls()).toEqual({ ...before, enqueues: before.enqueues + 1 });
    const state = await redis.command('HGET', `${prefix}:{${id.split('-')[0]}}:t:${id}`, 'state');
    expect(String(state)).toBe('running');
    await complete(w, task);
    expect(await calls()).toEqual({ ...before, enqueues: before.enqueues + 1, completions: before.completions + 1 });
  });

  /** Two Steps become backlog while the one slot is busy; a third, enqueued after, must start last. */
  async function startOrderBehindBacklog(flows: [string, string, string]): Promise<void> {
    const w = await slot('W');
    expect(await take(w, 100).catch(() => undefined)).toBeUndefined();
    await enqueue({ flow_id: 'busy', step_execution_id: 'b' });
    const busy = await take(w);
    const q1 = await enqueue({ flow_id: flows[0] });
    const q2 = await enqueue({ flow_id: flows[1] });
    await new Promise((r) => setTimeout(r, 300)); // past syncMatchWait: q1 and q2 are backlog now
    const late = await enqueue({ flow_id: flows[2] });
    expect(await queuedInMemory()).toBe(0); // not waiting in sync-match ahead of the backlog
    await complete(w, busy);
    const order = [];
    for (let i = 0; i < 3; i++) {
      const task = await take(w);
      order.push(task.task_id);
      await complete(w, task);
    }
    expect(order).toEqual([q1, q2, late]);
  }

  it('puts a new Step behind a backlog that a connected worker can run', async () => {
    await startOrderBehindBacklog(['q1', 'q2', 'q3']);
  });

  it('puts a new Step behind the backlog of its queue in other partitions too', async () => {
    // A queue spreads over every partition: flows bk1 and bk4 land in partitions 7 and 1,
    // bk6 in partition 0, whose part of the queue is empty.
    await startOrderBehindBacklog(['bk1', 'bk4', 'bk6']);
  });

  it('serves a Step waiting in sync-match before the durable backlog of another Step type', async () => {
    const w = await slot('W');
    await enqueue({ flow_id: 'busy', step_execution_id: 'b' });
    const busy = await take(w);
    const fresh = await enqueue({ flow_id: 'fresh', step_type: 'ship' });
    expect(await queuedInMemory()).toBe(1);
    await complete(w, busy);
    expect((await take(w)).task_id).toBe(fresh);
  });

  it('keeps a Step type no connected worker supports queued without blocking other types', async () => {
    const a = await slot('A');
    const x = await enqueue({ flow_id: 'x', step_type: 'exotic' });
    const declined = await take(a);
    expect(declined.task_id).toBe(x);
    a.send({ decline: { task_token: declined.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    const y = await enqueue({ flow_id: 'y', step_type: 'charge' });
    expect((await take(a)).task_id).toBe(y);
    const info = (await t.matching.getTask({ task_id: x })).task!;
    expect(info).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
    // A worker that supports it arrives: the Step runs, still attempt 1.
    const b = await slot('B');
    expect(await take(b)).toMatchObject({ task_id: x, attempt: 1 });
  });

  it('offers the durable backlog of one Step type to a freed slot while an older head of a type its worker declined waits', async () => {
    const a = await slot('A');
    const x = await enqueue({ flow_id: 'x', step_type: 'exotic' });
    const declined = await take(a);
    expect(declined.task_id).toBe(x);
    a.send({ decline: { task_token: declined.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    await nothing(a, 100); // x is back in its queue: the oldest head of the flow type, which A lacks
    await enqueue({ flow_id: 'b', step_execution_id: 'b' });
    const busy = await take(a);
    const y = await enqueue({ flow_id: 'y' });
    await sleep(300); // past syncMatchWait: y waits in the durable queue, behind x
    await complete(a, busy);
    expect((await take(a, 2000)).task_id).toBe(y);
    expect((await t.matching.getTask({ task_id: x })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
  });

  it('takes a capacity decline (older SDKs) back unconsumed, counts it, and offers the Step again', async () => {
    const a = await slot('A');
    const x = await enqueue({ flow_id: 'x' });
    const first = await take(a);
    a.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
    // not remembered as a type the worker lacks: the same Step comes back, same attempt
    expect(await take(a)).toMatchObject({ task_id: x, attempt: 1 });
    const m = await t.node.metrics.registry.getSingleMetricAsString('dexzd_matching_returned_attempts_total');
    expect(/reason="legacy_no_capacity"} 1\b/.test(m)).toBe(true);
    expect(/reason="unknown_type"} [1-9]/.test(m)).toBe(false);
  });

  it('offers a slot that declined for capacity (older SDKs) nothing for a moment, rather than the same Step again at once', async () => {
    // An older SDK declines for as long as its handlers are all busy. Offered again the moment
    // it declined, one such slot took the Step back about 500 times a second, each a start and
    // a release script in Redis.
    const a = await slot('A', { protocol_version: 3 });
    const x = await enqueue({ flow_id: 'x' });
    let offers = 0;
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      const f = await a.nextOf('step_task', Math.max(1, until - Date.now())).catch(() => undefined);
      if (!f) break;
      offers++;
      a.send({ decline: { task_token: f.step_task!.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
    }
    expect(offers).toBeGreaterThanOrEqual(2); // it is offered again, once the pause is over
    expect(offers).toBeLessThan(30);
    // An offer that reached A as the loop ended is declined too, or A would hold the Step from B.
    let done = false;
    const declining = (async () => {
      while (!done) {
        const f = await a.nextOf('step_task', 100).catch(() => undefined);
        if (f) a.send({ decline: { task_token: f.step_task!.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
      }
    })();
    // Another worker's idle slot takes it at once, paused or not.
    const b = await slot('B');
    expect(await take(b)).toMatchObject({ task_id: x, attempt: 1 });
    done = true;
    await declining;
  });

  it('registers an older SDK\'s slot that names no slot kind (protocol 3) as one for Steps and RPCs; a current one must name it', async () => {
    // SDKs from before reserved RPC slots keep working on a newer server (upgrade the server first):
    // refused as a bad slot_kind, their workers could not connect at all during the upgrade.
    const older = await slot('A', { protocol_version: 3, slot_kind: pb.SlotKind.SLOT_KIND_UNSPECIFIED });
    const x = await enqueue({ flow_id: 'x' });
    expect(await take(older)).toMatchObject({ task_id: x, attempt: 1 });
    const current = openSlot(t.worker, registerFrame({ app_worker_id: 'B', slot_kind: pb.SlotKind.SLOT_KIND_UNSPECIFIED }));
    open.push(current);
    const err = await current.ended;
    expect(err).toMatchObject({ code: Status.INVALID_ARGUMENT });
    expect(String(err?.message)).toContain('register.slot_kind');
  });

  it('takes an RPC\'s capacity decline (older SDKs) without remembering the name as one the worker lacks', async () => {
    const a = await slot('A');
    const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'r', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
    const first = (await a.nextOf('rpc_task')).rpc_task!;
    a.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
    // The same call comes back to the same worker: it does have the name.
    const again = (await a.nextOf('rpc_task')).rpc_task!;
    a.send({ rpc_result: { task_token: again.task_token, output: Buffer.from('ok') } });
    expect(Buffer.from((await call).output!).toString()).toBe('ok');
    const m = await t.node.metrics.registry.getSingleMetricAsString('dexzd_matching_returned_attempts_total');
    expect(/reason="legacy_no_capacity"} 1\b/.test(m)).toBe(true);
    expect(/reason="unknown_type"} [1-9]/.test(m)).toBe(false);
  });

  it('times out a Step returned unconsumed after its flow deadline passed, instead of running it again', async () => {
    const a = await slot('A');
    const x = await enqueue({ flow_id: 'late', flow_deadline_ms: Date.now() + 400 });
    const first = await take(a);
    expect(first.task_id).toBe(x);
    const b = await slot('B'); // a worker that would take it next
    await new Promise((r) => setTimeout(r, 600)); // the deadline passes while A holds it
    a.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    const outcome = (await t.matching.waitOutcome({ task_id: x, wait_ms: 3000 })).outcome;
    expect(outcome?.status).toBe(pb.OutcomeStatus.TIMED_OUT);
    await nothing(b, 200);
  });

  it('offers a declined type to the worker again once every stream of that worker is gone', async () => {
    const a = await slot('A');
    const x = await enqueue({ flow_id: 'x', step_type: 'exotic' });
    const first = await take(a);
    a.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    await nothing(a, 300);
    a.halfClose();
    await a.ended;
    const again = await slot('A');
    expect((await take(again)).task_id).toBe(x);
  });

  it('keeps a declined type from a process that reuses the worker id until every stream of that id is gone, its own too', async () => {
    const old = await slot('A');
    const x = await enqueue({ flow_id: 'x', step_type: 'exotic' });
    const first = await take(old);
    old.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    // A rolling deploy: the upgraded process, which has the type, registers under the same id beside the old one.
    const upgraded = await slot('A');
    await nothing(upgraded, 200);
    old.reset();
    await old.ended;
    // The old process is gone; the upgraded one opens its next stream. Its own streams still hold the entry.
    const next = await slot('A');
    await Promise.all([nothing(upgraded, 200), nothing(next, 200)]);
    upgraded.reset();
    next.reset();
    await Promise.all([upgraded.ended, next.ended]);
    const back = await slot('A');
    expect((await take(back)).task_id).toBe(x);
  });

  it('offers an evicted type again once the worker completes a Step (unsupportedTypeCacheEntries)', async () => {
    await t.close();
    await start({ 'matching.unsupportedTypeCacheEntries': 1 });
    const a = await slot('A');
    const x = await enqueue({ flow_id: 'x', step_type: 'exotic' });
    const tx = await take(a);
    a.send({ decline: { task_token: tx.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    const y = await enqueue({ flow_id: 'y', step_type: 'rare' });
    const ty = await take(a);
    expect(ty.task_id).toBe(y);
    // Declining "rare" evicts "exotic" from the one-entry cache...
    a.send({ decline: { task_token: ty.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    // ...so after A completes a Step, "exotic" is offered to A again.
    const z = await enqueue({ flow_id: 'z', step_type: 'charge' });
    const tz = await take(a);
    expect(tz.task_id).toBe(z);
    await complete(a, tz);
    expect((await take(a)).task_id).toBe(x);
  });

  it('offers an evicted type again once the worker completes a Step, to a slot freed before its result was recorded', async () => {
    // As the SDK registers: the slot is idle again as soon as its result arrives (accepts_task_after_ack).
    await t.close();
    await start({ 'matching.unsupportedTypeCacheEntries': 1 });
    const a = await slot('A', { accepts_task_after_ack: true });
    const x = await enqueue({ flow_id: 'x', step_type: 'exotic' });
    const tx = await take(a);
    a.send({ decline: { task_token: tx.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    await enqueue({ flow_id: 'y', step_type: 'rare' });
    const ty = await take(a);
    a.send({ decline: { task_token: ty.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } }); // "exotic" is evicted
    const z = await enqueue({ flow_id: 'z', step_type: 'charge' });
    const tz = await take(a);
    expect(tz.task_id).toBe(z);
    await complete(a, tz);
    expect((await take(a)).task_id).toBe(x);
  });

  it('counts legacy capacity declines only as returned attempts: the reserve-decline counters stay at zero', async () => {
    // Guards DESIGN §10: NO_CAPACITY declines count under legacy_no_capacity, never in a reserve-decline counter.
    const a = await slot('A');
    await enqueue({ flow_id: 'x' });
    const step = await take(a);
    a.send({ decline: { task_token: step.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
    await complete(a, await take(a)); // the same Step, back unconsumed
    const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'r', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
    const first = (await a.nextOf('rpc_task')).rpc_task!;
    a.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
    const again = (await a.nextOf('rpc_task')).rpc_task!;
    a.send({ rpc_result: { task_token: again.task_token, output: Buffer.from('ok') } });
    await call;
    const registry = t.node.metrics.registry;
    const returned = await registry.getSingleMetricAsString('dexzd_matching_returned_attempts_total');
    expect(/reason="legacy_no_capacity"} 2\b/.test(returned)).toBe(true);
    // The one documented reserve-decline counter is exposed, at zero...
    expect(await registry.getSingleMetricAsString('dexzd_matching_reserve_declined_tasks_total')).toMatch(/^dexzd_matching_reserve_declined_tasks_total 0$/m);
    // ...and so is every other counter of reserve declines the registry holds.
    const reserve = (await registry.getMetricsAsJSON()).filter((m) => /reserve/.test(m.name));
    expect(reserve.map((m) => m.name)).toContain('dexzd_matching_reserve_declined_tasks_total');
    for (const m of reserve) expect({ name: m.name, values: m.values.map((v) => v.value) }).toEqual({ name: m.name, values: [0] });
  });
});

describe('RPCs', () => {
  const rpc = (over: Partial<pb.IInvokeRpcRequest> = {}) =>
    t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), ...over });
  /** B gets `call` well inside the sticky wait, counted from `since`, and B's answer is the call's. */
  async function answeredAtOnceBy(b: RawSlot, call: ReturnType<typeof rpc>, since: number): Promise<void> {
    const task = (await b.nextOf('rpc_task', 2000)).rpc_task!;
    expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 2);
    b.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('b') } });
    expect((await call).app_worker_id).toBe('B');
  }

  it('runs on a slot and returns its output, never touching Redis', async () => {
    const a = await slot('A');
    const keysBefore = ((await redis.command('KEYS', `${prefix}:*`)) as string[]).sort();
    const call = rpc();
    const task = (await a.nextOf('rpc_task')).rpc_task!;
    expect(task).toMatchObject({ rpc_name: 'status', flow_id: 'f1' });
    expect(Buffer.from(task.input!).toString()).toBe('q');
    a.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('fine') } });
    const r = await call;
    expect(Buffer.from(r.output!).toString()).toBe('fine');
    expect(r.app_worker_id).toBe('A');
    expect((await a.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    expect(((await redis.command('KEYS', `${prefix}:*`)) as string[]).sort()).toEqual(keysBefore);
  });

  it('returns a handler failure as a failure', async () => {
    const a = await slot('A');
    const call = rpc();
    const task = (await a.nextOf('rpc_task')).rpc_task!;
    a.send({ rpc_result: { task_token: task.task_token, failure: { message: 'nope', type: 'Denied', non_retryable: true } } });
    const r = await call;
    // The caller reads whether to try again from non_retryable, and which worker answered.
    expect(r.failure).toEqual({ message: 'nope', type: 'Denied', non_retryable: true });
    expect(r.app_worker_id).toBe('A');
  });

  it('answers UNAVAILABLE after matching.dispatchWait when no worker takes it', async () => {
    const since = Date.now();
    const err = await rpc().catch((e: unknown) => e);
    expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
    expect(Date.now() - since).toBeGreaterThanOrEqual(DISPATCH_WAIT - 50);
    expect(Date.now() - since).toBeLessThan(DISPATCH_WAIT + 1000);
  });

  it('lets a worker that took the call run past matching.dispatchWait, within the caller budget', async () => {
    const a = await slot('A');
    const since = Date.now();
    const call = rpc({ timeout_ms: DISPATCH_WAIT + 1500 });
    const task = (await a.nextOf('rpc_task')).rpc_task!;
    // the worker is told the call's own deadline, not the dispatch window's
    expect(Number(task.deadline_ms)).toBeGreaterThanOrEqual(since + DISPATCH_WAIT + 1400);
    await new Promise((r) => setTimeout(r, DISPATCH_WAIT + 300)); // taken at once, answered after the dispatch window
    a.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('slow but fine') } });
    expect(Buffer.from((await call).output!).toString()).toBe('slow but fine');
    expect((await a.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  });

  it('gives a declined call the rest of matching.dispatchWait to find a worker, not the caller budget', async () => {
    const a = await slot('A');
    const b = await slot('B');
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
    const [busy] = await frameFrom([a, b], 'step_task'); // one of them busy for the rest of the test
    const other = busy === a ? b : a;
    const since = Date.now();
    const call = rpc({ timeout_ms: DISPATCH_WAIT + 4000 }).catch((e: unknown) => e);
    const f = (await other.nextOf('rpc_task')).rpc_task!;
    other.send({ decline: { task_token: f.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    // Not taken again (the busy worker stays busy): UNAVAILABLE once the dispatch window ends.
    expect(((await call) as ClientError).code).toBe(Status.UNAVAILABLE);
    expect(Date.now() - since).toBeLessThan(DISPATCH_WAIT + 1000);
  });

  it('never waits past the caller budget', async () => {
    const since = Date.now();
    const err = await rpc({ timeout_ms: 200 }).catch((e: unknown) => e);
    expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
    expect(Date.now() - since).toBeLessThan(DISPATCH_WAIT - 300);
  });

  it('answers NOT_FOUND naming the rpc when every connected worker declines it, after trying each', async () => {
    const a = await slot('A');
    const b = await slot('B');
    const call = rpc({ rpc_name: 'missing' });
    const tried = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const [s, f] = await frameFrom([a, b], 'rpc_task');
      tried.add(s === a ? 'A' : 'B');
      s.send({ decline: { task_token: f.rpc_task!.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
    }
    expect([...tried].sort()).toEqual(['A', 'B']);
    const err = (await call.catch((e: unknown) => e)) as ClientError;
    expect(err.code).toBe(Status.NOT_FOUND);
    expect(err.details).toContain('missing');
  });

  it('gives a freed slot to a waiting RPC before the waiting Steps', async () => {
    const a = await slot('A');
    await enqueue({ flow_id: 'busy' });
    const busy = await take(a);
    await enqueue({ flow_id: 'queued' });
    const call = rpc();
    await waitFor(() => t.node.gateway.rpcsWaiting === 1, { timeoutMs: 5000, description: 'the RPC waiting for the busy slot' });
    await complete(a, busy);
    const next = await a.nextOf('rpc_task');
    a.send({ rpc_result: { task_token: next.rpc_task!.task_token, output: Buffer.from('x') } });
    await call;
    await a.nextOf('result_ack');
    expect((await take(a)).flow_id).toBe('queued');
  });

  it('uses RPC-only slots for RPCs and never for Steps', async () => {
    const r = await slot('A', { slot_kind: pb.SlotKind.RPC_ONLY });
    await enqueue({ flow_id: 'step' });
    await nothing(r, 300);
    const call = rpc();
    const task = (await r.nextOf('rpc_task')).rpc_task!;
    r.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('y') } });
    expect(Buffer.from((await call).output!).toString()).toBe('y');
  });

  it('tries the sticky worker first while it is connected but busy', async () => {
    const a = await slot('A');
    await enqueue({ flow_id: 'busy' });
    const busy = await take(a);
    const b = await slot('B');
    const call = rpc({ sticky_worker_id: 'A' });
    await nothing(b, 300, 'rpc_task');
    await complete(a, busy);
    const task = (await a.nextOf('rpc_task')).rpc_task!;
    a.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('a') } });
    expect((await call).app_worker_id).toBe('A');
  });

  it('gives an RPC to another idle worker once matching.stickyWait passes while the remembered sticky worker is busy, and not before', async () => {
    // Guards the RPC sticky phase (DESIGN §4): the remembered sticky worker holds the call only for stickyWait.
    const RPC_STICKY_WAIT = 400; // short, and well inside DISPATCH_WAIT: the call is placed before it gives up
    await t.close();
    await start({ 'matching.stickyWait': `${RPC_STICKY_WAIT}ms` });
    const a = await slot('A');
    await enqueue({ flow_id: 'busy' });
    await take(a); // A is busy for the rest of the test
    const b = await slot('B');
    await rememberSticky('f1', 'A');
    const since = Date.now();
    const call = rpc();
    await nothing(b, RPC_STICKY_WAIT - 150, 'rpc_task'); // held for the busy sticky worker
    const task = (await b.nextOf('rpc_task', 2000)).rpc_task!;
    expect(Date.now() - since).toBeGreaterThanOrEqual(RPC_STICKY_WAIT - 50);
    b.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('b') } });
    expect((await call).app_worker_id).toBe('B');
  });

  it('ends the RPC sticky wait when its timer fires, even when the clock reads a little earlier than the timer\'s time', async () => {
    // Guards the sticky window closed by its timer: a timer that fired before the clock showed
    // stickyUntil held the call again, with no event left to place it, until UNAVAILABLE.
    const RPC_STICKY_WAIT = 300;
    let lag = 0;
    await t.close();
    await start({ 'matching.stickyWait': `${RPC_STICKY_WAIT}ms` }, { now: () => Date.now() - lag });
    const a = await slot('A');
    await enqueue({ flow_id: 'busy' });
    await take(a);
    const b = await slot('B');
    await rememberSticky('f1', 'A');
    const call = rpc();
    await sleep(50);
    lag = 200; // from here the node's clock reads 200 ms behind its timers
    const task = (await b.nextOf('rpc_task', 2000)).rpc_task!;
    b.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('b') } });
    expect((await call).app_worker_id).toBe('B');
  });

  it('counts the sticky wait within matching.dispatchWait: UNAVAILABLE at the dispatch wait while the sticky worker stays busy', async () => {
    // Reference, "Routing and availability": the dispatch wait includes the sticky wait.
    await t.close();
    await start({ 'matching.stickyWait': '400ms', 'matching.dispatchWait': '500ms' });
    const a = await slot('A');
    await enqueue({ flow_id: 'busy' });
    await take(a); // A, the sticky worker, stays busy
    await rememberSticky('f1', 'A');
    const since = Date.now();
    const err = (await rpc().catch((e: unknown) => e)) as ClientError;
    expect(err.code).toBe(Status.UNAVAILABLE);
    expect(Date.now() - since).toBeGreaterThanOrEqual(400);
    expect(Date.now() - since).toBeLessThan(800); // not 400 + 500; the margin is for a loaded runner
  });

  it('gives an RPC to an idle worker at once when the remembered sticky worker drains, or its last stream goes while the call waits', async () => {
    // DESIGN §4: no sticky wait for a sticky worker that is draining or has no connected stream.
    const a1 = await slot('A');
    const a2 = await slot('A');
    await enqueue({ flow_id: 'busy' });
    const [held] = await takeFrom([a1, a2]); // one stream of A busy for the rest of the test
    const idle = held === a1 ? a2 : a1;
    idle.halfClose(); // A stops: its idle stream half-closes, the busy one finishes its task
    await idle.ended;
    await rememberSticky('f1', 'A');
    const b = await slot('B');
    await answeredAtOnceBy(b, rpc(), Date.now());
    await b.nextOf('result_ack');

    // C: the flow's sticky worker, connected but busy, so a call waits for it; then it crashes.
    await enqueue({ flow_id: 'busy-b', step_execution_id: 'b' });
    const bBusy = await take(b); // B busy too for now, so nothing but C could take the call
    const c = await slot('C');
    await enqueue({ flow_id: 'busy-c', step_execution_id: 'c' });
    await take(c);
    await rememberSticky('f1', 'C');
    const second = rpc();
    await sleep(100);
    await complete(b, bBusy); // B idle again: only the sticky wait for C holds the call now
    await nothing(b, 100, 'rpc_task');
    const since = Date.now();
    c.reset();
    await c.ended;
    await answeredAtOnceBy(b, second, since);
  });

  it('gives an RPC to an idle worker at once when the remembered sticky worker is not connected', async () => {
    // Guards DESIGN §4: no sticky wait for a sticky worker without a connected stream.
    const b = await slot('B');
    await rememberSticky('f1', 'gone');
    await answeredAtOnceBy(b, rpc(), Date.now());
  });
});

describe('app worker ids', () => {
  it('are per tenant: two tenants may use the same one, each with its own streams and presence', async () => {
    await t.close();
    await start({ 'matching.maxConcurrentTasksCap': 1 });
    await slot('w1'); // tenant acme
    await slot('w1', { tenant: 'beta' }); // the same id in another tenant is another worker (refused as a second stream of acme's w1 before)
    const workers = t.node.gateway.capacitySnapshot().workers;
    expect(workers.map((w) => `${w.tenant}/${w.app_worker_id}/${w.idle_step_slots}`).sort()).toEqual(['acme/w1/1', 'beta/w1/1']);
    expect(t.node.gateway.hasWorker('beta', 'w1')).toBe(true);
    // and each tenant's cap still holds
    const err = await new Promise<unknown>((resolve) => {
      const s = openSlot(t.worker, registerFrame({ app_worker_id: 'w1', tenant: 'beta' }));
      open.push(s);
      void s.ended.then(resolve);
    });
    expect(String((err as Error)?.message)).toContain('ZD_TOO_MANY_STREAMS_PER_WORKER');
  });
});
