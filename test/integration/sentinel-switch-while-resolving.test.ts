/**
 * The primary killed, and Sentinel's +switch-master arriving while the node's
 * Redis clients ask the Sentinel for the primary (DESIGN §11.1): ioredis's
 * failover detector disconnected the connect under way, and the client ended for
 * good, so every later call answered ZD_STORE_UNAVAILABLE with no node restarted.
 * A real primary, replica and Sentinel; the node reaches the Sentinel through a
 * TCP proxy that holds the questions asked after the kill until the switch is out.
 */
import { Status } from 'nice-grpc';
import { sendCommand, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { startPrimaryAndReplica, startSentinel, type TestSentinel } from '../helpers/sentinel';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { sleep, waitFor } from '../helpers/wait';

const servers: EmbeddedRedis[] = [];
let sentinel: TestSentinel | undefined;
let proxy: TcpProxy | undefined;
let node: TestNode | undefined;

afterEach(async () => {
  await node?.close().catch(() => undefined);
  node = undefined;
  await proxy?.close();
  proxy = undefined;
  sentinel?.stop();
  sentinel = undefined;
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

it('serves again after a primary kill whose +switch-master came while it asked the Sentinel for the primary', async () => {
  const { primary, replica } = await startPrimaryAndReplica(servers);
  sentinel = await startSentinel(primary.port, { replicas: 1 });
  proxy = await tcpProxy(sentinel.port);
  node = await startTestNode('', uniquePrefix('switch-resolve'), {
    'redis.sentinels': [`127.0.0.1:${proxy.port}`], 'redis.sentinelName': 'mymaster', 'cluster.partitions': 8,
  });
  const step = (n: number) => ({ step: { tenant: 'acme', flow_id: `f${n}`, flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
  await node.matching.enqueueStep(step(0));

  // The failover detectors' subscriptions stay open; every question asked from now on waits at the proxy.
  proxy.holdNew();
  primary.kill('SIGKILL');
  await primary.exited();
  await waitFor(async () => {
    const a = await sendCommand(sentinel!.port, ['SENTINEL', 'get-master-addr-by-name', 'mymaster']).catch(() => null);
    return Array.isArray(a) && Number(a[1]) === replica.port;
  }, { timeoutMs: 20_000, intervalMs: 100, description: 'Sentinel to promote the replica' });
  await sleep(500); // the +switch-master reaches the detectors
  proxy.release();

  // The node serves again on the promoted primary, without a restart.
  let last: unknown;
  await waitFor(async () => {
    try {
      await node!.matching.enqueueStep(step(1));
      return true;
    } catch (err) {
      last = err;
      return false;
    }
  }, { timeoutMs: 15_000, intervalMs: 200, description: 'an enqueue acknowledged after the failover' });
  expect(last === undefined || (last as { code?: Status }).code === Status.UNAVAILABLE).toBe(true);
  expect(String(await sendCommand(replica.port, ['ROLE']).catch(() => ''))).toMatch(/^master/);
}, 60_000);
