/**
 * A graceful stop gives up every lease the node holds (DESIGN §3: release on
 * leave), also one whose acquire was still in flight when the stop began (a
 * peer handed the partition over just then): the node closes its Redis
 * connection right after, so a lease left to come back later would outlive
 * the node by cluster.leaseTtl, and the partition would stay unowned that long.
 */
import { LeaseManager } from '../../src/cluster/leases';
import { createRedis } from '../../src/store/redis';
import { createLogger } from '../../src/util/logger';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'lease-stop');
const TTL = 30_000;
const log = createLogger('silent');

it('a graceful stop that begins while an acquire on notice is in flight leaves no lease behind', async () => {
  const p = 3;
  // Another node holds the partition; this node already counts it among its targets.
  await fx.client.set(fx.keys.lease(p), 'b:1', 'PX', TTL);
  const own = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const m = new LeaseManager(own, fx.keys, 'a', TTL, log);
  m.start();
  await m.setTargets(new Set([p]));
  expect(m.holds(p)).toBeUndefined();

  // b gives it up and tells this node, which acquires at once; the stop begins before Redis answers.
  await fx.client.del(fx.keys.lease(p));
  expect(m.acquireNow(p)).toBe(true);
  await m.releaseAll();
  await own.quit().catch(() => undefined); // what a stopping node does next

  await sleep(200);
  expect(await fx.client.get(fx.keys.lease(p))).toBeNull();
});
