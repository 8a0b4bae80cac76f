/**
 * One primary of a Redis Cluster frozen (SIGSTOP: its connections stay open and
 * nothing answers), not the one that holds the member set (DESIGN §3). A node's
 * heartbeat and its read of the members must depend on the member set's primary
 * alone: a keyless TIME went to any primary and node keys live on any, and one
 * call that never answered stopped every beat after it, so a live node's score
 * aged past nodeTtl while the member set was served (its peers take it for gone).
 * The freeze ends before cluster-node-timeout (5 s), so no failover ends the calls.
 */
import { Membership } from '../../src/cluster/membership';
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { startLivePair } from '../helpers/cluster-pair';
import type { TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { primaryIndexOf, servesKey } from '../helpers/cluster-slots';

let cluster: RedisCluster;
const nodes: TestNode[] = [];
const clients: RedisClient[] = [];
const memberships: Membership[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicaOf: [0, 1, 2] });
}, 90_000);
afterAll(async () => {
  for (const n of cluster?.nodes ?? []) n.kill('SIGCONT');
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
  for (const m of memberships.splice(0)) m.stop();
  for (const c of clients.splice(0)) c.disconnect();
  await cluster?.stop();
});

it('keeps every heartbeat landing while a primary other than the member set\'s is frozen', async () => {
  const nodeTtlMs = 2000;
  const [a, b] = await startLivePair(cluster, 'fpm', { nodeTtl: `${nodeTtlMs}ms`, heartbeat: '250ms' }, nodes);
  const where = await Promise.all(cluster.nodes.map(async (n) => ({
    members: await servesKey(n.port, a.node.keys.members()), nodeKey: await servesKey(n.port, a.node.keys.node(a.node.nodeId)),
  })));
  const membersAt = where.findIndex((w) => w.members);
  expect(membersAt).toBeGreaterThanOrEqual(0);
  // The primary of A's node key when that is another one (its writes and every read of it held), else
  // any other (TIME went to a primary at random).
  const others = cluster.nodes.map((_, i) => i).filter((i) => i !== membersAt);
  const frozenAt = others.find((i) => where[i]!.nodeKey) ?? others[0]!;
  const membersPort = cluster.nodes[membersAt]!.port;
  const seenByB = () => b.node.membership.get(a.node.nodeId)?.lastHeartbeat ?? 0;

  cluster.nodes[frozenAt]!.kill('SIGSTOP');
  const frozenAtMs = Date.now();
  const seenBefore = seenByB();
  let oldest = 0;
  try {
    while (Date.now() - frozenAtMs < 3500) {
      const [scores, time] = await Promise.all([
        sendCommand(membersPort, ['ZRANGE', a.node.keys.members(), '0', '-1', 'WITHSCORES']),
        sendCommand(membersPort, ['TIME']),
      ]);
      const now = Number((time as string[])[0]) * 1000 + Math.floor(Number((time as string[])[1]) / 1000);
      const list = scores as string[];
      expect(list).toHaveLength(4);
      for (let i = 1; i < list.length; i += 2) oldest = Math.max(oldest, now - Number(list[i]));
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    cluster.nodes[frozenAt]!.kill('SIGCONT');
  }
  // Both nodes beat on: no score aged to nodeTtl (it reached 3 s and more before).
  expect(oldest).toBeLessThan(nodeTtlMs);
  // And B read the members on: A's heartbeats reached it during the freeze.
  expect(seenByB()).toBeGreaterThan(seenBefore + 1000);
  expect(b.node.membership.liveIds()).toContain(a.node.nodeId);
}, 90_000);

/**
 * Whether the node that started an attempt is gone (isGone) reads its score from the member set and its
 * boot from its node key, which may live on the frozen primary: a dead node's attempts must not wait for
 * that primary to answer again, nor a live one's check hang there.
 */
describe("a peer whose node key's primary is frozen", () => {
  const timing = { heartbeatMs: 200, nodeTtlMs: 1000 };

  async function peerOnAnotherPrimary(label: string) {
    const client = createRedis({ clusterNodes: [...cluster.seeds], sentinels: [], sentinelName: '', password: '', url: '' });
    clients.push(client);
    const keys = new Keys(uniquePrefix(label));
    const membersAt = await primaryIndexOf(cluster, keys.members());
    expect(membersAt).toBeGreaterThanOrEqual(0);
    let peerId = '';
    let nodeKeyAt = -1;
    for (let i = 0; nodeKeyAt < 0 || nodeKeyAt === membersAt; i++) {
      peerId = `peer-${i}`;
      nodeKeyAt = await primaryIndexOf(cluster, keys.node(peerId));
    }
    const member = (nodeId: string) => {
      const m = new Membership(client, keys, { nodeId, bootId: 'b1', address: `${nodeId}:1`, ...timing }, systemClock, silentLogger);
      memberships.push(m);
      return m;
    };
    const self = member('self');
    // Self reads the members before the peer joins: only Redis, not its last read, can say the peer is live.
    await self.beat();
    const peer = member(peerId);
    await peer.beat();
    const peerBeat = Date.now();
    return { self, peer, peerId, peerBeat, frozen: cluster.nodes[nodeKeyAt]! };
  }

  /** How long isGone takes to answer, bounded (a hang ends when the freeze does). */
  async function timedIsGone(self: Membership, peerId: string): Promise<{ gone: boolean | 'no answer'; ms: number }> {
    const t0 = Date.now();
    const gone = await Promise.race([self.isGone(peerId, 'b1'), new Promise<'no answer'>((r) => setTimeout(() => r('no answer'), 2000))]);
    return { gone, ms: Date.now() - t0 };
  }

  it('takes a dead one for gone by its score alone', async () => {
    const { self, peer, peerId, peerBeat, frozen } = await peerOnAnotherPrimary('fpm-dead');
    peer.stop();
    frozen.kill('SIGSTOP');
    try {
      await new Promise((r) => setTimeout(r, peerBeat + timing.nodeTtlMs + 200 - Date.now()));
      const { gone, ms } = await timedIsGone(self, peerId);
      expect(gone).toBe(true);
      expect(ms).toBeLessThan(500);
    } finally {
      frozen.kill('SIGCONT');
    }
  }, 30_000);

  it('answers for a live one within a heartbeat: not gone', async () => {
    const { self, peerId, frozen } = await peerOnAnotherPrimary('fpm-live');
    frozen.kill('SIGSTOP');
    try {
      const { gone, ms } = await timedIsGone(self, peerId);
      expect(gone).toBe(false);
      expect(ms).toBeLessThan(timing.heartbeatMs + 500);
    } finally {
      frozen.kill('SIGCONT');
    }
  }, 30_000);
});
