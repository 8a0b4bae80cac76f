/**
 * OUTCOME doorbells across nodes (DESIGN §4, §5): a node rings a peer about
 * the outcomes it writes only while that peer has outcome waiters, and a
 * waiter on one node hears at once of an outcome written on another — also
 * when the outcome lands before the writer has learnt of the waiter. Two
 * nodes in this process, real gRPC and a real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let waiterNode: TestNode;
let workerNode: TestNode;
let slot: RawSlot;

beforeEach(async () => {
  const prefix = uniquePrefix('obell');
  [waiterNode, workerNode] = await Promise.all([startTestNode(redis.url, prefix), startTestNode(redis.url, prefix)]);
  await waitFor(() => waiterNode.node.membership.liveIds().length === 2 && workerNode.node.membership.liveIds().length === 2);
  // The only worker is on workerNode: every outcome is written there.
  slot = openSlot(workerNode.worker, registerFrame({ app_worker_id: 'w1' }));
  await slot.nextOf('registered');
});
afterEach(async () => {
  slot.reset();
  await Promise.all([waiterNode.close(), workerNode.close()]);
});

/** Capacity snapshots waiterNode has sent to peers. */
async function snapshotsSent(): Promise<number> {
  const m = await waiterNode.node.metrics.registry.getSingleMetricAsString('dexzd_mesh_messages_total');
  return Number(/message="capacity"} (\d+)/.exec(m)?.[1] ?? 0);
}

/** OUTCOME notices workerNode has sent to peers. */
async function outcomeBellsSent(): Promise<number> {
  const m = await workerNode.node.metrics.registry.getSingleMetricAsString('dexzd_mesh_doorbell_events_total');
  return Number(/kind="outcome"} (\d+)/.exec(m)?.[1] ?? 0);
}

let seq = 0;
async function enqueue(): Promise<string> {
  const step = { tenant: 'acme', flow_id: `f${++seq}`, flow_type: 'order', step_type: 'charge', step_execution_id: 's' };
  return (await workerNode.matching.enqueueStep({ step })).task_id!;
}

async function runOne(): Promise<void> {
  const task = (await slot.nextOf('step_task')).step_task!;
  slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  await slot.nextOf('result_ack');
}

it('sends no OUTCOME doorbells to a peer without outcome waiters', async () => {
  // Let the peers exchange their first snapshots (before one, a peer gets every outcome).
  await waitFor(() => !workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
  for (let i = 0; i < 5; i++) {
    await enqueue();
    await runOne();
  }
  await new Promise((r) => setTimeout(r, 50)); // past the doorbell coalescing
  expect(await outcomeBellsSent()).toBe(0);
});

it('a call that does not wait (a polling consumer) does not make its node ask peers for outcomes', async () => {
  await waitFor(() => !workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
  await new Promise((r) => setTimeout(r, 50)); // waiterNode's own snapshots have gone out
  const before = await snapshotsSent();
  for (let i = 0; i < 5; i++) {
    await waiterNode.matching.consumeOutcomes({ group: 'poller', consumer: 'c', max_count: 10, wait_ms: 0 });
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 50));
  expect(await snapshotsSent()).toBe(before);
  expect(workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId)).toBe(false);
});

it('a WaitOutcome on one node hears at once of an outcome written on another', async () => {
  await waitFor(() => !workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
  // Five rounds; in each the result is sent the moment the wait has begun, so
  // the outcome often lands before workerNode has learnt of the waiter.
  for (let i = 0; i < 5; i++) {
    const taskId = await enqueue();
    const task = (await slot.nextOf('step_task')).step_task!;
    const started = Date.now();
    const wait = waiterNode.matching.waitOutcome({ task_id: taskId, wait_ms: 5000 });
    await new Promise((r) => setTimeout(r, 2));
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from(`out${i}`) } });
    await slot.nextOf('result_ack');
    const r = await wait;
    // The 1 s re-check would answer too, but only after a second.
    expect(Date.now() - started).toBeLessThan(500);
    expect(r.outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
    expect(Buffer.from(r.outcome!.output!).toString()).toBe(`out${i}`);
  }
  expect(await outcomeBellsSent()).toBeGreaterThan(0);
  // The waiters are gone: the peer stops getting OUTCOME notices.
  await waitFor(() => !workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
  const before = await outcomeBellsSent();
  await enqueue();
  await runOne();
  await new Promise((r) => setTimeout(r, 50));
  expect(await outcomeBellsSent()).toBe(before);
});

it('a waiting ConsumeOutcomes on one node hears at once of an outcome written on another', async () => {
  await waitFor(() => !workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
  // the group starts at the stream's end: only outcomes written from now on
  await waiterNode.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 0 });
  for (let i = 0; i < 3; i++) {
    const taskId = await enqueue();
    const task = (await slot.nextOf('step_task')).step_task!;
    const started = Date.now();
    const consuming = waiterNode.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 5000 });
    await new Promise((r) => setTimeout(r, 2));
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from(`c${i}`) } });
    await slot.nextOf('result_ack');
    const r = await consuming;
    // The 1 s re-check would answer too, but only after a second.
    expect(Date.now() - started).toBeLessThan(500);
    expect(r.outcomes.map((o) => o.task_id)).toEqual([taskId]);
    await waiterNode.matching.ackOutcomes({ group: 'engine', outcome_ids: r.outcomes.map((o) => o.outcome_id!) });
  }
});

it('a WaitOutcome already waiting, known to the peer, is woken by the doorbell of the outcome itself', async () => {
  for (let i = 0; i < 3; i++) {
    await waitFor(() => !workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
    const taskId = await enqueue();
    const task = (await slot.nextOf('step_task')).step_task!;
    const wait = waiterNode.matching.waitOutcome({ task_id: taskId, wait_ms: 5000 });
    // The peer has heard of the waiter, and its one wake-up for what it wrote before is spent.
    await waitFor(() => workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
    await new Promise((r) => setTimeout(r, 100));
    const sent = Date.now();
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from(`v${i}`) } });
    await slot.nextOf('result_ack');
    const r = await wait;
    // The 1 s re-check would answer too, but most of a second later.
    expect(Date.now() - sent).toBeLessThan(500);
    expect(r.outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
  }
});

it('a ConsumeOutcomes already waiting, known to the peer, is woken by the doorbell of the outcome itself', async () => {
  await waiterNode.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 0 });
  for (let i = 0; i < 3; i++) {
    await waitFor(() => !workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
    const taskId = await enqueue();
    const task = (await slot.nextOf('step_task')).step_task!;
    const consuming = waiterNode.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 5000 });
    // The peer has heard of the waiter, and its one wake-up for what it wrote before is spent.
    await waitFor(() => workerNode.node.view.wantsOutcomes(waiterNode.node.nodeId));
    await new Promise((r) => setTimeout(r, 100));
    const sent = Date.now();
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from(`w${i}`) } });
    await slot.nextOf('result_ack');
    const r = await consuming;
    // The 1 s re-check would answer too, but most of a second later.
    expect(Date.now() - sent).toBeLessThan(500);
    expect(r.outcomes.map((o) => o.task_id)).toEqual([taskId]);
    await waiterNode.matching.ackOutcomes({ group: 'engine', outcome_ids: r.outcomes.map((o) => o.outcome_id!) });
  }
});

/** XREADGROUP calls Redis has run, all clients together. */
async function groupReads(): Promise<number> {
  const stats = String(await redis.command('INFO', 'commandstats'));
  return Number(/cmdstat_xreadgroup:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

it('a waiting consumer reads the partitions again on a ring or once a second, not in a loop', async () => {
  const partitions = waiterNode.config.cluster.partitions;
  await waiterNode.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10 }); // the group exists
  const before = await groupReads();
  const started = Date.now();
  const r = await waiterNode.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 2500 });
  const waited = Date.now() - started;
  expect(r.outcomes).toEqual([]);
  expect(waited).toBeGreaterThanOrEqual(2400);
  // A read of every partition at the start, one per second of quiet and one at the end (four rounds),
  // and one more when the peer, seeing this node's first waiter, wakes it once: a loop would be hundreds.
  // On one Redis a round is one XREADGROUP over all the partitions' streams.
  const reads = (await groupReads()) - before;
  expect(partitions).toBeGreaterThan(1);
  expect(reads).toBeGreaterThanOrEqual(3);
  expect(reads).toBeLessThanOrEqual(6);
});

it('a waiting consumer kept busy by rings of one partition still reads every partition once a second', async () => {
  const partitions = waiterNode.config.cluster.partitions;
  const consume = (wait_ms?: number) => waiterNode.matching.consumeOutcomes({ group: 'engine', tenant: 'acme', consumer: 'c1', max_count: 10, wait_ms });
  await consume(); // the group exists
  // Rings of partition A (outcomes of another tenant, which this group drops), and an outcome of
  // ours in partition B that nothing rings for (a peer's doorbell that was lost).
  const A = partitionOf('other', 'ring-0', partitions);
  const B = (A + 1) % partitions;
  const flows = Array.from({ length: 2000 }, (_, i) => `ring-${i}`).filter((f) => partitionOf('other', f, partitions) === A);
  const started = Date.now();
  const call = consume(15_000).then((r) => ({ r, at: Date.now() - started }));
  let answered = false;
  void call.then(() => (answered = true));
  let ringing = true;
  const rings = (async () => {
    for (let i = 0; i < flows.length && !answered && Date.now() - started < 6000; i++) {
      await waiterNode.matching.enqueueStep({ step: { tenant: 'other', flow_id: flows[i], flow_type: 'nobody', step_type: 's', step_execution_id: 'x' } });
      await waiterNode.matching.cancelFlow({ tenant: 'other', flow_id: flows[i] });
      await new Promise((r) => setTimeout(r, 150));
    }
    ringing = false;
  })();
  await new Promise((r) => setTimeout(r, 500));
  await redis.command('XADD', waiterNode.node.keys.out(B), '*', 'taskId', 'unrung', 'tenant', 'acme', 'flowId', 'f', 'flowType', 'order', 'stepType', 's', 'status', 'CANCELLED');
  const { r } = await call;
  const stillRinging = ringing;
  await rings;
  expect(r.outcomes.map((o) => o.task_id)).toEqual(['unrung']);
  expect(flows.length).toBeGreaterThan(40);
  // Found by a look at every partition while partition A still rang, not once the rings stopped.
  expect(stillRinging).toBe(true);
});

it('a waiting WaitOutcome looks at its task again on a ring or once a second, not in a loop', async () => {
  const id = await enqueue();
  await slot.nextOf('step_task'); // running, no outcome yet
  const lookups = async () => Number(/cmdstat_exists:calls=(\d+)/.exec(String(await redis.command('INFO', 'commandstats')))?.[1] ?? 0);
  const before = await lookups();
  const started = Date.now();
  const r = await waiterNode.matching.waitOutcome({ task_id: id, wait_ms: 2500 });
  expect(r.outcome ?? undefined).toBeUndefined();
  expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
  // One look at the start, one per second of quiet, one more when the peer, seeing this node's first waiter,
  // wakes it once: a loop would be dozens. Each look that finds no outcome checks that the task exists.
  const looks = (await lookups()) - before;
  expect(looks).toBeGreaterThanOrEqual(3);
  expect(looks).toBeLessThanOrEqual(7);
});
