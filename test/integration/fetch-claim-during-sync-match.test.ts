/**
 * A Step a fetch claims while it is still in its in-memory sync-match phase
 * (DESIGN §4: a new Step waits matching.syncMatchWait for any slot before its
 * queue's heads) is not ready while locked: when that phase ends it must not
 * become a head of its queue. A head of a locked task would count as backlog
 * (the queue's oldest age growing, the queue unserved) for as long as the
 * lock holds, and be offered to the next slot only to bounce.
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { fetchClients, step, topic } from '../helpers/fetch';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const queueRows = () => t.node.owner.backlog.snapshot().queues.filter((q) => q.stepType === 'charge');

it('leaves no head behind for a Step a waiting fetch claimed in its sync-match phase', async () => {
  t = await startTestNode(redis.url, uniquePrefix('fetch-sync'), { 'matching.syncMatchWait': '300ms' });
  const { external } = fetchClients(t);
  // No slot stream anywhere: the new Step parks for a slot, and the waiting fetch takes it meanwhile.
  const fetched = external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 5000, lock_duration_ms: 60_000 });
  await new Promise((r) => setTimeout(r, 100));
  const { task_id } = await t.matching.enqueueStep({ step: step() });
  expect((await fetched).tasks.map((x) => x.task_id)).toEqual([task_id]);
  // Claimed well within its 300 ms phase: it leaves the phase at once, for no slot to be offered it.
  expect(t.node.owner.waitingInMemory).toBe(0);
  await new Promise((r) => setTimeout(r, 600)); // past the phase's end
  expect(queueRows().every((q) => q.oldestAgeSeconds === 0)).toBe(true);
  expect(t.node.owner.backlog.snapshot().unserved).toEqual({ no_worker: 0, no_supporting_worker: 0 });
});
