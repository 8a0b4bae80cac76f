/**
 * dexzd_matching_unserved_task_queues counts queues with backlog that nobody
 * can serve (DESIGN §10). A queue whose topic fetch-and-lock workers take from
 * is served, though no stream of its flow type is connected: a busy fetch
 * worker claims and returns at once, never long-polling while a backlog
 * lasts, and the queue counted as no_worker — ZdmatchUnservedTaskQueues
 * fired for every fetch-only deployment under sustained load. The owner of the
 * partition hears of the fetches at any node, as of long polls, by the
 * capacity updates.
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { fetchClients, step, topic } from '../helpers/fetch';
import { waitFor } from '../helpers/wait';
import { partitionOf } from '../../src/store/keys';

const redis = useEmbeddedRedis();
const nodes: TestNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

async function countNow(node: TestNode): Promise<void> {
  await Promise.all(node.node.owner.owned().map((p) => node.node.owner.backlog.count(p)));
}

it('counts a queue a fetch worker takes from as served, and one nobody takes from as no_worker', async () => {
  const t = await startTestNode(redis.url, uniquePrefix('unserved-fetch'), { 'matching.syncMatchWait': '20ms' });
  nodes.push(t);
  const { external } = fetchClients(t);
  for (let i = 0; i < 3; i++) await t.matching.enqueueStep({ step: step({ flow_id: `f${i}` }) });
  for (let i = 0; i < 2; i++) await t.matching.enqueueStep({ step: step({ flow_id: `g${i}`, step_type: 'ship' }) });
  // A busy fetch worker: it takes one and goes; two stay queued behind it.
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], max_tasks: 1, lock_duration_ms: 60_000 });
  expect(got.tasks).toHaveLength(1);
  await countNow(t);
  const { queues, unserved } = t.node.owner.backlog.snapshot();
  expect(queues.find((q) => q.stepType === 'charge')?.entries).toBe(2);
  // 'ship' has no taker at all: still unserved.
  expect(unserved).toEqual({ no_worker: 1, no_supporting_worker: 0 });
});

it('counts a queue as served when the fetch worker takes from it at another node', async () => {
  const prefix = uniquePrefix('unserved-fetch2');
  const overrides = { 'matching.syncMatchWait': '20ms', 'cluster.heartbeat': '200ms' };
  const a = await startTestNode(redis.url, prefix, { ...overrides, 'cluster.nodeId': 'u-a' });
  nodes.push(a);
  const b = await startTestNode(redis.url, prefix, { ...overrides, 'cluster.nodeId': 'u-b' });
  nodes.push(b);
  const partitions = a.config.cluster.partitions;
  await waitFor(() => b.node.leases.heldPartitions().length > 0
    && a.node.leases.heldPartitions().length + b.node.leases.heldPartitions().length === partitions,
  { timeoutMs: 15_000, description: 'the partitions split between the two nodes' });
  // Flows in partitions a owns; the worker fetches at b.
  const flows = Array.from({ length: 40 }, (_, i) => `h${i}`).filter((f) => a.node.leases.holds(partitionOf('acme', f, partitions))).slice(0, 3);
  expect(flows).toHaveLength(3);
  for (const f of flows) await a.matching.enqueueStep({ step: step({ flow_id: f }) });
  await countNow(a);
  expect(a.node.owner.backlog.snapshot().unserved).toEqual({ no_worker: 1, no_supporting_worker: 0 });
  const got = await fetchClients(b).external.fetchAndLock({ worker_id: 'B', topics: [topic()], max_tasks: 1, lock_duration_ms: 60_000 });
  expect(got.tasks).toHaveLength(1);
  await waitFor(async () => {
    await countNow(a);
    return a.node.owner.backlog.snapshot().unserved.no_worker === 0;
  }, { timeoutMs: 5000, description: 'a hears that b fetches the topic' });
});
