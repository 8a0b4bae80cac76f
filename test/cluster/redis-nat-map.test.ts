/**
 * redis.natMap on a real 3-primary Redis Cluster: each primary also has a TCP
 * proxy of its own, standing for the address a node behind NAT reaches it at.
 * Given the map from each announced address to its proxy, the node runs a Step
 * through the proxies, and loses Redis when they all refuse; without the map,
 * its traffic goes to the announced addresses, and refusing proxies is nothing to it.
 */
import { ClientError, Status } from 'nice-grpc';
import { completeOneStep, startTestNode, type TestNode } from '../helpers/node';
import { useRedisCluster } from '../helpers/redis-cluster';
import { uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

let t: TestNode | undefined;
const redis = useRedisCluster(() => t?.close());
let proxies: TcpProxy[] = [];

beforeAll(async () => {
  proxies = await Promise.all(redis.cluster.nodes.map((n) => tcpProxy(n.port)));
});
afterEach(async () => {
  for (const p of proxies) p.resume();
  await t?.close();
  t = undefined;
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
});

const step = (flow: string) => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's' });


it('reaches every primary through the address redis.natMap maps its announced one to, and loses Redis when those refuse', async () => {
  const natMap = redis.cluster.nodes.map((n, i) => `127.0.0.1:${n.port}=127.0.0.1:${proxies[i]!.port}`);
  const before = proxies.map((p) => p.accepted);
  t = await startTestNode('', uniquePrefix('nat'), { 'redis.clusterNodes': [...redis.cluster.seeds], 'redis.natMap': natMap });
  await completeOneStep(t, 'f1');
  // The node's 8 partitions have keys on all three primaries: each was dialled at its proxy.
  expect(proxies.map((p, i) => p.accepted - before[i]!).every((n) => n > 0)).toBe(true);

  for (const p of proxies) p.refuse();
  const err = await t.matching.enqueueStep({ step: step('f2') }, { signal: AbortSignal.timeout(20_000) }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
  expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);

  // The way back is the proxies again.
  for (const p of proxies) p.resume();
  const node = t;
  await waitFor(() => node.matching.enqueueStep({ step: step('f3') }).then((r) => r.created), { timeoutMs: 20_000, intervalMs: 200, description: 'an enqueue once the proxies forward again' });
}, 60_000);

it('without redis.natMap dials the announced addresses: proxies that refuse are nothing to it', async () => {
  const before = proxies.map((p) => p.accepted);
  for (const p of proxies) p.refuse();
  t = await startTestNode('', uniquePrefix('direct'), { 'redis.clusterNodes': [...redis.cluster.seeds] });
  await completeOneStep(t, 'g1');
  expect(proxies.map((p, i) => p.accepted - before[i]!)).toEqual([0, 0, 0]);
}, 60_000);
