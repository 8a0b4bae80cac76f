/**
 * ConsumeOutcomes answers stop short of what one gRPC message carries, and the
 * outcomes read past that bound are handed to the next call of the group
 * (docs/fetch.md), whichever consumer makes it: not left until that consumer's
 * next periodic claim of stale outcomes, seconds later, and whatever its
 * redeliver_after_ms.
 */
import { startTestNode, type TestNode } from '../helpers/node';
import { BIG_OUTPUT, completeSteps } from '../helpers/outcomes';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

it('hands the outcomes one answer could not carry to the next call of another consumer of the group', async () => {
  t = await startTestNode(redis.url, uniquePrefix('again'), { 'cluster.partitions': 2 });
  const consume = (consumer: string, waitMs = 0) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer, max_count: 10, wait_ms: waitMs });
  // c2 has just read (and so just looked for stale outcomes) before any outcome exists.
  expect((await consume('c2')).outcomes).toEqual([]);

  const ids = await completeSteps(t, 6, BIG_OUTPUT);

  // Six outcomes of 900 KiB: one answer carries four, the other two are read past it.
  const first = (await consume('c1')).outcomes.map((o) => o.task_id!);
  expect(first.length).toBeGreaterThan(0);
  expect(first.length).toBeLessThan(ids.size);

  // c2's next call gets the rest at once (the default redeliver_after_ms is 30 s), far inside its wait:
  // two 900-KiB outcomes take a loaded machine a second to carry, so the bound is half the wait.
  const started = Date.now();
  const second = (await consume('c2', 10_000)).outcomes.map((o) => o.task_id!);
  expect(Date.now() - started).toBeLessThan(5000);
  expect([...first, ...second].sort()).toEqual([...ids].sort());
});

it('hands over a dead consumer\'s stale outcomes one full claim after another, not one claim per half redeliver_after_ms', async () => {
  t = await startTestNode(redis.url, uniquePrefix('again-stale'), { 'cluster.partitions': 2 });
  const redeliverAfter = 1500;
  const consume = (consumer: string, maxCount: number) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer, max_count: maxCount, wait_ms: 0, redeliver_after_ms: redeliverAfter });
  expect((await consume('dead', 1)).outcomes).toEqual([]);
  await completeSteps(t, 30);
  // "dead" reads all 30 and is never heard of again.
  expect((await consume('dead', 30)).outcomes).toHaveLength(30);
  await new Promise((r) => setTimeout(r, redeliverAfter + 100));
  // Three calls in a row, each a full claim of 10: the backlog is not held back by the claim interval.
  const got: string[] = [];
  for (let i = 0; i < 3; i++) got.push(...(await consume('heir', 10)).outcomes.map((o) => o.task_id!));
  expect(new Set(got).size).toBe(30);
});

it('hands them to a next call that asks for the longest redeliver_after_ms, too', async () => {
  t = await startTestNode(redis.url, uniquePrefix('again-long'), { 'cluster.partitions': 1 });
  const consume = (consumer: string, waitMs = 0, redeliverAfter?: number) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer, max_count: 10, wait_ms: waitMs, redeliver_after_ms: redeliverAfter });
  expect((await consume('c2')).outcomes).toEqual([]);
  const ids = await completeSteps(t, 5, BIG_OUTPUT);
  const first = (await consume('c1')).outcomes.map((o) => o.task_id!);
  expect(first.length).toBeLessThan(ids.size);
  // 366 days, the ceiling of redeliver_after_ms: what c1's answer could not carry is stale to it all the same.
  const second = (await consume('c2', 1000, 366 * 86_400_000)).outcomes.map((o) => o.task_id!);
  expect([...first, ...second].sort()).toEqual([...ids].sort());
});
