/**
 * redis.natMap behind Sentinel: the primary a real Sentinel names is dialled at
 * the address the map gives for it (here a TCP proxy, standing for the address a
 * node behind NAT reaches it at), and the node loses Redis when that refuses.
 */
import { ClientError, Status } from 'nice-grpc';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

const redis = useEmbeddedRedis();
let sentinel: TestSentinel | undefined;
let proxy: TcpProxy | undefined;
let t: TestNode | undefined;
afterAll(async () => {
  await t?.close();
  sentinel?.stop();
  await proxy?.close();
});

const step = (flow: string) => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 's', step_execution_id: '1' });

it('dials the primary Sentinel names at the address redis.natMap maps it to', async () => {
  sentinel = await startSentinel(redis.port, { downAfterMs: 5000 });
  proxy = await tcpProxy(redis.port);
  t = await startTestNode('', uniquePrefix('sen-nat'), { ...sentinel.nodeConfig, 'redis.natMap': [`127.0.0.1:${redis.port}=127.0.0.1:${proxy.port}`] });
  expect((await t.matching.enqueueStep({ step: step('f1') })).created).toBe(true);
  expect(proxy.accepted).toBeGreaterThan(0);

  proxy.refuse();
  const err = await t.matching.enqueueStep({ step: step('f2') }, { signal: AbortSignal.timeout(20_000) }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
  expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);
  proxy.resume();
}, 60_000);
