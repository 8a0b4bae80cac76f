/**
 * A node started while its Redis Cluster is down — a primary gone and no
 * replica of it taken over, so every node of the Cluster answers CLUSTERDOWN
 * and reports cluster_state:fail — fails at once with one line that says so,
 * not ioredis's "Reached the max retries per request limit"; once the
 * primary is back, a node starts. A real 3-primary Redis Cluster without
 * replicas, one primary stopped (SIGSTOP) until the others mark it failed.
 */
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { startNodeProcess } from '../helpers/node-process';
import { uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

let cluster: RedisCluster;
let stopped = false;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, args: ['--cluster-node-timeout', '1000'] });
}, 60_000);
afterAll(async () => {
  if (stopped) cluster.nodes[2]!.kill('SIGCONT');
  await cluster?.stop();
});

const state = async () => /cluster_state:(\w+)/.exec(String(await sendCommand(cluster.nodes[0]!.port, ['CLUSTER', 'INFO'])))?.[1];

it('fails at start naming the Cluster\'s state while a primary is down, and starts once it is back', async () => {
  cluster.nodes[2]!.kill('SIGSTOP');
  stopped = true;
  await waitFor(async () => (await state()) === 'fail', { timeoutMs: 15_000, description: 'cluster_state:fail' });

  const config = { redis: { clusterNodes: [...cluster.seeds] } };
  const failed = await startNodeProcess({ keyPrefix: uniquePrefix('cds'), config }).then(
    () => { throw new Error('the node started on a Cluster that is down'); }, (err: Error) => err.message);
  expect(failed).toMatch(/exited \(1\) before it was ready/);
  expect(failed).toContain('redis: the Redis Cluster at');
  expect(failed).toContain('reports cluster_state:fail');
  expect(failed).not.toMatch(/max retries per request/);

  cluster.nodes[2]!.kill('SIGCONT');
  stopped = false;
  await waitFor(async () => (await state()) === 'ok', { timeoutMs: 15_000, description: 'cluster_state:ok' });
  const node = await startNodeProcess({ keyPrefix: uniquePrefix('cds'), config });
  expect(await node.stop()).toBe(0);
}, 60_000);
