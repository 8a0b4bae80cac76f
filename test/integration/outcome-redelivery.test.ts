/**
 * Redelivery of unacked outcomes (DESIGN §8) reaches every stale entry of a
 * partition's pending list, not only those near its head: XAUTOCLAIM scans a
 * bounded stretch per call, so a claim that always started at the head never
 * got past a long run of entries another consumer had just been handed. A
 * consumer that long-polls gets an entry that goes stale during its wait,
 * within that wait: not only on a later call. A call that leaves
 * redeliver_after_ms unset waits outcomes.redeliverAfter (30 s by default).
 * Stale and new outcomes together never make an answer past max_count.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

/** `n` CANCELLED outcomes of one flow, in stream order. */
async function outcomes(flow: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push((await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'nobody', step_type: 's', step_execution_id: `x${i}` } })).task_id!);
  }
  expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: flow })).toMatchObject({ cancelled_queued: n });
  return ids;
}

it('redelivers a stale outcome that sits behind a long run of freshly redelivered ones', async () => {
  t = await startTestNode(redis.url, uniquePrefix('redeliver'), { 'cluster.partitions': 1 });
  const consume = (consumer: string, max: number, redeliverAfter?: number) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer, max_count: max, wait_ms: 300, redeliver_after_ms: redeliverAfter });
  await consume('c1', 1); // the group, before any outcome
  const front = await outcomes('front', 20);
  const behind = await outcomes('behind', 5);
  // c1 takes all 25 and dies without acking.
  expect((await consume('c1', 25)).outcomes).toHaveLength(25);
  await new Promise((r) => setTimeout(r, 400));
  // c2 takes over the first 20: they are fresh again, the last 5 still stale.
  const c2 = (await consume('c2', 20, 300)).outcomes.map((o) => o.task_id);
  expect(c2.sort()).toEqual([...front].sort());
  // c3 asks for one: it must be one of the 5 behind them.
  const c3 = (await consume('c3', 1, 300)).outcomes;
  expect(c3).toHaveLength(1);
  expect(behind).toContain(c3[0]!.task_id);
  expect(c3[0]!.status).toBe(pb.OutcomeStatus.CANCELLED);
});

it('makes a consumer group destroyed under a running consumer again, and delivers on', async () => {
  t = await startTestNode(redis.url, uniquePrefix('nogroup'), { 'cluster.partitions': 1 });
  const consume = () => t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 300 });
  const [first] = await outcomes('before', 1);
  expect((await consume()).outcomes.map((o) => o.task_id)).toEqual([first]);
  // An operator drops the group (docs/operations.md) while this consumer still runs.
  const stream = `${t.config.redis.keyPrefix}:{0}:out`;
  expect(await redis.command('XGROUP', 'DESTROY', stream, 'engine')).toBe(1);
  const [second] = await outcomes('after', 1);
  // Made again from the start of what is kept: at least once, the first comes again too.
  const got = (await consume()).outcomes.map((o) => o.task_id);
  expect(got).toEqual(expect.arrayContaining([first, second]));
  expect(await redis.command('SISMEMBER', `${t.config.redis.keyPrefix}:groups`, 'engine')).toBe(1);
});

it('hands a waiting consumer an outcome that goes stale during its wait, within that wait', async () => {
  t = await startTestNode(redis.url, uniquePrefix('stalewait'), { 'cluster.partitions': 1 });
  const [id] = await outcomes('held', 1);
  // c1 takes it and dies without acking.
  expect((await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 300 })).outcomes.map((o) => o.task_id)).toEqual([id]);
  // c2 asks at once, before it is stale, and waits: 300 ms on, it is c2's to take.
  const got = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c2', max_count: 10, wait_ms: 5000, redeliver_after_ms: 300 });
  expect(got.outcomes.map((o) => o.task_id)).toEqual([id]);
});

it('hands a stale outcome to a consumer that polls without waiting soon after redeliver_after_ms, not several of them later', async () => {
  t = await startTestNode(redis.url, uniquePrefix('stalepoll'), { 'cluster.partitions': 1 });
  const [id] = await outcomes('held', 1);
  // c1 takes it and dies without acking.
  expect((await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 0 })).outcomes.map((o) => o.task_id)).toEqual([id]);
  const from = Date.now();
  // c2 polls every 50 ms, each call answering at once.
  for (;;) {
    const got = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c2', max_count: 10, wait_ms: 0, redeliver_after_ms: 300 });
    if (got.outcomes.length > 0) {
      expect(got.outcomes.map((o) => o.task_id)).toEqual([id]);
      break;
    }
    expect(Date.now() - from).toBeLessThan(2000);
    await new Promise((r) => setTimeout(r, 50));
  }
  // Claimed at most half a redeliver_after_ms after it went stale (and a poll or two).
  expect(Date.now() - from).toBeGreaterThanOrEqual(290);
  expect(Date.now() - from).toBeLessThan(800);
});

it('leaves redeliver_after_ms unset to outcomes.redeliverAfter: 30 s by default', async () => {
  t = await startTestNode(redis.url, uniquePrefix('dfltredeliver'), { 'cluster.partitions': 1 });
  const [id] = await outcomes('held', 1);
  expect((await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 300 })).outcomes.map((o) => o.task_id)).toEqual([id]);
  // Idle for 2.5 s by the end of the wait: still c1's.
  expect((await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c2', max_count: 10, wait_ms: 2500 })).outcomes).toEqual([]);
});

it('leaves redeliver_after_ms unset to outcomes.redeliverAfter as configured', async () => {
  t = await startTestNode(redis.url, uniquePrefix('cfgredeliver'), { 'cluster.partitions': 1, 'outcomes.redeliverAfter': '300ms' });
  const [id] = await outcomes('held', 1);
  expect((await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: 300 })).outcomes.map((o) => o.task_id)).toEqual([id]);
  expect((await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c2', max_count: 10, wait_ms: 5000 })).outcomes.map((o) => o.task_id)).toEqual([id]);
});

it('claims at most max_count stale outcomes when they lie apart in the pending list', async () => {
  t = await startTestNode(redis.url, uniquePrefix('claimapart'), { 'cluster.partitions': 1 });
  await outcomes('apart', 25);
  const read = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 25, wait_ms: 0 })).outcomes;
  expect(read).toHaveLength(25);
  // In stream order, which is the order of the group's pending list.
  const streamId = (o: pb.IOutcome) => o.outcome_id!.slice(o.outcome_id!.indexOf('-') + 1).split('-').map(BigInt);
  const inOrder = [...read].sort((a, b) => {
    const [am, as] = streamId(a);
    const [bm, bs] = streamId(b);
    return am! === bm! ? Number(as! - bs!) : Number(am! - bm!);
  });
  const entries = inOrder.map((o) => o.outcome_id!.slice(o.outcome_id!.indexOf('-') + 1));
  // The first entry and the last four went stale long ago; the 20 between were just handed out.
  // A claim scans ten entries per one it asks for: the first scan of two stops after the first 20.
  const stream = `${t.config.redis.keyPrefix}:{0}:out`;
  await redis.command('XCLAIM', stream, 'engine', 'c1', 0, ...entries.slice(1, 21), 'IDLE', 0, 'JUSTID');
  await redis.command('XCLAIM', stream, 'engine', 'c1', 0, entries[0]!, ...entries.slice(21), 'IDLE', 3_600_000, 'JUSTID');
  const got = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c2', max_count: 2, wait_ms: 0, redeliver_after_ms: 60_000 })).outcomes;
  expect(got.map((o) => o.task_id).sort()).toEqual([inOrder[0]!.task_id, inOrder[21]!.task_id].sort());
});

it('answers at most max_count when it claims stale outcomes and new ones wait too', async () => {
  t = await startTestNode(redis.url, uniquePrefix('claimcount'), { 'cluster.partitions': 1 });
  const consume = (consumer: string, redeliverAfter?: number) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer, max_count: 3, wait_ms: 300, redeliver_after_ms: redeliverAfter });
  const stale = await outcomes('stale', 2);
  expect((await consume('c1')).outcomes.map((o) => o.task_id).sort()).toEqual([...stale].sort());
  const fresh = await outcomes('fresh', 3);
  await new Promise((r) => setTimeout(r, 100)); // c1's two are stale to a redeliver_after_ms of 50
  const first = (await consume('c2', 50)).outcomes.map((o) => o.task_id!);
  expect(first).toHaveLength(3);
  expect(first).toEqual(expect.arrayContaining(stale)); // the stale two, and one new
  const second = (await consume('c2', 60_000)).outcomes.map((o) => o.task_id!);
  expect([...first, ...second].sort()).toEqual([...stale, ...fresh].sort());
});
