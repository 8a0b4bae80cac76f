/**
 * A node listening on wildcard addresses reports addresses a client and its peers
 * can dial (127.0.0.1 and the bound port, not 0.0.0.0 or port 0), and says the
 * internal one to its peers through the member list.
 */
import { startTestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';

const redis = useEmbeddedRedis();

it('reports dialable addresses for wildcard listens, and gives peers its internal one', async () => {
  const t = await startTestNode(redis.url, uniquePrefix('addr'), {
    'api.listen': '0.0.0.0:0', 'internal.listen': '0.0.0.0:0', 'metrics.listen': '0.0.0.0:0',
  });
  try {
    const n = t.node;
    expect(n.apiAddress).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect(n.internalAddress).toBe(`127.0.0.1:${n.internalPort}`);
    expect(n.internalPort).toBeGreaterThan(0);
    expect(n.membership.get(n.nodeId)?.address).toBe(n.internalAddress);
    expect(n.metricsAddress).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
  } finally {
    await t.close();
  }
});
