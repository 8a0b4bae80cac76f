/**
 * The primary of a Redis Cluster's member set frozen (SIGSTOP: its connections stay
 * open, nothing answers) until its replica takes over (DESIGN §3). Every node beats
 * on the promoted replica within seconds: the client's slot map used to be read
 * again only on a MOVED or an error, and a frozen primary answers neither, so a node
 * kept sending the member set's calls to it and never beat again (2 runs of 3).
 * The scores stay on Redis's clock too (heartbeat-slow-time.test.ts: a TIME held
 * through the failover put a node's clock 5 s ahead).
 */
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { startLivePair } from '../helpers/cluster-pair';
import type { TestNode } from '../helpers/node';
import { waitFor } from '../helpers/wait';
import { primaryIndexOf } from '../helpers/cluster-slots';

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

it('beats on the promoted replica with scores on its clock after the member set\'s primary froze', async () => {
  const nodeTtlMs = 3000;
  const [a, b] = await startLivePair(cluster, 'fmp', { nodeTtl: `${nodeTtlMs}ms`, heartbeat: '300ms' }, nodes);
  const membersAt = await primaryIndexOf(cluster, a.node.keys.members());
  expect(membersAt).toBeGreaterThanOrEqual(0);
  const replica = cluster.replicas[membersAt]!;

  cluster.nodes[membersAt]!.kill('SIGSTOP');
  await waitFor(async () => /role:master/.test(String(await sendCommand(replica.port, ['INFO', 'replication']))),
    { timeoutMs: 30_000, intervalMs: 200, description: 'the replica taking over' });

  // Each score against the promoted replica's clock, until both nodes have beaten there
  // a few times: at most a little ahead of it (a reading's round trip), never seconds.
  let ahead = -Infinity;
  let fresh = 0;
  const until = Date.now() + 30_000;
  while (fresh < 5 && Date.now() < until) {
    const [scores, time] = await Promise.all([
      sendCommand(replica.port, ['ZRANGE', a.node.keys.members(), '0', '-1', 'WITHSCORES']),
      sendCommand(replica.port, ['TIME']),
    ]);
    if (Array.isArray(scores) && Array.isArray(time)) {
      const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
      const got = (scores as string[]).filter((_, i) => i % 2 === 1).map((s) => Number(s) - now);
      ahead = Math.max(ahead, ...got);
      if (got.length === 2 && got.every((d) => d > -nodeTtlMs / 2)) fresh++;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(fresh).toBe(5);
  expect(ahead).toBeLessThan(500);
  // And each node sees the other live on the promoted replica.
  await waitFor(() => a.node.membership.liveIds().length === 2 && b.node.membership.liveIds().length === 2,
    { timeoutMs: 10_000, description: 'both nodes live again' });
}, 120_000);
