/**
 * `zdmatch bench` against a running cluster whose Redis is a Redis Cluster:
 * --redis-url names any one of its nodes, and the report reads every primary
 * (each one's CPU and commands, and their sums) and the outcome streams
 * through the Cluster, as a --local --redis-cluster run does.
 */
import { execFile } from 'node:child_process';
import { startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';

let cluster: RedisCluster;
let t: TestNode | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await cluster?.stop();
});

function bench(args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI_MAIN, 'bench', ...args], { cwd: REPO_ROOT, timeout: timeoutMs },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout, stderr })));
  });
}

it('reports each primary and the outcome latencies when --redis-url names one node of a Redis Cluster', async () => {
  const prefix = uniquePrefix('bench');
  t = await startTestNode('', prefix, { 'redis.clusterNodes': [...cluster.seeds] });
  const { stdout } = await bench([
    '--address', t.node.apiAddress, '--redis-url', `redis://${cluster.seeds[1]}`, '--key-prefix', prefix,
    '--mode', 'throughput', '--tasks', '300', '--warmup', '50', '--json', '--no-progress',
  ], 40_000);
  const r = JSON.parse(stdout.trim().split('\n').pop()!);
  expect(r).toMatchObject({ completed: 300, timedOut: false, config: { redisPrimaries: 3 } });
  expect(r.latencyMs.enqueueToOutcome.n).toBeGreaterThan(0);
  expect(r.redis.perPrimary.map((p: { address: string }) => p.address).sort()).toEqual([...cluster.seeds].sort());
  // Every primary served some of the run (its partitions' scripts): none reads as idle.
  for (const p of r.redis.perPrimary) expect(p.scriptCallsPerTask).toBeGreaterThan(0);
  const sum = r.redis.perPrimary.reduce((s: number, p: { commandsPerTask: number }) => s + p.commandsPerTask, 0);
  expect(r.redis.commandsPerTask).toBeCloseTo(sum, 1);
}, 60_000);
