/**
 * A claim of stale outcomes (DESIGN §8) hands each entry once: XAUTOCLAIM
 * resets an entry's idle time, but a claim that wraps from the end of the
 * pending list to its head, or asks a partition again for more, meets the
 * entries it claimed a moment before, stale again to a short enough
 * redeliver_after_ms (idle 0 here, so every entry always is).
 */
import { OutcomeStore } from '../../src/store/outcomes';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'claim-once');

/** `n` entries in partition `p`'s outcome stream, all delivered to c1 and never acked. */
async function deliveredToC1(p: number, n: number): Promise<string[]> {
  const key = fx.keys.out(p);
  await fx.client.xgroup('CREATE', key, 'engine', '0', 'MKSTREAM');
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await fx.client.xadd(key, '*', 'taskId', `t${p}-${i}`, 'status', 'DONE'))!);
  await fx.client.xreadgroup('GROUP', 'engine', 'c1', 'COUNT', n, 'STREAMS', key, '>');
  return ids;
}

it('claims each entry once when the scan wraps from where the last claim stopped back to the head', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 1);
  const ids = await deliveredToC1(0, 10);
  const first = await outcomes.claimStale('engine', 'c2', 0, 4, [0]);
  expect(first.map((o) => o.outcomeId)).toHaveLength(4);
  // From entry 5 to the end, then round from the head: entries 5-10 come up twice in that scan.
  const second = (await outcomes.claimStale('engine', 'c2', 0, 100, [0])).map((o) => o.taskId);
  expect(new Set(second).size).toBe(second.length);
  expect([...second].sort()).toEqual(ids.map((_, i) => `t0-${i}`).sort());
});

it('claims each entry once when a partition that filled its share is asked again', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 2);
  await deliveredToC1(0, 3);
  await deliveredToC1(1, 1);
  // Two partitions, 6 wanted: 3 each at first; partition 0 filled its share and is asked again.
  const got = (await outcomes.claimStale('engine', 'c2', 0, 6, [0, 1])).map((o) => o.taskId);
  expect(new Set(got).size).toBe(got.length);
  expect([...got].sort()).toEqual(['t0-0', 't0-1', 't0-2', 't1-0']);
});
