/**
 * A node that acquires a partition starts a background count of its backlog
 * (DESIGN §3): the queued Steps it takes over show in its backlog gauge as soon
 * as the partition is loaded, not only at the next periodic count (every 5 s).
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { metricValue } from '../helpers/sdk';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const nodes: TestNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

it('counts the queued Steps of the partitions it acquires at once, long before its periodic count', async () => {
  const prefix = uniquePrefix('acqcount');
  const config = { 'matching.syncMatchWait': '10ms' };
  const first = await startTestNode(redis.url, prefix, config);
  nodes.push(first);
  for (let i = 0; i < 3; i++) {
    await first.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
  }
  await first.close(); // a graceful stop: it gives up every lease, and the next node takes them at once

  const startedAt = Date.now();
  const next = await startTestNode(redis.url, prefix, config);
  nodes.push(next);
  const pack = { tenant: 'acme', flow_type: 'order', step_type: 'pack' };
  await waitFor(async () => (await metricValue(next.node.metrics.registry, 'dexzd_step_task_queue_entries', pack)) === 3, {
    timeoutMs: 2500, description: 'the three queued Steps counted once their partitions were acquired',
  });
  // well before the first periodic count (5 s after the node started)
  expect(Date.now() - startedAt).toBeLessThan(4000);
});
