/**
 * A lease whose renewals go unanswered (Redis frozen, or a network that
 * black-holes it) lapses on the node too, a whole leaseTtl after the last
 * renewal Redis confirmed (DESIGN §3): by then Redis may have let it run out
 * and another node may serve the partition, so this node stops serving it and
 * no longer counts it as owned. Once Redis answers again, the partition is
 * acquired anew. The node measures that TTL on a clock that only moves
 * forward: a wall clock set back does not stretch it. A real redis-server
 * behind a TCP proxy that can go silent.
 */
import { LeaseManager, type HeldLease, type UnloadCause } from '../../src/cluster/leases';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { createLogger } from '../../src/util/logger';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const TTL = 900;
const log = createLogger('silent');

let proxy: TcpProxy;
let client: RedisClient;
let m: LeaseManager;

afterEach(async () => {
  jest.restoreAllMocks();
  m?.stop();
  proxy?.resume();
  client?.disconnect();
  await proxy?.close();
});

async function holdingPartitions(partitions: number[], ttl = TTL) {
  proxy = await tcpProxy(redis.port);
  client = createRedis({ url: `redis://127.0.0.1:${proxy.port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('lapse'));
  m = new LeaseManager(client, keys, 'a', ttl, log);
  const unloads: [number, UnloadCause][] = [];
  m.on('unload', (l: HeldLease, cause: UnloadCause) => void unloads.push([l.partition, cause]));
  m.start();
  await m.setTargets(new Set(partitions));
  expect(m.heldPartitions()).toHaveLength(partitions.length);
  return { keys, unloads };
}

it('unloads the leases as lost a leaseTtl after Redis stopped answering their renewals, and acquires them again once it answers', async () => {
  const { keys, unloads } = await holdingPartitions([0, 1]);
  // Redis's answers still flow: the answer to the renewal just seen reaches the node (black-holed,
  // it could be lost, and the node rightly count from the renewal before).
  proxy.pause();
  const silentAt = Date.now();
  await waitFor(() => m.heldPartitions().length === 0, { timeoutMs: 3 * TTL, description: 'the leases lapsed on the node' });
  // Not before a whole TTL from the last renewal Redis confirmed (at most a third of a TTL before the silence).
  expect(Date.now() - silentAt).toBeGreaterThanOrEqual((2 * TTL) / 3 - 50);
  expect(unloads.sort()).toEqual([[0, 'lease-lost'], [1, 'lease-lost']]);

  proxy.resume();
  await waitFor(() => m.heldPartitions().length === 2, { timeoutMs: 10_000, description: 'the partitions acquired again' });
  const tokens = await Promise.all([0, 1].map((p) => redis.command('GET', keys.lease(p))));
  expect(tokens.map(String).every((t) => t.startsWith('a:'))).toBe(true);
}, 20_000);

it('unloads the leases a leaseTtl after Redis stopped answering though the wall clock was set back meanwhile', async () => {
  const { unloads } = await holdingPartitions([0]);
  proxy.blackhole();
  // An NTP correction steps the wall clock back a minute: the lease still runs out in Redis a TTL on.
  const wall = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => wall() - 60_000);
  await waitFor(() => m.heldPartitions().length === 0, { timeoutMs: 3 * TTL, description: 'the lease lapsed on the node' });
  expect(unloads).toEqual([[0, 'lease-lost']]);
});

it('keeps a lease whose renewals are answered, however many renewal periods pass', async () => {
  const { unloads } = await holdingPartitions([0]);
  await new Promise((r) => setTimeout(r, 3 * TTL));
  expect(m.holds(0)).toMatchObject({ epoch: 1 });
  expect(unloads).toEqual([]);
});

it('counts the leaseTtl from the last renewal Redis answered, not from the acquire', async () => {
  // Guards the renewal's confirmation: counted from the acquire, a lease held longer than a TTL
  // lapsed on the node at the first pass that found a renewal unanswered (one slow reply of Redis),
  // a renewal period early.
  const ttl = 3000;
  const { keys, unloads } = await holdingPartitions([0], ttl);
  await new Promise((r) => setTimeout(r, 1.1 * ttl)); // renewed and answered all along
  expect(m.holds(0)).toMatchObject({ epoch: 1 });
  // Go silent just after a renewal landed: the lease then lapses on the node a whole TTL on.
  let last = Number(await redis.command('PTTL', keys.lease(0)));
  for (;;) {
    const pttl = Number(await redis.command('PTTL', keys.lease(0)));
    if (pttl > last) break;
    last = pttl;
  }
  // Redis's answers still flow: the answer to the renewal just seen reaches the node (black-holed,
  // it could be lost, and the node rightly count from the renewal before).
  proxy.pause();
  const silentAt = Date.now();
  await waitFor(() => m.heldPartitions().length === 0, { timeoutMs: 3 * ttl, description: 'the lease lapsed on the node' });
  // A third of a TTL early would be 2 s; the renewal seen landed a moment before the silence.
  expect(Date.now() - silentAt).toBeGreaterThanOrEqual((5 * ttl) / 6);
  expect(unloads).toEqual([[0, 'lease-lost']]);
}, 20_000);
