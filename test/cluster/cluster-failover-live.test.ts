/**
 * Redis Cluster failovers while Steps flow (DESIGN §11.1, §11.3): two nodes on
 * a real 3-primary Cluster, producers enqueueing, worker slots and a fetch
 * worker completing, an engine consuming outcomes — and meanwhile a graceful
 * CLUSTER FAILOVER of one primary and a FORCE failover of another, each run on
 * its replica. Every acknowledged enqueue gets exactly one outcome, callers see
 * only retryable ZD_STORE_UNAVAILABLE (never INTERNAL), and every partition is
 * leased again afterwards.
 *
 * Replication is asynchronous: a FORCE failover of a primary that still runs
 * drops what it acknowledged after its replica took over (DESIGN §11.1: "given
 * Redis's own durability settings"). So the nodes WAIT for one replica after each
 * enqueue (redis.waitReplicas: 1, every primary has a replica), and a completion
 * lost so leaves its attempt running with no slot holding it: the attempt audit,
 * run here for two looks rather than waited for a minute at a time, retries it.
 */
import { Cluster } from 'ioredis';
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { everyPartitionLeased, expectOneOutcomeEach, startLoad } from '../helpers/cluster-load';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

let cluster: RedisCluster;
const nodes: TestNode[] = [];
let admin: Cluster | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicaOf: [0, 1, 2] });
}, 90_000);
afterAll(async () => {
  admin?.disconnect();
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
  await cluster?.stop();
});

async function promoted(port: number): Promise<void> {
  await waitFor(async () => /role:master/.test(String(await sendCommand(port, ['INFO', 'replication']))), {
    timeoutMs: 20_000, description: `the replica on ${port} taking over`,
  });
}

it('keeps every acknowledged Step, one outcome each, through a graceful and a forced CLUSTER FAILOVER under load', async () => {
  const prefix = uniquePrefix('cfl');
  const overrides = { 'redis.clusterNodes': [...cluster.seeds], 'cluster.partitions': 12, 'redis.waitReplicas': 1 };
  nodes.push(await startTestNode('', prefix, overrides), await startTestNode('', prefix, overrides));
  const partitions = 12;

  const TOTAL = 240;
  const load = startLoad(nodes, TOTAL);
  const { acked } = load;

  // A graceful failover of primary 0 once Steps flow, then a forced one of primary 1.
  await waitFor(() => acked.size >= 40, { timeoutMs: 20_000, description: 'Steps flowing before the failover' });
  expect(await sendCommand(cluster.replicas[0]!.port, ['CLUSTER', 'FAILOVER'])).toBe('OK');
  await promoted(cluster.replicas[0]!.port);
  await waitFor(() => acked.size >= 120, { timeoutMs: 30_000, description: 'Steps flowing after the graceful failover' });
  expect(await sendCommand(cluster.replicas[1]!.port, ['CLUSTER', 'FAILOVER', 'FORCE'])).toBe('OK');
  await promoted(cluster.replicas[1]!.port);

  await load.finish(40_000, { audit: true });

  expect(acked.size).toBe(TOTAL);
  expectOneOutcomeEach(load);

  // Both failovers moved partitions of this cluster: each promoted replica serves some now.
  for (const replica of cluster.replicas.slice(0, 2)) {
    const served = await Promise.all(Array.from({ length: partitions }, async (_, p) =>
      !((await sendCommand(replica.port, ['GET', `${nodes[0]!.node.keys.tag(p)}probe`])) instanceof Error)));
    expect(served.filter(Boolean).length).toBeGreaterThan(0);
  }

  // Every partition is leased again, by one of the two nodes.
  admin = new Cluster(cluster.seeds.map((s) => ({ host: '127.0.0.1', port: Number(s.split(':')[1]) })));
  await everyPartitionLeased(nodes, partitions, (key) => admin!.get(key));
}, 120_000);
