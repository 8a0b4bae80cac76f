/**
 * docs/fetch.md "Long poll": a waiting fetch wakes at the next due time its
 * claim saw in its queues (a lock lapsing), and a dead fetch worker costs
 * exactly one lock duration. ExtendLock sets lockUntil = now + lockDuration, so
 * a shorter lock lapses before the time a waiting fetch saw: the fetches of its
 * topic must hear of it and claim the task once it lapses, not at the end of
 * their wait (or at the lock taken at the fetch).
 */
import { HINT_TTL_MS } from '../../src/gateway/fetch-hints';
import { fetchClients, step, topic, type ExternalClient } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let external: ExternalClient;

afterEach(async () => {
  await t?.close();
});

it('a waiting fetch claims a task whose lock ExtendLock shortened once that lock lapses, not at the end of its wait', async () => {
  t = await startTestNode(redis.url, uniquePrefix('extendwait'));
  ({ external } = fetchClients(t));
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 60_000 });
  expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
  // B waits on the topic: its claim sees the task locked for a minute (past the node's hint of A's
  // claim, which would make it look again within HINT_TTL_MS).
  await new Promise((r) => setTimeout(r, HINT_TTL_MS + 100));
  const started = Date.now();
  const waiting = external.fetchAndLock({ worker_id: 'B', topics: [topic()], wait_ms: 5000, lock_duration_ms: 10_000 });
  await new Promise((r) => setTimeout(r, 200));
  // A shortens its lock, then dies.
  const lockUntil = Number((await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 300 })).lock_until_ms);
  const r = await waiting;
  expect(r.tasks.map((x) => x.task_id)).toEqual([id]);
  expect(Date.now()).toBeGreaterThanOrEqual(lockUntil);
  expect(Date.now() - started).toBeLessThan(2500);
});
