/**
 * A node whose clock runs behind the partition owner's (DESIGN §4, §6): the owner
 * offers a head once its own clock says the task is ready, and the node holding the
 * idle worker starts it then, on the owner's reading, not refusing it as not ready
 * yet (a refusal would leave the owner forgetting the head, the task unstarted).
 * Two nodes in this process, real gRPC and a real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const BEHIND = 3000; // b's clock, in ms behind a's
let a: TestNode;
let b: TestNode;
const slots: RawSlot[] = [];

beforeEach(async () => {
  const prefix = uniquePrefix('behind');
  const all = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1500ms', 'cluster.leaseTtl': '1500ms' };
  [a, b] = await Promise.all([
    startTestNode(redis.url, prefix, { ...all, 'cluster.nodeId': 'n-a' }),
    startTestNode(redis.url, prefix, { ...all, 'cluster.nodeId': 'n-b' }, { clock: { now: () => Date.now() - BEHIND } }),
  ]);
  const half = a.config.cluster.partitions / 2;
  const seesBoth = (n: TestNode) => ['n-a', 'n-b'].every((id) => n.node.membership.liveIds().includes(id));
  await waitFor(() => a.node.leases.heldPartitions().length === half && b.node.leases.heldPartitions().length === half
    && seesBoth(a) && seesBoth(b), { timeoutMs: 30_000, description: 'each node holds its half of the partitions and sees the other' });
});

afterEach(async () => {
  for (const s of slots.splice(0)) s.reset();
  await Promise.all([a?.close(), b?.close()]);
});

it("starts a Step of a partition owned by a node whose clock runs ahead on a worker of the node behind, at once", async () => {
  const partitions = a.config.cluster.partitions;
  const held = new Set(a.node.leases.heldPartitions().map((l) => l.partition));
  const flowId = Array.from({ length: 100 }, (_, i) => `f${i}`).find((f) => held.has(partitionOf('acme', f, partitions)))!;
  const w = openSlot(b.worker, registerFrame({ app_worker_id: 'w-b' }));
  slots.push(w);
  await w.nextOf('registered');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === b.node.nodeId, { timeoutMs: 5000, description: "a sees b's idle slot" });
  const since = Date.now();
  await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'charge', step_execution_id: 's1' } });
  const task = (await w.nextOf('step_task', 2000)).step_task!;
  expect(task.flow_id).toBe(flowId);
  expect(Date.now() - since).toBeLessThan(BEHIND / 2);
});
