/**
 * Two nodes in this process on a real Redis Cluster, under one key prefix, with
 * membership timings of the test's own; returned once each has read the other live.
 */
import type { RedisCluster } from '../../src/store/embedded-redis';
import { startTestNode, type TestNode } from './node';
import { uniquePrefix } from './redis';
import { waitFor } from './wait';

export async function startLivePair(
  cluster: RedisCluster, label: string, timing: { nodeTtl: string; heartbeat: string }, started: TestNode[],
): Promise<[TestNode, TestNode]> {
  const config = {
    'redis.clusterNodes': [...cluster.seeds], 'cluster.partitions': 12,
    'cluster.nodeTtl': timing.nodeTtl, 'cluster.heartbeat': timing.heartbeat, 'cluster.leaseTtl': '1500ms',
  };
  const prefix = uniquePrefix(label);
  const a = await startTestNode('', prefix, config);
  started.push(a);
  const b = await startTestNode('', prefix, config);
  started.push(b);
  await waitFor(() => a.node.membership.liveIds().length === 2 && b.node.membership.liveIds().length === 2,
    { timeoutMs: 15_000, description: 'both nodes live' });
  return [a, b];
}
