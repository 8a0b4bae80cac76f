/**
 * An enqueue's WAIT for redis.waitReplicas on a Redis Cluster whose slot map names no
 * primary for the Step's key (mid-failover) answers ZD_STORE_UNAVAILABLE, which
 * clients retry, not ZD_INTERNAL. The client is a real ioredis Cluster that has not
 * connected yet: its slot map is empty, as for a slot whose primary just went.
 */
import { Cluster } from 'ioredis';
import { storeUnavailable } from '../../../src/errors/store-unavailable';
import { waitForReplicas } from '../../../src/store/redis';

it('answers ZD_STORE_UNAVAILABLE when the slot map names no primary for a key', async () => {
  const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
  try {
    const err = await waitForReplicas(cluster, ['zd:{p1}:task:t'], 1, 100).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(storeUnavailable(err)?.zdCode).toBe('ZD_STORE_UNAVAILABLE');
  } finally {
    cluster.disconnect();
  }
});
