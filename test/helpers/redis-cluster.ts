/**
 * A real Redis Cluster of 3 primaries for a test file: started before its tests,
 * stopped after them, once `closeFirst` (the file's node, which would else go on
 * calling a Cluster that is gone) has closed.
 */
import { startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';

export function useRedisCluster(closeFirst: () => Promise<unknown> | undefined): { readonly cluster: RedisCluster } {
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
  }, 90_000);
  afterAll(async () => {
    await Promise.resolve(closeFirst()).catch(() => undefined);
    await cluster?.stop();
  });
  return {
    get cluster() {
      if (!cluster) throw new Error('useRedisCluster: the Cluster starts in beforeAll; use it inside a test');
      return cluster;
    },
  };
}
