/**
 * Resharding a Redis Cluster under waiting calls (DESIGN §7, §8): while a
 * partition's hash slot migrates (MIGRATING/IMPORTING, its keys answered with
 * ASK, then MOVED once it has moved), fetch-and-lock long polls (gRPC and
 * HTTP) end with a task or an empty list at their wait, never a hang or an
 * error, and tasks of the other partitions are not held up behind it;
 * ConsumeOutcomes and WaitOutcome readers blocked meanwhile deliver the
 * outcomes written once the slot has moved, and their acks land there. A real
 * 3-primary Redis Cluster, one node; slots moved as `redis-cli --cluster
 * reshard` moves them.
 */
import calculateSlot from 'cluster-key-slot';
import { ClientError, Status } from 'nice-grpc';
import { sendCommand } from '../../src/store/embedded-redis';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { expectOneOutcomeEach, startLoad } from '../helpers/cluster-load';
import { finishMigration, migrate, moveKey, openMigration, ownerOf } from '../helpers/cluster-slots';
import { fetchClients } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { useRedisCluster } from '../helpers/redis-cluster';
import { sleep, waitFor } from '../helpers/wait';

const PARTITIONS = 8;
let t: TestNode;
const rc = useRedisCluster(() => t?.close());
afterEach(async () => {
  await t?.close().catch(() => undefined);
});

/** A flow id of partition `p` (tenant acme) not used before. */
let flows = 0;
function flowIn(p: number): string {
  for (;;) {
    const flow = `f${++flows}`;
    if (partitionOf('acme', flow, PARTITIONS) === p) return flow;
  }
}

/** The slot of partition `p` on its primary, and another primary to move it to. */
async function moveTarget(p: number): Promise<{ slot: number; src: number; dst: number }> {
  const slot = calculateSlot(t.node.keys.tag(p));
  const src = await ownerOf(rc.cluster, slot);
  const dst = rc.cluster.nodes.map((n) => n.port).find((port) => port !== src)!;
  return { slot, src, dst };
}

const charge = (flow: string, x = 's') => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'charge', step_execution_id: x });
const topics = [{ tenant: 'acme', flow_type: 'order', step_type: 'charge' }];

async function httpFetch(body: Record<string, unknown>): Promise<{ status: number; body: { tasks?: { taskId: string }[]; message?: string } }> {
  const res = await fetch(`http://${t.node.httpAddress}/v1/external-tasks/fetch-and-lock`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json()) as never };
}

it('hands a fetch the due task of a stable partition while an older one sits in a partition whose slot is migrating (gRPC and HTTP)', async () => {
  t = await startTestNode('', uniquePrefix('mlf'), { 'redis.clusterNodes': [...rc.cluster.seeds], 'cluster.partitions': PARTITIONS });
  const { external } = fetchClients(t);
  const [moving, stable] = [0, 1];
  // The older task is in the migrating partition: a claim taking the oldest first meets it first.
  const older = (await t.matching.enqueueStep({ step: charge(flowIn(moving)) })).task_id!;
  await sleep(5);
  const newer = [
    (await t.matching.enqueueStep({ step: charge(flowIn(stable)) })).task_id!,
    (await t.matching.enqueueStep({ step: charge(flowIn(stable)) })).task_id!,
  ];
  const { slot, src, dst } = await moveTarget(moving);
  await openMigration(slot, src, dst);
  // The older task's hash goes first: the partition's keys are split over the two primaries.
  expect(String(await migrate(src, dst, t.node.keys.task(moving, older)))).toBe('OK');

  const viaGrpc = await external.fetchAndLock({ worker_id: 'g', max_tasks: 1, lock_duration_ms: 30_000, wait_ms: 8000, topics });
  expect(viaGrpc.tasks.map((x) => x.task_id)).toEqual([newer[0]]);
  // The partition that failed is looked at last now: a fetch that does not wait (1 ms) is not
  // answered empty while the client spends its retries there (seconds, past the fetch's grace).
  const viaHttp = await httpFetch({ workerId: 'h', maxTasks: 1, lockDurationMs: 30_000, waitMs: 1, topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }] });
  expect(viaHttp.status).toBe(200);
  expect(viaHttp.body.tasks?.map((x) => x.taskId)).toEqual([newer[1]]);

  // Once the slot has moved, the older one is fetched too.
  await finishMigration(rc.cluster, slot, src, dst);
  const after = await external.fetchAndLock({ worker_id: 'g', max_tasks: 5, lock_duration_ms: 30_000, wait_ms: 5000, topics });
  expect(after.tasks.map((x) => x.task_id)).toEqual([older]);
}, 60_000);

it('ends long polls waiting across a migration with the task enqueued meanwhile, or empty at their wait (gRPC and HTTP)', async () => {
  t = await startTestNode('', uniquePrefix('mlw'), { 'redis.clusterNodes': [...rc.cluster.seeds], 'cluster.partitions': PARTITIONS });
  const { external } = fetchClients(t);
  const moving = 2;
  // Waiting before the slot starts to move; the queue's keys exist (a task came and went).
  const warm = (await t.matching.enqueueStep({ step: charge(flowIn(moving), 'warm') })).task_id!;
  expect((await external.fetchAndLock({ worker_id: 'g', max_tasks: 1, lock_duration_ms: 30_000, wait_ms: 1000, topics })).tasks[0]!.task_id).toBe(warm);
  const grpcWait = external.fetchAndLock({ worker_id: 'g', max_tasks: 1, lock_duration_ms: 30_000, wait_ms: 15_000, topics });
  const httpWait = httpFetch({ workerId: 'h', maxTasks: 1, lockDurationMs: 30_000, waitMs: 15_000, topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }] });
  // An empty wait over the migration ends at its bound, empty.
  const emptyWait = external.fetchAndLock({ worker_id: 'e', max_tasks: 1, lock_duration_ms: 30_000, wait_ms: 2500, topics: [{ ...topics[0]!, step_type: 'none' }] });
  await sleep(200);

  const { slot, src, dst } = await moveTarget(moving);
  await openMigration(slot, src, dst);
  for (const key of (await sendCommand(src, ['CLUSTER', 'GETKEYSINSLOT', slot, 2])) as unknown as string[]) {
    expect(String(await migrate(src, dst, key))).toBe('OK');
  }
  // Enqueued mid-migration: refused (TRYAGAIN) and retried until the slot has moved.
  const enqueued = [
    t.matching.enqueueStep({ step: charge(flowIn(moving), 'a') }),
    t.matching.enqueueStep({ step: charge(flowIn(moving), 'b') }),
  ];
  await sleep(500);
  await finishMigration(rc.cluster, slot, src, dst);
  const ids = (await Promise.all(enqueued)).map((r) => r.task_id!);

  const got = [(await grpcWait).tasks.map((x) => x.task_id), ((await httpWait).body.tasks ?? []).map((x) => x.taskId)].flat();
  expect(got.sort()).toEqual([...ids].sort());
  expect((await emptyWait).tasks).toEqual([]);
}, 60_000);

it('delivers to ConsumeOutcomes and WaitOutcome readers blocked across a migration the outcome written once the slot moved, and acks it there', async () => {
  t = await startTestNode('', uniquePrefix('mlo'), { 'redis.clusterNodes': [...rc.cluster.seeds], 'cluster.partitions': PARTITIONS });
  const moving = 3;
  const s = openSlot(t.worker, registerFrame());
  try {
    await s.nextOf('registered');
    // The group exists on every partition's stream, and the partition holds an outcome already.
    await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10 });
    const run = async (flow: string) => {
      const id = (await t.matching.enqueueStep({ step: { ...charge(flow), step_type: 'pack' } })).task_id!;
      const task = (await s.nextOf('step_task')).step_task!;
      expect(task.task_id).toBe(id);
      return task;
    };
    const first = await run(flowIn(moving));
    s.send({ step_result: { task_token: first.task_token, output: Buffer.from('one') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    const firstRead = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 2000 });
    expect(firstRead.outcomes.map((o) => o.task_id)).toEqual([first.task_id]);

    const second = await run(flowIn(moving));
    const waiting = t.matching.waitOutcome({ task_id: second.task_id, wait_ms: 20_000 });
    const consuming = t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 20_000, ack: [firstRead.outcomes[0]!.outcome_id!] });
    await sleep(200);

    const { slot, src, dst } = await moveTarget(moving);
    await openMigration(slot, src, dst);
    // The outcome stream and the running task's hash move first.
    expect(String(await migrate(src, dst, t.node.keys.out(moving)))).toBe('OK');
    expect(String(await migrate(src, dst, t.node.keys.task(moving, second.task_id!)))).toBe('OK');
    s.send({ step_result: { task_token: second.task_token, output: Buffer.from('two') } });
    await sleep(500);
    await finishMigration(rc.cluster, slot, src, dst);
    expect((await s.nextOf('result_ack', 15_000)).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);

    expect((await waiting).outcome?.output?.toString()).toBe('two');
    const read = await consuming;
    expect(read.outcomes.map((o) => o.task_id)).toEqual([second.task_id]);
    // The ack lands on the stream's new primary; the first outcome's ack (sent before the move) landed too.
    expect((await t.matching.ackOutcomes({ group: 'engine', outcome_ids: [read.outcomes[0]!.outcome_id!] })).acked).toBe(1);
    const pending = (await sendCommand(dst, ['XPENDING', t.node.keys.out(moving), 'engine'])) as unknown as [number];
    expect(pending[0]).toBe(0);

    // And the readers keep delivering after the move.
    const third = await run(flowIn(moving));
    const next = t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 10_000 });
    s.send({ step_result: { task_token: third.task_token, output: Buffer.from('three') } });
    expect((await next).outcomes.map((o) => o.task_id)).toEqual([third.task_id]);
  } finally {
    s.reset();
  }
}, 60_000);

it('runs the Steps of a partition whose slot stays mid-migration past its lease once it has moved, and the other partitions\' meanwhile', async () => {
  t = await startTestNode('', uniquePrefix('mls'), { 'redis.clusterNodes': [...rc.cluster.seeds], 'cluster.partitions': PARTITIONS });
  const moving = 4;
  const stable = 5;
  const pack = (flow: string) => ({ ...charge(flow), step_type: 'pack' });
  const queued = (await t.matching.enqueueStep({ step: pack(flowIn(moving)) })).task_id!;
  const { slot, src, dst } = await moveTarget(moving);
  await openMigration(slot, src, dst);
  expect(String(await migrate(src, dst, t.node.keys.task(moving, queued)))).toBe('OK');

  // A worker connects while the slot is split: the queued Step cannot start yet, a new one of another partition can.
  const s = openSlot(t.worker, registerFrame());
  try {
    await s.nextOf('registered');
    const other = (await t.matching.enqueueStep({ step: pack(flowIn(stable)) })).task_id!;
    const first = (await s.nextOf('step_task', 10_000)).step_task!;
    expect(first.task_id).toBe(other);
    s.send({ step_result: { task_token: first.task_token, output: Buffer.from('ok') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);

    await sleep(3000); // twice rc.cluster.leaseTtl: the partition's lease renewals are refused meanwhile
    await finishMigration(rc.cluster, slot, src, dst);
    const late = (await s.nextOf('step_task', 20_000)).step_task!;
    expect(late.task_id).toBe(queued);
    s.send({ step_result: { task_token: late.task_token, output: Buffer.from('ok') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    expect((await t.matching.waitOutcome({ task_id: queued, wait_ms: 5000 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
  } finally {
    s.reset();
  }
}, 60_000);

it('ends a worker\'s stream UNAVAILABLE (ZD_STORE_UNAVAILABLE) when its result meets a slot split past the client\'s retries, and records the result once the slot has moved', async () => {
  t = await startTestNode('', uniquePrefix('mlr'), { 'redis.clusterNodes': [...rc.cluster.seeds], 'cluster.partitions': PARTITIONS });
  const moving = 1;
  const s = openSlot(t.worker, registerFrame());
  try {
    await s.nextOf('registered');
    const id = (await t.matching.enqueueStep({ step: { ...charge(flowIn(moving)), step_type: 'pack' } })).task_id!;
    const task = (await s.nextOf('step_task')).step_task!;
    expect(task.task_id).toBe(id);
    const { slot, src, dst } = await moveTarget(moving);
    await openMigration(slot, src, dst);
    expect(String(await migrate(src, dst, t.node.keys.task(moving, id)))).toBe('OK');

    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('kept') } });
    // Not a clean end of the stream, which says nothing of why the result went unacknowledged.
    const ended = await s.ended;
    expect(ended).toBeInstanceOf(ClientError);
    expect((ended as ClientError).code).toBe(Status.UNAVAILABLE);
    expect((ended as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);

    await finishMigration(rc.cluster, slot, src, dst);
    const done = await t.matching.waitOutcome({ task_id: id, wait_ms: 15_000 });
    expect(done.outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
    expect(done.outcome?.output?.toString()).toBe('kept');
    expect((await sendCommand(dst, ['XLEN', t.node.keys.out(moving)]))).toBe(1);
  } finally {
    s.reset();
  }
}, 60_000);

it('keeps every acknowledged Step, one outcome each, while the slots of two partitions move key by key under load (two nodes)', async () => {
  const prefix = uniquePrefix('mll');
  const overrides = { 'redis.clusterNodes': [...rc.cluster.seeds], 'cluster.partitions': PARTITIONS };
  t = await startTestNode('', prefix, overrides);
  const peer = await startTestNode('', prefix, overrides);
  try {
    const HOLD_MS = 4000;
    const load = startLoad([t, peer], 200);
    for (const [moving, after] of [[6, 40], [7, 100]] as const) {
      await waitFor(() => load.acked.size >= after, { timeoutMs: 20_000, description: `${after} Steps acknowledged` });
      const { slot, src, dst } = await moveTarget(moving);
      await openMigration(slot, src, dst);
      // One key at a time, with Steps flowing in between: the slot stays split for HOLD_MS, past
      // the client's retries of a refused script (TRYAGAIN), so some calls are answered refused.
      const until = Date.now() + HOLD_MS;
      while (Date.now() < until) {
        const keys = (await sendCommand(src, ['CLUSTER', 'GETKEYSINSLOT', slot, 1])) as unknown as string[];
        if (keys.length > 0) await moveKey(src, dst, keys[0]!);
        await sleep(100);
      }
      await finishMigration(rc.cluster, slot, src, dst);
    }
    await load.finish(40_000);
    expectOneOutcomeEach(load);
  } finally {
    await peer.close();
  }
}, 90_000);
