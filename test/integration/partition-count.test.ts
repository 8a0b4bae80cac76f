/**
 * cluster.partitions is fixed for the life of a cluster (DESIGN §2): a node
 * whose count differs from the one its Redis was set up with refuses to
 * start, naming both, and changes nothing.
 */
import { startTestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();

it('refuses to join a cluster set up with another partition count', async () => {
  const prefix = uniquePrefix('pc');
  const first = await startTestNode(redis.url, prefix, { 'cluster.partitions': 8 });
  await first.close();
  await expect(startTestNode(redis.url, prefix, { 'cluster.partitions': 4 }))
    .rejects.toThrow('config cluster.partitions: 4 differs from the 8 this Redis was set up with');
  expect(await redis.command('HGET', `${prefix}:meta`, 'partitions')).toBe('8');
  // the same count joins
  const again = await startTestNode(redis.url, prefix, { 'cluster.partitions': 8 });
  await again.close();
});
