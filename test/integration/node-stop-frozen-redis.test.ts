/**
 * A node stopped while its Redis does not answer at all (frozen, DEBUG SLEEP,
 * a network that black-holes it): no reply and no closed connection. The stop
 * gives each Redis step a bound (leases within leaseTtl, the member entry
 * within a second, QUIT within a second) and ends; it waited on the member
 * entry's removal for good, and a CLI node was forced out past drain.timeout
 * with its servers never shut. A real redis-server behind a TCP proxy that
 * freezes.
 */
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let proxy: TcpProxy | undefined;
let t: TestNode | undefined;
afterEach(async () => {
  proxy?.resume();
  proxy?.cut();
  await t?.close();
  await proxy?.close();
});

it('stops within its bounds while Redis answers nothing', async () => {
  proxy = await tcpProxy(redis.port);
  t = await startTestNode(`redis://127.0.0.1:${proxy.port}`, uniquePrefix('frozen-stop'));
  const node = t;
  await waitFor(() => node.node.owner.owned().length === node.config.cluster.partitions, { description: 'every partition owned' });
  proxy.freeze();
  const since = Date.now();
  // leaseTtl (1.5 s) + a second each for the member entry and QUIT, and the servers' own: about 3.5 s.
  const stopped = await Promise.race([
    node.close().then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), 15_000).unref()),
  ]);
  expect({ stopped, state: node.node.state }).toEqual({ stopped: true, state: 'stopped' });
  expect(Date.now() - since).toBeLessThan(15_000);
}, 30_000);
