import { Cluster } from 'ioredis';
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';

describe('startRedisCluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('reaches cluster_state:ok with 3 masters covering every slot', async () => {
    expect(cluster.nodes).toHaveLength(3);
    expect(cluster.seeds).toEqual(cluster.nodes.map((n) => `127.0.0.1:${n.port}`));
    for (const node of cluster.nodes) {
      const info = String(await sendCommand(node.port, ['CLUSTER', 'INFO']));
      expect(info).toContain('cluster_state:ok');
      expect(info).toContain('cluster_slots_assigned:16384');
      expect(info).toContain('cluster_known_nodes:3');
    }
  });

  it('serves keys of two slots on different primaries, and a multi-key script within one hash tag', async () => {
    const port = cluster.nodes[0]!.port;
    const [slotA, slotB] = [await sendCommand(port, ['CLUSTER', 'KEYSLOT', 'zd:{1}:x']), await sendCommand(port, ['CLUSTER', 'KEYSLOT', 'zd:{2}:x'])];
    expect(slotA).not.toBe(slotB);

    // A key that one node does not own gets MOVED: the slots really are spread.
    const owners = new Set<string>();
    for (let p = 0; p < 16; p++) {
      const replies = await Promise.all(cluster.nodes.map((n) => sendCommand(n.port, ['GET', `zd:{${p}}:probe`])));
      const owner = replies.findIndex((r) => !(r instanceof Error));
      expect(owner).toBeGreaterThanOrEqual(0);
      owners.add(String(owner));
    }
    expect(owners.size).toBeGreaterThan(1);

    const client = new Cluster(cluster.seeds.map((s) => ({ host: s.split(':')[0]!, port: Number(s.split(':')[1]) })), {
      lazyConnect: true,
    });
    try {
      await client.connect();
      await client.set('zd:{1}:a', 'one');
      await client.set('zd:{2}:a', 'two');
      expect(await client.get('zd:{1}:a')).toBe('one');
      expect(await client.get('zd:{2}:a')).toBe('two');
      // All keys of a partition share its hash tag, so a script may touch them together.
      const n = await client.eval("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])", 2, 'zd:{2}:b', 'zd:{2}:c', 'v');
      expect(n).toBe(1);
      await expect(client.eval("return redis.call('GET', KEYS[1])", 2, 'zd:{1}:a', 'zd:{2}:a')).rejects.toThrow(/CROSSSLOT/);
    } finally {
      client.disconnect();
    }
  });
});
