/**
 * Sync match at enqueue on any node (DESIGN §4, phase 2): a node with an idle
 * slot starts a new Step inside its enqueue script even when another node
 * owns the Step's partition, with no offer from that owner, as long as no
 * owner advertises Steps of its queue waiting (CapacityUpdate busy_queues):
 * a new Step never cuts in front of a backlog. The same adverts put a new
 * Step at its own owner straight behind the backlog of its queue elsewhere,
 * instead of a sync-match wait. Two nodes in this process, real gRPC and a
 * real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';
import { metricValue } from '../helpers/sdk';

const redis = useEmbeddedRedis();
const QUEUE = 'acme:order:charge';
let owner: TestNode;
let gateway: TestNode;
const slots: RawSlot[] = [];

beforeEach(async () => {
  const prefix = uniquePrefix('anynode');
  // Fixed ids split the 8 partitions 4 / 4 by rendezvous; fast heartbeats settle it quickly.
  // No node dies here: TTLs of 5 s keep a node live, and its leases held, through a stall
  // of the test process of over a second (a 1.5-s nodeTtl saw the start at enqueue missed
  // with a core taken by other work).
  const cluster = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '5s', 'cluster.leaseTtl': '5s' };
  [owner, gateway] = await Promise.all([
    startTestNode(redis.url, prefix, { ...cluster, 'cluster.nodeId': 'n-owner' }),
    startTestNode(redis.url, prefix, { ...cluster, 'cluster.nodeId': 'n-gateway' }),
  ]);
  const partitions = owner.config.cluster.partitions;
  const settled = { timeoutMs: 30_000 };
  await waitFor(() => owner.node.membership.liveIds().length === 2 && gateway.node.membership.liveIds().length === 2,
    { ...settled, description: 'both nodes see each other' });
  await waitFor(() => owner.node.leases.heldPartitions().length === partitions / 2 && gateway.node.leases.heldPartitions().length === partitions / 2,
    { ...settled, description: 'each node holds its half of the partitions' });
  await waitFor(() => gateway.node.view.peersAllowStartAtEnqueue(QUEUE, 'acme', 'order', [owner.node.nodeId], true),
    { ...settled, description: "the gateway node has heard the owner's backlog" });
});
afterEach(async () => {
  for (const s of slots.splice(0)) s.reset();
  await Promise.all([owner.close(), gateway.close()]);
});

/**
 * Until `node` would start a Step of the queue at enqueue, as Node.mayStartAtEnqueue
 * checks: it reads itself live among the members, nothing of the queue waits at its
 * owner here, and every peer has advertised no backlog of it. A loaded machine can
 * stall a 200-ms heartbeat past nodeTtl, and the enqueue then rightly leaves the Step
 * to its owner's offer instead.
 */
async function startsAtEnqueue(node: TestNode, partition: number): Promise<void> {
  const peers = () => node.node.membership.liveIds().filter((id) => id !== node.node.nodeId);
  await waitFor(() => node.node.membership.isLive(node.node.nodeId, node.node.bootId)
    && node.node.owner.mayStartAtEnqueue(partition, QUEUE, 'acme', 'order')
    && node.node.view.peersAllowStartAtEnqueue(QUEUE, 'acme', 'order', peers(), node.node.leases.holds(partition) === undefined),
  { timeoutMs: 10_000, description: 'the node would start a Step of the queue at enqueue' });
}

let seq = 0;
/** A Step of a flow whose partition `owner` holds. */
function ownedByOwner(): pb.IStepSpec {
  for (;;) {
    const flow_id = `f${++seq}`;
    if (owner.node.leases.holds(partitionOf('acme', flow_id, owner.config.cluster.partitions))) {
      return { tenant: 'acme', flow_id, flow_type: 'order', step_type: 'charge', step_execution_id: 's' };
    }
  }
}

/** Offers `owner` has sent to its peers. */
async function offersSent(): Promise<number> {
  const m = await owner.node.metrics.registry.getSingleMetricAsString('dexzd_mesh_messages_total');
  return Number(/message="offer_batch"} (\d+)/.exec(m)?.[1] ?? 0) + Number(/message="offer"} (\d+)/.exec(m)?.[1] ?? 0);
}

async function slotAt(node: TestNode): Promise<RawSlot> {
  const s = openSlot(node.worker, registerFrame({ app_worker_id: 'w1' }));
  slots.push(s);
  await s.nextOf('registered');
  return s;
}

it('counts its peer links both ways in dexzd_mesh_peer_links', async () => {
  const links = async (n: TestNode, direction: string) => metricValue(n.node.metrics.registry, 'dexzd_mesh_peer_links', { direction });
  await waitFor(async () => (await links(owner, 'outbound')) === 1 && (await links(owner, 'inbound')) === 1
    && (await links(gateway, 'outbound')) === 1 && (await links(gateway, 'inbound')) === 1,
  { timeoutMs: 10_000, description: 'each node links to the other, and serves the other\'s link' });
});

it('starts a Step inside its enqueue script on the node with the idle slot, though another node owns its partition', async () => {
  const slot = await slotAt(gateway);
  await waitFor(() => gateway.node.gateway.hasIdleStepSlot('acme', 'order', 'charge'));
  const before = await offersSent();
  const step = ownedByOwner();
  await startsAtEnqueue(gateway, partitionOf('acme', step.flow_id!, owner.config.cluster.partitions));
  const { task_id } = await gateway.matching.enqueueStep({ step });
  const task = (await slot.nextOf('step_task')).step_task!;
  expect(task.task_id).toBe(task_id);
  // started by the enqueue itself: one clock for both, and no offer from the owner
  expect(Number(task.started_at_ms)).toBe(Number(task.enqueued_at_ms));
  expect(await offersSent()).toBe(before);
  slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await gateway.matching.waitOutcome({ task_id, wait_ms: 2000 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
});

it('advertises an owner\'s backlog to its peers, which hold new Steps of that queue back until it drains', async () => {
  const backlog = await Promise.all([1, 2, 3].map(() => owner.matching.enqueueStep({ step: ownedByOwner() })));
  await waitFor(() => owner.node.owner.backlogSnapshot().busyQueues.includes(QUEUE));
  await waitFor(() => !gateway.node.view.peersAllowStartAtEnqueue(QUEUE, 'acme', 'order', [owner.node.nodeId], true));

  // A worker arrives at the gateway node: the owner offers it its backlog, oldest first.
  const slot = await slotAt(gateway);
  const ran: string[] = [];
  for (let i = 0; i < 3; i++) {
    const task = (await slot.nextOf('step_task')).step_task!;
    ran.push(task.task_id!);
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await slot.nextOf('result_ack');
  }
  expect(ran.sort()).toEqual(backlog.map((r) => r.task_id!).sort());
  // drained: the owner says so, and the gateway starts new Steps at enqueue again
  await waitFor(() => gateway.node.view.peersAllowStartAtEnqueue(QUEUE, 'acme', 'order', [owner.node.nodeId], true));
  await waitFor(() => gateway.node.gateway.hasIdleStepSlot('acme', 'order', 'charge'));
  const next = ownedByOwner();
  await startsAtEnqueue(gateway, partitionOf('acme', next.flow_id!, owner.config.cluster.partitions));
  await gateway.matching.enqueueStep({ step: next });
  const task = (await slot.nextOf('step_task')).step_task!;
  expect(Number(task.started_at_ms)).toBe(Number(task.enqueued_at_ms));
});

it('a new Step at its own owner goes behind the backlog its queue holds at another owner, skipping the sync-match wait', async () => {
  // the only worker is busy with a Step held open, so the owner's next Steps of the queue wait
  const slot = await slotAt(owner);
  await owner.matching.enqueueStep({ step: ownedByOwner() });
  await slot.nextOf('step_task');
  await Promise.all([1, 2].map(() => owner.matching.enqueueStep({ step: ownedByOwner() })));
  await waitFor(() => gateway.node.view.peerHasBacklog(QUEUE), { timeoutMs: 10_000 });

  // a Step of a partition the gateway node owns: placed there, behind the owner's backlog
  let step: pb.IStepSpec;
  do step = { tenant: 'acme', flow_id: `g${++seq}`, flow_type: 'order', step_type: 'charge', step_execution_id: 's' };
  while (!gateway.node.leases.holds(partitionOf('acme', step.flow_id!, gateway.config.cluster.partitions)));
  await gateway.matching.enqueueStep({ step });
  const here = gateway.node.owner.backlogSnapshot();
  expect(here.waitingFlows).not.toContain('acme:order'); // not parked in the sync-match phase
  expect(here.busyQueues).toContain(QUEUE); // but a head of its queue
});
