/**
 * A Worker whose connection reaches a node that drains and refuses new streams
 * with ZD_DRAINING, without a Reconnect frame having told it so (it connected,
 * or redialled, after the drain began). Behind a connection balancer the node
 * is out of rotation, but the Worker's streams go over the connection it has:
 * they must go over a new one, which the balancer sends to another node.
 */
import { Worker } from '../../src';
import { drainHeldOpen, startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger } from '../helpers/sdk';
import { tcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch {
      /* keep closing the rest */
    }
  }
});

async function node(prefix: string, overrides: Record<string, unknown> = {}): Promise<TestNode> {
  const t = await startTestNode(redis.url, prefix, overrides);
  cleanups.push(() => t.close());
  return t;
}

const port = (t: TestNode) => Number(t.node.apiAddress.slice(t.node.apiAddress.lastIndexOf(':') + 1));

it('takes its slots to another node when the node its connection reached refuses them as draining', async () => {
  const prefix = uniquePrefix('drainref');
  const a = await node(prefix, { 'drain.timeout': '20s' });
  const b = await node(prefix);
  const balancer = await tcpProxy(port(a));
  cleanups.push(() => balancer.close());
  const { slot } = await drainHeldOpen(a);
  cleanups.push(() => slot.reset());

  const logger = recordingLogger();
  const w = new Worker({
    address: `127.0.0.1:${balancer.port}`, tenant: 'acme', flowTypes: { invoice: { steps: { send: () => 'sent' } } },
    maxConcurrentTasks: 1, reservedRpcTasks: 0, logger, reconnectBackoff: { initialMs: 50, maxMs: 200 },
  });
  cleanups.push(() => w.stop());
  void w.start().catch(() => {});
  await waitFor(() => logger.lines.some((l) => /ZD_DRAINING/.test(String(l.fields?.error))), { description: 'a refusal by the draining node' });

  // The balancer takes the draining node out of rotation: new connections go to b.
  balancer.retarget(port(b));
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  expect(b.node.gateway.streamCount).toBe(1);
  expect(a.node.state).toBe('draining');
}, 30_000);
