/**
 * A node that joins (or comes back under a new id) learns every peer's capacity
 * at once, not at each peer's next heartbeat (DESIGN §3: a moving partition
 * must not cost a latency spike; §4: owners keep the cluster capacity view).
 * A peer sends snapshots only to the members it has read, so a joining node
 * heard nothing from a peer until that peer's next heartbeat read it: the
 * partitions it took over from another node could not reach that peer's idle
 * workers meanwhile. Now a snapshot from a node a peer holds none of has the
 * peer read the members once and answer with its own.
 * Three nodes in this process on a real redis-server; c's heartbeat is slow,
 * so that its next one is far off while the test runs.
 */
import { partitionOf } from '../../src/store/keys';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const nodes: TestNode[] = [];
const slots: RawSlot[] = [];
afterEach(async () => {
  for (const s of slots.splice(0)) s.reset();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

const cluster = (id: string, heartbeat: string) => ({
  'cluster.nodeId': id, 'cluster.heartbeat': heartbeat, 'cluster.nodeTtl': '60s', 'cluster.leaseTtl': '10s',
});

async function start(prefix: string, id: string, heartbeat: string): Promise<TestNode> {
  const n = await startTestNode(redis.url, prefix, cluster(id, heartbeat));
  nodes.push(n);
  return n;
}

it("a joining node's partitions reach a peer's idle worker before that peer's next heartbeat", async () => {
  const prefix = uniquePrefix('join');
  const a = await start(prefix, 'n-a', '200ms');
  const c = await start(prefix, 'n-c', '30s'); // reads the members at its start, then not for 30 s
  await waitFor(() => a.node.membership.liveIds().length === 2 && c.node.membership.liveIds().length === 2,
    { timeoutMs: 5000, description: 'a and c see each other' });
  const w = openSlot(c.worker, registerFrame({ app_worker_id: 'w-c' }));
  slots.push(w);
  await w.nextOf('registered');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === 'n-c', { timeoutMs: 5000, description: "a sees c's idle worker" });

  const n = await start(prefix, 'n-join', '200ms');
  const partitions = n.config.cluster.partitions;
  // a gives n its share once a reads n among the members (a heartbeat of 200 ms).
  await waitFor(() => n.node.leases.heldPartitions().length > 0, { timeoutMs: 5000, description: 'n holds a partition' });
  let flow = 'joined-0';
  for (let i = 1; !n.node.leases.holds(partitionOf('acme', flow, partitions)); i++) flow = `joined-${i}`;

  const r = await n.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  expect((await w.nextOf('step_task', 3000)).step_task!.task_id).toBe(r.task_id);
}, 30_000);
