/**
 * Nodes on a private redis-server, some of them through a TCP proxy a test can
 * pause, freeze or cut (a connection held or dropped on the way). After each
 * test the proxy flows again, the nodes close, then the proxy.
 */
import { startTestNode, type TestNode } from './node';
import { useEmbeddedRedis, type TestRedis } from './redis';
import { tcpProxy, type TcpProxy } from './tcp-proxy';

export interface NodesBehindProxy {
  redis: TestRedis;
  /** The proxy of the current test, opened on first use. */
  proxy(): Promise<TcpProxy>;
  /** A node straight on the redis-server, or with `viaProxy` through the proxy; closed after the test. */
  start(prefix: string, config: Record<string, unknown>, viaProxy?: boolean): Promise<TestNode>;
}

export function useNodesBehindProxy(): NodesBehindProxy {
  const redis = useEmbeddedRedis();
  const nodes: TestNode[] = [];
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    proxy?.resume();
    for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
    await proxy?.close();
    proxy = undefined;
  });
  const ensureProxy = async () => (proxy ??= await tcpProxy(redis.port));
  return {
    redis,
    proxy: ensureProxy,
    async start(prefix, config, viaProxy = false) {
      const url = viaProxy ? `redis://127.0.0.1:${(await ensureProxy()).port}` : redis.url;
      const t = await startTestNode(url, prefix, config);
      nodes.push(t);
      return t;
    },
  };
}
