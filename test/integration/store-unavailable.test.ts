/**
 * Calls that fail because Redis cannot be reached (refused connections, a
 * primary mid-failover, a slot mid-migration past the retries) answer
 * UNAVAILABLE with ZD_STORE_UNAVAILABLE, which clients retry, not INTERNAL,
 * which says the node is broken: on gRPC and on HTTP. A node stopped then
 * still stops. A real node whose redis-server sits behind a TCP proxy that is
 * shut for the test.
 */
import { ClientError, Status } from 'nice-grpc';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

const redis = useEmbeddedRedis();
let proxy: TcpProxy;
let t: TestNode;

beforeEach(async () => {
  proxy = await tcpProxy(redis.port);
  t = await startTestNode(`redis://127.0.0.1:${proxy.port}`, uniquePrefix('unavail'));
});
afterEach(async () => {
  await t.close().catch(() => undefined);
  await proxy.close().catch(() => undefined);
});

const step = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' };

it('answers an enqueue UNAVAILABLE (ZD_STORE_UNAVAILABLE) while Redis refuses connections', async () => {
  await proxy.close();
  const err = await t.matching.enqueueStep({ step }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
  expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);
}, 30_000);

it('answers an HTTP fetch 503 (ZD_STORE_UNAVAILABLE) while Redis refuses connections', async () => {
  await proxy.close();
  const res = await fetch(`http://${t.node.httpAddress}/v1/external-tasks/fetch-and-lock`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workerId: 'w', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 }),
  });
  expect(res.status).toBe(503);
  expect(await res.json()).toMatchObject({ code: 'ZD_STORE_UNAVAILABLE' });
}, 30_000);

it('stops within its drain bounds while Redis refuses connections', async () => {
  await proxy.close();
  const since = Date.now();
  await t.close();
  // leases given back within leaseTtl (1.5 s here), QUIT given up after 1 s
  expect(Date.now() - since).toBeLessThan(6000);
}, 30_000);
