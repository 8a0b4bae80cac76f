/**
 * An owner counts a peer's idle slot as taken the moment it offers a Step there
 * (CapacityView.reserve), until that peer's next capacity snapshot says otherwise
 * (DESIGN §4). Two ways that count went stale for good, each of which left a Step
 * that only the peer's worker could run queued while the worker sat idle:
 * - an offer that never reached the peer: the owner had the peer's first snapshot
 *   (it comes over the peer's own link) before it had read the peer's address
 *   among the members, and answered its own offer no-slot;
 * - any reservation the peer never answered with a new snapshot, because its slots
 *   stayed as they were.
 * Now an offer, a Cancel or a doorbell to a peer not yet read waits for one read of the members, and every
 * node sends its snapshot at least once a second.
 * Two nodes in this process on a real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import { useEmbeddedRedis } from '../helpers/redis';
import { useNodePair } from '../helpers/node-pair';
import type { TestNode } from '../helpers/node';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const pair = useNodePair(redis, 'caprefresh');

/** A flow whose partition node `owner` holds. */
function flowOwnedBy(owner: TestNode, prefix: string): string {
  const partitions = owner.config.cluster.partitions;
  for (let i = 0; ; i++) if (owner.node.leases.holds(partitionOf('acme', `${prefix}${i}`, partitions)) !== undefined) return `${prefix}${i}`;
}

async function offers(node: TestNode, result: string): Promise<number> {
  const m = await node.node.metrics.registry.getSingleMetricAsString('dexzd_matching_offers_total');
  return Number(new RegExp(`result="${result}"} (\\d+)`).exec(m)?.[1] ?? 0);
}

/** Until its next read of the members, `node` has no entry for `peer` (as when the peer just joined). */
function unreadUntilNextRead(node: TestNode, peer: TestNode): void {
  const membership = node.node.membership as unknown as { get(id: string): unknown; beat(): Promise<void> };
  const realGet = membership.get.bind(membership);
  const realBeat = membership.beat.bind(membership);
  let unread = true;
  membership.get = (id: string) => (unread && id === peer.node.nodeId ? undefined : realGet(id));
  membership.beat = async () => {
    unread = false;
    await realBeat();
  };
}

/** b's worker is idle and a knows it (a has b's snapshot). */
async function idleWorkerAtB() {
  const { a, b } = pair;
  const w = await pair.slotAt(b, 'w-b');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === b.node.nodeId, { timeoutMs: 10_000, description: "a sees b's idle slot" });
  return w;
}

it("places a Step on a peer's idle slot that the owner's view counted as taken, within a snapshot refresh", async () => {
  const { a, b } = pair;
  const w = await idleWorkerAtB();
  // An offer that went nowhere: the owner counts b's only idle slot as taken, and b's slots do not change.
  expect(a.node.view.reserve('acme', 'order', 'charge')).toBe(b.node.nodeId);
  expect(a.node.view.reserve('acme', 'order', 'charge')).toBeUndefined();
  const r = await a.matching.enqueueStep({ step: {
    tenant: 'acme', flow_id: flowOwnedBy(a, 'stale-'), flow_type: 'order', step_type: 'charge', step_execution_id: 's',
  } });
  // b's next snapshot (at most a second away, plus the coalescing) corrects a's view.
  expect((await w.nextOf('step_task', 5_000)).step_task!.task_id).toBe(r.task_id);
});

it("reads the members once for an offer to a peer whose snapshot came before its member entry, and the offer reaches it", async () => {
  const { a, b } = pair;
  const w = await idleWorkerAtB();
  // a has not read b among the members yet (as when b just joined): no address to dial until a's next read.
  unreadUntilNextRead(a, b);
  const noSlotBefore = await offers(a, 'no-slot');
  const r = await a.matching.enqueueStep({ step: {
    tenant: 'acme', flow_id: flowOwnedBy(a, 'unread-'), flow_type: 'order', step_type: 'charge', step_execution_id: 's',
  } });
  expect((await w.nextOf('step_task', 5_000)).step_task!.task_id).toBe(r.task_id);
  // The first offer reached b: it was not answered no-slot here for want of b's address.
  expect(await offers(a, 'no-slot')).toBe(noSlotBefore);
});

it("reads the members once for a Cancel to a peer not read yet, and the running attempt there gets it", async () => {
  const { a, b } = pair;
  const w = await pair.slotAt(b, 'w-b');
  await b.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'cancel-unread', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  const task = (await w.nextOf('step_task')).step_task!;
  // a has not read b among the members yet: the Cancel for b's slot needs b's address.
  unreadUntilNextRead(a, b);
  const c = await a.matching.cancelFlow({ tenant: 'acme', flow_id: 'cancel-unread', reason: 'user asked' });
  expect(c).toMatchObject({ cancelled_running: 1 });
  expect((await w.nextOf('cancel', 3_000)).cancel!.task_token).toBe(task.task_token);
});

it('reads the members once for a doorbell to a peer not read yet, and the peer hears it', async () => {
  const { a, b } = pair;
  const heard: string[] = [];
  const handlers = (b.node.mesh as unknown as { handlers: { doorbell(events: { task_id?: string | null }[], from: string): void } }).handlers;
  const realDoorbell = handlers.doorbell.bind(handlers);
  handlers.doorbell = (events, from) => {
    for (const e of events) if (e.task_id) heard.push(e.task_id);
    realDoorbell(events, from);
  };
  // a has not read b among the members yet: the doorbell needs b's address.
  unreadUntilNextRead(a, b);
  a.node.mesh.ring(b.node.nodeId, { kind: 2 /* OUTCOME */, partition: 0, task_id: 'bell-unread' });
  await waitFor(() => heard.includes('bell-unread'), { timeoutMs: 3_000, description: 'b hears the doorbell' });
});
