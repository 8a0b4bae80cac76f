/**
 * Configs that boot but work against themselves: each is logged as a WARN at
 * startup (ZdNode.boot), naming the keys, rather than refused, because a test
 * rig or a deliberate trade-off may want them.
 */
import { WORKER_PONG_INTERVAL_MS } from '../wire';
import type { Config } from './load';

export function configWarnings(c: Config): string[] {
  const out: string[] = [];
  const silence = c.matching.busyStreamSilence;
  if (silence > 0 && silence <= WORKER_PONG_INTERVAL_MS) {
    out.push(`matching.busyStreamSilence (${silence}ms) is not longer than the ${WORKER_PONG_INTERVAL_MS}ms between a busy worker's Pongs: `
      + 'healthy workers running a long task will be reset as lost');
  }
  if (c.cluster.leaseTtl > c.cluster.nodeTtl) {
    out.push(`cluster.leaseTtl (${c.cluster.leaseTtl}ms) is longer than cluster.nodeTtl (${c.cluster.nodeTtl}ms): `
      + "a dead node's own partitions move only when their leases run out, so their attempts fail later than cluster.nodeTtl");
  }
  const r = c.redis;
  if (r.password && r.url && r.clusterNodes.length === 0 && r.sentinels.length === 0) {
    out.push('redis.password is set but applies to redis.clusterNodes and redis.sentinels only: '
      + 'the node connects to redis.url without it (put a single Redis\'s password in the URL, redis://:PASSWORD@host:6379)');
  }
  if (r.username && r.url && r.clusterNodes.length === 0 && r.sentinels.length === 0) {
    out.push('redis.username is set but applies to redis.clusterNodes and redis.sentinels only: '
      + 'the node connects to redis.url as the user the URL names (redis://USER:PASSWORD@host:6379)');
  }
  return out;
}
