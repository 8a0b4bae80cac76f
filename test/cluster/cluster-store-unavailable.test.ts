/**
 * A Redis Cluster whose primaries go away while a node runs: calls answer
 * UNAVAILABLE with ZD_STORE_UNAVAILABLE, which clients retry, as they do on a
 * single Redis that refuses connections — not INTERNAL once ioredis gives up
 * following the cluster (its "Too many Cluster redirections"), and not held
 * until the caller's deadline while no primary answers. A real 3-primary
 * Redis Cluster without replicas, its primaries stopped one by one.
 */
import { ClientError, Status } from 'nice-grpc';
import { startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { partitionOf } from '../../src/store/keys';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { servesKey } from '../helpers/cluster-slots';

let cluster: RedisCluster;
let t: TestNode | undefined;

beforeAll(async () => {
  // With full coverage required (Redis's default) the other primaries answer CLUSTERDOWN
  // for every key once they agree a primary failed, cluster-node-timeout (5 s) after it
  // stopped: "serves the others" would hold only for as long as the first enqueue took
  // to fail, which a loaded machine stretched past 5 s. Without it, they go on serving
  // their own slots, as a Cluster set up to ride out the loss of a primary does.
  cluster = await startRedisCluster({ masters: 3, args: ['--cluster-require-full-coverage', 'no'] });
}, 90_000);
afterAll(async () => {
  await t?.close().catch(() => undefined);
  await cluster?.stop();
});

const step = (flow: string) => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's' });

it('answers an enqueue UNAVAILABLE (ZD_STORE_UNAVAILABLE) when the primary of its partition is down, and serves the others', async () => {
  t = await startTestNode('', uniquePrefix('csu'), { 'redis.clusterNodes': [...cluster.seeds] });
  const node = t.node;
  // The primary that serves the node's members and meta keys stays up: the victim holds only partitions.
  let victim: number | undefined;
  for (const n of cluster.nodes) {
    if (!(await servesKey(n.port, node.keys.members())) && !(await servesKey(n.port, node.keys.meta()))) victim = n.port;
  }
  expect(victim).toBeDefined();
  const flows = { down: '', up: '' };
  for (let i = 0; !flows.down || !flows.up; i++) {
    const flow = `f${i}`;
    const onVictim = await servesKey(victim!, `${node.keys.tag(partitionOf('acme', flow, t.config.cluster.partitions))}probe`);
    if (onVictim) flows.down ||= flow;
    else flows.up ||= flow;
  }
  await cluster.nodes.find((n) => n.port === victim)!.stop();

  const err = await t.matching.enqueueStep({ step: step(flows.down) }, { signal: AbortSignal.timeout(30_000) }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
  expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);
  expect((await t.matching.enqueueStep({ step: step(flows.up) })).created).toBe(true);
}, 60_000);

// Last two: every primary stopped.
it('answers an enqueue UNAVAILABLE (ZD_STORE_UNAVAILABLE) within seconds while no primary answers', async () => {
  await Promise.all(cluster.nodes.map((n) => n.stop()));
  const since = Date.now();
  const err = await t!.matching.enqueueStep({ step: step('g1') }, { signal: AbortSignal.timeout(20_000) }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
  expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);
  expect(Date.now() - since).toBeLessThan(10_000);
}, 60_000);

it('stops within its drain bounds while no primary answers', async () => {
  const since = Date.now();
  await t!.close();
  t = undefined;
  // leases given back within leaseTtl (1.5 s here), QUIT given up after 1 s
  expect(Date.now() - since).toBeLessThan(6000);
}, 60_000);
