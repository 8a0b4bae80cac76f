/**
 * A node whose renewal finds its partition lease taken (DESIGN §3: another
 * node's epoch now) unloads the partition at once: its heads and timers stop,
 * and it no longer counts the partition as owned. Once the lease is free
 * again it takes the partition back under a new epoch, with a fresh owner.
 * One node in this process, real gRPC and a real redis-server.
 */
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

/** Partition 0's owner here, once its heads and timers are loaded. */
function loadedOwner() {
  const owner = t.node.owner.get(0);
  return owner?.loaded ? owner : undefined;
}

it('unloads a partition whose lease another node took, and loads it anew under a new epoch once the lease is free', async () => {
  t = await startTestNode(redis.url, uniquePrefix('lease-lost'), { 'cluster.partitions': 1, 'cluster.leaseTtl': '1500ms' });
  const first = await waitFor(loadedOwner, { description: 'partition 0 loaded' });
  const leaseKey = t.node.keys.lease(0);
  expect(await redis.command('GET', leaseKey)).toBe(first.lease.token);

  // Another node holds the lease now (this one was taken for gone, say): the next renewal finds it lost.
  await redis.command('SET', leaseKey, 'n-other:999', 'PX', '60000');
  await waitFor(() => t.node.leases.holds(0) === undefined, { description: 'the renewal found the lease lost' });
  expect(first.active).toBe(false);
  expect(t.node.owner.get(0)).toBeUndefined();
  expect(t.node.owner.owned()).toEqual([]);
  expect(await redis.command('GET', leaseKey)).toBe('n-other:999');

  await redis.command('DEL', leaseKey);
  const second = await waitFor(loadedOwner, { description: 'partition 0 loaded again' });
  expect(second).not.toBe(first);
  expect(second.lease.epoch).toBeGreaterThan(first.lease.epoch);
  expect(await redis.command('GET', leaseKey)).toBe(second.lease.token);
});
