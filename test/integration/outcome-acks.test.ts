/**
 * Acks of outcome ids Redis cannot read (DESIGN §11.8: bad input names the
 * field and changes nothing). An outcome id is "<partition>-<ms>-<seq>"; a
 * stream id part past 2^64 - 1 looks like a number but Redis refuses it
 * ("Invalid stream ID"), and the acks of the other partitions, sent alongside,
 * had already gone through. An ack list longer than AckOutcomes takes is refused
 * whole, on ConsumeOutcomes too. So is an id naming a partition past the
 * configured count: no stream of this store holds it. AckOutcomes counts
 * each outcome it acked, however many share a partition, and none acked before.
 */
import { Status } from 'nice-grpc';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { failureOf } from '../helpers/fetch';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const PAST_U64 = '18446744073709551616';

/** One CANCELLED outcome delivered to consumer c1 of group "engine", not acked. */
async function pendingOutcome(): Promise<{ id: string; partition: number }> {
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1' });
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'nobody', step_type: 's', step_execution_id: 'x' } });
  await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f' });
  const [o] = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', wait_ms: 1000 })).outcomes;
  return { id: o!.outcome_id!, partition: Number(o!.outcome_id!.split('-')[0]) };
}

async function pendingCount(partition: number): Promise<number> {
  const summary = (await redis.command('XPENDING', `${t.config.redis.keyPrefix}:{${partition}}:out`, 'engine')) as unknown[];
  return Number(summary[0]);
}

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('acks'), { 'cluster.partitions': 2 });
});

it('refuses an AckOutcomes id whose stream id part is past 2^64 - 1, naming it, and acks none of the others', async () => {
  const { id, partition } = await pendingOutcome();
  const other = 1 - partition;
  const err = await failureOf(t.matching.ackOutcomes({ group: 'engine', outcome_ids: [id, `${other}-${PAST_U64}-0`] }));
  expect(err.code).toBe(Status.INVALID_ARGUMENT);
  expect(err.details).toContain('outcome_ids[1]');
  expect(await pendingCount(partition)).toBe(1);
  const seq = await failureOf(t.matching.ackOutcomes({ group: 'engine', outcome_ids: [id, `${other}-1-${PAST_U64}`] }));
  expect(seq.details).toContain('outcome_ids[1]');
  expect(await pendingCount(partition)).toBe(1);
});

it('refuses a ConsumeOutcomes ack past 2^64 - 1, naming it, and acks none of the others', async () => {
  const { id, partition } = await pendingOutcome();
  const err = await failureOf(t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', ack: [id, `${1 - partition}-${PAST_U64}-0`] }));
  expect(err.code).toBe(Status.INVALID_ARGUMENT);
  expect(err.details).toContain('ack[1]');
  expect(await pendingCount(partition)).toBe(1);
});

it('takes the largest stream id Redis reads as an id that matched nothing', async () => {
  const { id, partition } = await pendingOutcome();
  const max = '18446744073709551615';
  expect((await t.matching.ackOutcomes({ group: 'engine', outcome_ids: [`${1 - partition}-${max}-${max}`] })).acked).toBe(0);
  expect((await t.matching.ackOutcomes({ group: 'engine', outcome_ids: [id] })).acked).toBe(1);
});

it('takes 10 000 ids in one AckOutcomes and in one ConsumeOutcomes\' acks, the ceiling itself', async () => {
  const { id, partition } = await pendingOutcome();
  const others = Array.from({ length: 9_999 }, (_, i) => `${partition}-1-${i}`);
  expect((await t.matching.ackOutcomes({ group: 'engine', outcome_ids: [id, ...others] })).acked).toBe(1);
  expect(await pendingCount(partition)).toBe(0);
  await expect(t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', ack: [id, ...others] })).resolves.toEqual({ outcomes: [] });
});

it('refuses a ConsumeOutcomes carrying more acks than AckOutcomes takes, naming the field, and acks none of them', async () => {
  const { id, partition } = await pendingOutcome();
  // 10 000 ids is AckOutcomes' ceiling; the pending one among them must not be acked either.
  const ack = [id, ...Array.from({ length: 10_000 }, (_, i) => `${partition}-1-${i}`)];
  const err = await failureOf(t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', ack }));
  expect(err.code).toBe(Status.INVALID_ARGUMENT);
  expect(err.details).toMatch(/\back\b.*10000/);
  expect(await pendingCount(partition)).toBe(1);
});

it('refuses an outcome id naming a partition past cluster.partitions, naming it, and acks none of the others', async () => {
  const { id, partition } = await pendingOutcome();
  for (const past of ['2-1-0', '3-1-0']) {
    const err = await failureOf(t.matching.ackOutcomes({ group: 'engine', outcome_ids: [id, past] }));
    expect([err.code, err.details]).toEqual([Status.INVALID_ARGUMENT, expect.stringContaining('outcome_ids[1]')]);
    const consume = await failureOf(t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', ack: [id, past] }));
    expect([consume.code, consume.details]).toEqual([Status.INVALID_ARGUMENT, expect.stringContaining('ack[1]')]);
  }
  expect(await pendingCount(partition)).toBe(1);
});

it('counts every outcome an AckOutcomes acked, several of one partition too, and none acked before', async () => {
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1' });
  const steps = [0, 1, 2].map((i) => ({ tenant: 'acme', flow_id: 'many', flow_type: 'nobody', step_type: 's', step_execution_id: `x${i}` }));
  await t.matching.enqueueSteps({ steps });
  await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'many' });
  const ids = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', wait_ms: 1000 })).outcomes.map((o) => o.outcome_id!);
  expect(ids).toHaveLength(3);
  expect(new Set(ids.map((id) => id.split('-')[0])).size).toBe(1); // one flow: one partition
  expect((await t.matching.ackOutcomes({ group: 'engine', outcome_ids: ids.slice(0, 2) })).acked).toBe(2);
  expect((await t.matching.ackOutcomes({ group: 'engine', outcome_ids: ids })).acked).toBe(1);
  expect((await t.matching.ackOutcomes({ group: 'engine', outcome_ids: ids })).acked).toBe(0);
});
