/**
 * One primary of a Redis Cluster frozen (SIGSTOP: its connections stay open and
 * nothing answers), not the one that holds the member set (DESIGN §3). A node's
 * heartbeat and its read of the members must depend on the member set's primary
 * alone: a keyless TIME went to any primary and node keys live on any, and one
 * call that never answered stopped every beat after it, so a live node's score
 * aged past nodeTtl while the member set was served (its peers take it for gone).
 * The freeze ends before cluster-node-timeout (5 s), so no failover ends the calls.
 */
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { servesKey } from '../helpers/cluster-slots';

let cluster: RedisCluster;
const nodes: TestNode[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicaOf: [0, 1, 2] });
}, 90_000);
afterAll(async () => {
  for (const n of cluster?.nodes ?? []) n.kill('SIGCONT');
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
  await cluster?.stop();
});

it('keeps every heartbeat landing while a primary other than the member set\'s is frozen', async () => {
  const nodeTtlMs = 2000;
  const config = {
    'redis.clusterNodes': [...cluster.seeds], 'cluster.partitions': 12,
    'cluster.nodeTtl': `${nodeTtlMs}ms`, 'cluster.heartbeat': '250ms', 'cluster.leaseTtl': '1500ms',
  };
  const prefix = uniquePrefix('fpm');
  const a = await startTestNode('', prefix, config);
  const b = await startTestNode('', prefix, config);
  nodes.push(a, b);
  await waitFor(() => a.node.membership.liveIds().length === 2 && b.node.membership.liveIds().length === 2,
    { timeoutMs: 15_000, description: 'both nodes live' });
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
