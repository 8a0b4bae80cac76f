/**
 * Long-polling fetches are woken by enqueues on any node (DESIGN §7: a
 * wake-up means "look again"; a fetch must not sleep through a task another
 * node enqueued): each node advertises the topics its fetches wait on in its
 * CapacityUpdate, and an enqueue rings the peers that wait on its topic. A
 * peer that learns of a new waiting topic rings it once, so an enqueue that
 * raced the advert is not missed either. Two nodes in this process, real gRPC
 * and a real redis-server.
 */
import type { pb } from '../../src/wire';
import { fetchClients, step, topic } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let a: TestNode;
let b: TestNode;
const WAIT = 20_000;

beforeEach(async () => {
  const prefix = uniquePrefix('fetchx');
  const config = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1500ms', 'cluster.leaseTtl': '1500ms', 'fetch.maxWait': '30s' };
  [a, b] = await Promise.all([
    startTestNode(redis.url, prefix, { ...config, 'cluster.nodeId': 'n-a' }),
    startTestNode(redis.url, prefix, { ...config, 'cluster.nodeId': 'n-b' }),
  ]);
  await waitFor(() => a.node.membership.liveIds().length === 2 && b.node.membership.liveIds().length === 2,
    { timeoutMs: 30_000, description: 'both nodes see each other' });
});
afterEach(async () => {
  await Promise.all([a.close(), b.close()]);
});

it('wakes a fetch waiting on one node when another node enqueues its topic', async () => {
  const { external } = fetchClients(a);
  const started = Date.now();
  const fetching = external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: WAIT, lock_duration_ms: 10_000 });
  // the fetch waits (its claim found nothing) before the enqueue goes to the other node
  await waitFor(() => b.node.view.fetchWaiters(`acme:order:charge`).includes(a.node.nodeId),
    { timeoutMs: 5000, description: 'b has heard that a waits on the topic' });
  const r = await b.matching.enqueueStep({ step: step({ flow_id: 'fx1' }) });
  const got = await fetching;
  expect(got.tasks.map((x) => x.task_id)).toEqual([r.task_id]);
  expect(Date.now() - started).toBeLessThan(WAIT / 2);
  // b's notice is counted as what it is, for the mesh panel of the dashboard.
  const sent = (await b.node.metrics.registry.getSingleMetric('dexzd_mesh_doorbell_events_total')!.get()).values;
  expect(sent.find((v) => v.labels.kind === 'fetch')?.value).toBeGreaterThanOrEqual(1);
  expect(sent.find((v) => v.labels.kind === 'unknown')?.value ?? 0).toBe(0);
});

it('does not miss an enqueue made on the other node before it heard of the waiting fetch', async () => {
  const { external } = fetchClients(a);
  // b holds a's adverts back: it learns of the waiting fetch only after its enqueue
  const routing = b.node.routing;
  const apply = routing.onCapacity.bind(routing);
  const held: pb.ICapacityUpdate[] = [];
  routing.onCapacity = (u) => (u.node_id === a.node.nodeId ? void held.push(u) : apply(u));
  const fetching = external.fetchAndLock({ worker_id: 'A', topics: [topic({ step_type: 'ship' })], wait_ms: WAIT, lock_duration_ms: 10_000 });
  await waitFor(() => held.some((u) => (u.fetch_topics ?? []).includes('acme:order:ship')),
    { timeoutMs: 5000, description: 'a advertised its waiting fetch' });
  const started = Date.now();
  const r = await b.matching.enqueueStep({ step: step({ flow_id: 'fx2', step_type: 'ship' }) });
  routing.onCapacity = apply;
  for (const u of held) apply(u);
  const got = await fetching;
  expect(got.tasks.map((x) => x.task_id)).toEqual([r.task_id]);
  expect(Date.now() - started).toBeLessThan(WAIT / 2);
});
