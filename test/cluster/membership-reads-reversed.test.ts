/**
 * Two reads of the members answered in reverse order (DESIGN §3). On a Redis
 * Cluster node keys are spread over the primaries: a read that found a peer
 * waits for that peer's node key on its primary, while a later read that no
 * longer finds it (the peer left meanwhile) needs only primaries that answer,
 * and is applied first. The older read, answered after, must not put the peer
 * back among the live members: the node would route to it and take its
 * attempts for running until its next read.
 *
 * The order is set through Redis itself: the peer leaves only once the member
 * set's primary has answered the first read's ZRANGEBYSCORE, and the peer
 * key's primary is frozen (SIGSTOP) for well under cluster-node-timeout.
 */
import { Membership } from '../../src/cluster/membership';
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { primaryIndexOf } from '../helpers/cluster-slots';
import { uniquePrefix } from '../helpers/redis';

let cluster: RedisCluster;
const clients: RedisClient[] = [];
const memberships: Membership[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
}, 90_000);
afterAll(async () => {
  for (const n of cluster?.nodes ?? []) n.kill('SIGCONT');
  for (const m of memberships.splice(0)) m.stop();
  for (const c of clients.splice(0)) c.disconnect();
  await cluster?.stop();
});

/** How many ZRANGEBYSCORE calls the primary on `port` has answered. */
async function rangeReads(port: number): Promise<number> {
  const info = String(await sendCommand(port, ['INFO', 'commandstats']));
  return Number(/cmdstat_zrangebyscore:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

it('keeps the newer read of the members when an older one answers after it', async () => {
  const client = createRedis({ clusterNodes: [...cluster.seeds], sentinels: [], sentinelName: '', password: '', url: '' });
  clients.push(client);
  const keys = new Keys(uniquePrefix('mrr'));
  const membersAt = await primaryIndexOf(cluster, keys.members());
  expect(membersAt).toBeGreaterThanOrEqual(0);
  // The peer's node key on another primary than the member set; this node's on one that is not the peer's.
  const pick = async (name: string, ok: (at: number) => boolean): Promise<[string, number]> => {
    for (let i = 0; ; i++) {
      const at = await primaryIndexOf(cluster, keys.node(`${name}-${i}`));
      if (at >= 0 && ok(at)) return [`${name}-${i}`, at];
    }
  };
  const [peerId, peerKeyAt] = await pick('peer', (at) => at !== membersAt);
  const [selfId] = await pick('self', (at) => at !== peerKeyAt);
  const timing = { heartbeatMs: 2000, nodeTtlMs: 20_000 };
  const member = (nodeId: string) => {
    const m = new Membership(client, keys, { nodeId, bootId: 'b1', address: `${nodeId}:1`, ...timing }, systemClock, silentLogger);
    memberships.push(m);
    return m;
  };
  const peer = member(peerId);
  await peer.beat();
  const self = member(selfId);
  await self.beat();
  expect(self.liveIds()).toEqual([peerId, selfId].sort());
  const changes: (readonly string[])[] = [];
  self.on('change', (ids: readonly string[]) => changes.push(ids));

  const membersPort = cluster.nodes[membersAt]!.port;
  const frozen = cluster.nodes[peerKeyAt]!;
  const readsBefore = await rangeReads(membersPort);
  frozen.kill('SIGSTOP');
  let older: Promise<void> | undefined;
  try {
    // The older read: it finds the peer and waits for the peer's node key on the frozen primary.
    let olderDone = false;
    older = self.beat().then(() => {
      olderDone = true;
    });
    for (const until = Date.now() + 2000; (await rangeReads(membersPort)) === readsBefore;) {
      expect(Date.now()).toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 5));
    }
    // Then the peer leaves, and the newer read finds this node alone.
    await peer.leave();
    await self.beat();
    expect(olderDone).toBe(false);
    expect(self.liveIds()).toEqual([selfId]);
  } finally {
    frozen.kill('SIGCONT');
  }
  // The older read answers now (or falls back after a heartbeat): what the newer one read stands.
  await older;
  expect(self.liveIds()).toEqual([selfId]);
  expect(self.get(peerId)).toBeUndefined();
  expect(self.isLive(peerId, 'b1')).toBe(false);
  expect(changes).toEqual([[selfId]]);
}, 60_000);
