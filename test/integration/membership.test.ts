/**
 * The live member list a node reads from Redis at each heartbeat: sorted, and
 * the same array while the members stay the same (routing remembers partition
 * owners by it), a new one the moment a member joins or leaves.
 */
import { Membership } from '../../src/cluster/membership';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { tcpProxy } from '../helpers/tcp-proxy';

const redis = useEmbeddedRedis();
let client: RedisClient;
afterEach(() => client?.disconnect());

it('keeps one array per member list, and a new one when a member joins or its heartbeat stops', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('members'));
  const member = (nodeId: string, nodeTtlMs: number) =>
    new Membership(client, keys, { nodeId, bootId: 'b1', address: `${nodeId}:1`, heartbeatMs: 60_000, nodeTtlMs }, systemClock, silentLogger);
  const self = member('n2', 400);
  const other = member('n1', 400);
  await self.beat();
  const alone = self.liveIds();
  expect(alone).toEqual(['n2']);
  await self.beat();
  expect(self.liveIds()).toBe(alone); // nothing changed: the same array

  await other.beat();
  await self.beat();
  const both = self.liveIds();
  expect(both).toEqual(['n1', 'n2']); // sorted
  expect(both).not.toBe(alone);
  await self.beat();
  expect(self.liveIds()).toBe(both);

  // n1 stops beating: past nodeTtl it is no longer live.
  await new Promise((r) => setTimeout(r, 500));
  await self.beat();
  expect(self.liveIds()).toEqual(['n2']);
  expect(self.liveIds()).not.toBe(both);
  self.stop();
  other.stop();
});

it('writes no heartbeat once it has left: a late read of the members (an offer, an RPC, a link that ended) does not bring a leaving node back', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('members-left'));
  const self = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 60_000, nodeTtlMs: 10_000 }, systemClock, silentLogger);
  await self.beat();
  expect(await client.zscore(keys.members(), 'n1')).not.toBeNull();
  await self.leave();
  expect(await client.zscore(keys.members(), 'n1')).toBeNull();
  await self.beat();
  expect(await client.zscore(keys.members(), 'n1')).toBeNull();
});

it('a heartbeat in flight when the node leaves writes nothing after the removal', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('members-leaving'));
  const self = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 60_000, nodeTtlMs: 10_000 }, systemClock, silentLogger);
  await self.beat();
  // The beat's TIME read is on the wire when leave() sends its ZREM; the beat's writes would follow it.
  const inFlight = self.beat();
  await self.leave();
  await inFlight;
  expect(await client.zscore(keys.members(), 'n1')).toBeNull();
  expect(self.liveIds()).toEqual(['n1']); // the last read before leaving stands: nothing new was read
});

it('a removal that lands after a new boot of the same node id has heartbeaten leaves the new boot in the members', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const proxy = await tcpProxy(redis.port);
  const oldClient = createRedis({ url: `redis://127.0.0.1:${proxy.port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  try {
    const keys = new Keys(uniquePrefix('members-reboot'));
    const opts = { nodeId: 'n1', address: 'n1:1', heartbeatMs: 60_000, nodeTtlMs: 10_000 };
    const oldBoot = new Membership(oldClient, keys, { ...opts, bootId: 'b1' }, systemClock, silentLogger);
    await oldBoot.beat();
    // Redis stops hearing the old boot: its leave gives up after its bound, the removal still on the wire.
    proxy.pause();
    await oldBoot.leave();
    const newBoot = new Membership(client, keys, { ...opts, bootId: 'b2' }, systemClock, silentLogger);
    await newBoot.beat();
    const newScore = await client.zscore(keys.members(), 'n1');
    expect(newScore).not.toBeNull();
    proxy.resume();
    await oldClient.ping(); // answered after the removal: it has landed
    expect(await client.zscore(keys.members(), 'n1')).toBe(newScore);
    newBoot.stop();
  } finally {
    oldClient.disconnect();
    await proxy.close();
  }
});

it('leave removes the entry its own last heartbeat wrote', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('members-own'));
  const self = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 60_000, nodeTtlMs: 10_000 }, systemClock, silentLogger);
  await self.beat();
  await self.beat();
  await self.leave();
  expect(await client.zscore(keys.members(), 'n1')).toBeNull();
});

it('heartbeats the members every cluster.heartbeat once started, so it stays live past nodeTtl, and its entry names its address', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('beats'));
  const node = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: '10.0.0.1:8803', heartbeatMs: 50, nodeTtlMs: 600 }, systemClock, silentLogger);
  const watcher = new Membership(client, keys, { nodeId: 'w', bootId: 'b1', address: 'w:1', heartbeatMs: 60_000, nodeTtlMs: 600 }, systemClock, silentLogger);
  try {
    await node.start();
    const first = Number(await client.zscore(keys.members(), 'n1'));
    await new Promise((r) => setTimeout(r, 150));
    expect(Number(await client.zscore(keys.members(), 'n1'))).toBeGreaterThan(first); // beaten again within a few heartbeats
    await new Promise((r) => setTimeout(r, 500)); // past nodeTtl (600 ms) since start
    await watcher.beat();
    expect(watcher.liveIds()).toContain('n1');
    expect(watcher.get('n1')?.address).toBe('10.0.0.1:8803');
    expect(await client.hget(keys.node('n1'), 'address')).toBe('10.0.0.1:8803');
  } finally {
    node.stop();
    watcher.stop();
  }
});

it('keeps a node key no longer than six nodeTtl after the last heartbeat, and a member entry older than that is forgotten', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('members-ttl'));
  const nodeTtlMs = 400;
  const self = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 60_000, nodeTtlMs }, systemClock, silentLogger);
  // A node long dead (its key gone with its TTL): its entry goes at the next heartbeat of any member.
  await client.zadd(keys.members(), Date.now() - nodeTtlMs * 7, 'n0');
  await self.beat();
  // Node ids of every boot come and go (a generated id per boot): their keys must not outlive them for hours.
  const ttl = await client.pttl(keys.node('n1'));
  expect(ttl).toBeGreaterThan(nodeTtlMs * 5);
  expect(ttl).toBeLessThanOrEqual(nodeTtlMs * 6);
  expect(await client.zscore(keys.members(), 'n0')).toBeNull();
  expect(await client.zscore(keys.members(), 'n1')).not.toBeNull();
  self.stop();
});
