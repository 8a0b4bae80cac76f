/**
 * Two nodes on one redis-server, in this process, each holding its half of
 * the partitions and seeing the other among the members before every test; the raw slots a test opens through
 * `slotAt` are reset after it, then both nodes close. The cluster timings are
 * fast ones; `config` adds to them (sticky and dispatch waits, say).
 */
import type { pb } from '../../src/wire';
import { startTestNode, type TestNode } from './node';
import { openSlot, registerFrame, type RawSlot } from './raw-slot';
import { uniquePrefix, type TestRedis } from './redis';
import { waitFor } from './wait';

export interface NodePair {
  readonly a: TestNode;
  readonly b: TestNode;
  /** A registered raw slot of `appWorkerId` on `node` (its Register fields `over`), reset after the test. */
  slotAt(node: TestNode, appWorkerId: string, over?: Partial<pb.IRegister>): Promise<RawSlot>;
}

export function useNodePair(redis: TestRedis, label: string, config: Record<string, unknown> = {}, ids: [string, string] = ['n-a', 'n-b']): NodePair {
  let a: TestNode | undefined;
  let b: TestNode | undefined;
  const slots: RawSlot[] = [];
  beforeEach(async () => {
    const prefix = uniquePrefix(label);
    const all = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1500ms', 'cluster.leaseTtl': '1500ms', ...config };
    [a, b] = await Promise.all([
      startTestNode(redis.url, prefix, { ...all, 'cluster.nodeId': ids[0] }),
      startTestNode(redis.url, prefix, { ...all, 'cluster.nodeId': ids[1] }),
    ]);
    const partitions = a.config.cluster.partitions;
    // Each has read the other among the members too: holding its half alone does not say so,
    // and a node that has not read its peer yet has no address to send it anything.
    const seesBoth = (n: TestNode) => ids.every((id) => n.node.membership.liveIds().includes(id));
    await waitFor(() => a!.node.leases.heldPartitions().length === partitions / 2 && b!.node.leases.heldPartitions().length === partitions / 2
      && seesBoth(a!) && seesBoth(b!),
      { timeoutMs: 30_000, description: 'each node holds its half of the partitions and sees the other' });
  });
  afterEach(async () => {
    for (const s of slots.splice(0)) s.reset();
    await Promise.all([a?.close(), b?.close()]);
  });
  const started = (n: TestNode | undefined): TestNode => {
    if (!n) throw new Error('useNodePair: the nodes start in beforeEach; use them inside a test');
    return n;
  };
  return {
    get a() {
      return started(a);
    },
    get b() {
      return started(b);
    },
    async slotAt(node, appWorkerId, over = {}) {
      const s = openSlot(node.worker, registerFrame({ app_worker_id: appWorkerId, ...over }));
      slots.push(s);
      await s.nextOf('registered');
      return s;
    },
  };
}
