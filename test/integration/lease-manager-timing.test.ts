/**
 * The lease manager's periods (DESIGN §3) on a real redis-server: a held lease
 * is renewed every third of leaseTtl, so Redis never shows it with less than
 * two thirds of its TTL left (give or take a round trip); a partition given up
 * and wanted back while its release waited on the unload is acquired as soon as
 * the release ends, not at the next retry; and a lease whose renewals Redis
 * refuses at once with an error (here: the node's ACL user lost the right to
 * run scripts) lapses a leaseTtl after the last renewal Redis confirmed, as
 * one whose renewals go unanswered does.
 */
import { LeaseManager, type HeldLease, type UnloadCause } from '../../src/cluster/leases';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { createLogger } from '../../src/util/logger';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'lease-timing');
const log = createLogger('silent');

let m: LeaseManager | undefined;
let client: RedisClient | undefined;
afterEach(async () => {
  m?.stop();
  client?.disconnect();
  client = undefined;
});

it('renews a held lease every third of its TTL: Redis never shows it with much less than two thirds left', async () => {
  const ttl = 3000;
  m = new LeaseManager(fx.client, fx.keys, 'a', ttl, log);
  m.start();
  await m.setTargets(new Set([2]));
  expect(m.holds(2)).toBeDefined();
  let least = Infinity;
  const until = Date.now() + ttl;
  while (Date.now() < until) {
    least = Math.min(least, Number(await fx.client.pttl(fx.keys.lease(2))));
    await sleep(10);
  }
  // renewed every 1000 ms: about 2000 ms left at the least; renewed every half TTL, about 1500
  expect(least).toBeGreaterThan(ttl - ttl / 3 - 250);
  expect(m.holds(2)?.epoch).toBe(1);
}, 15_000);

it('acquires a partition wanted back while its release waited on the unload as soon as the release ends', async () => {
  m = new LeaseManager(fx.client, fx.keys, 'a', 3000, log);
  let unloading = false;
  m.on('unload', async () => {
    unloading = true;
    await sleep(100);
    unloading = false;
  });
  m.start();
  await m.setTargets(new Set([5]));
  const first = m.holds(5)!;
  const given = m.setTargets(new Set());
  expect(unloading).toBe(true);
  // wanted back while the release still waits: not acquired before it ends
  await m.setTargets(new Set([5]));
  expect(m.holds(5)).toBeUndefined();
  await given;
  const releasedAt = Date.now();
  await waitFor(() => m!.holds(5) !== undefined, { timeoutMs: 2000, intervalMs: 5, description: 'partition 5 held again' });
  // at once, not at the next retry (up to 500 ms later)
  expect(Date.now() - releasedAt).toBeLessThan(200);
  expect(m.holds(5)!.epoch).toBe(first.epoch + 1);
});

it('unloads as lost a lease whose renewals Redis refuses with an error, a leaseTtl after the last confirmed one', async () => {
  const ttl = 1500;
  await redis.command('ACL', 'SETUSER', 'lease-node', 'on', '>secret', '~*', '&*', '+@all');
  client = createRedis({ url: `redis://lease-node:secret@127.0.0.1:${redis.port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  m = new LeaseManager(client, fx.keys, 'a', ttl, log);
  const unloads: [number, UnloadCause][] = [];
  m.on('unload', (l: HeldLease, cause: UnloadCause) => void unloads.push([l.partition, cause]));
  m.start();
  await m.setTargets(new Set([7]));
  expect(m.holds(7)).toBeDefined();
  // From now on every script call of this node is refused at once (NOPERM): its renewals fail,
  // and nothing it reads says whether the lease is still its own.
  await redis.command('ACL', 'SETUSER', 'lease-node', '-@scripting');
  const refusedAt = Date.now();
  await sleep(ttl - ttl / 3 - 200);
  expect(m.holds(7)).toBeDefined();
  await waitFor(() => unloads.length > 0, { timeoutMs: 2 * ttl, intervalMs: 10, description: 'lease 7 unloaded' });
  expect(unloads).toEqual([[7, 'lease-lost']]);
  expect(m.holds(7)).toBeUndefined();
  // found at the first refused renewal past that TTL: a renewal period later at most
  expect(Date.now() - refusedAt).toBeLessThanOrEqual(ttl + ttl / 3 + 200);
}, 20_000);
