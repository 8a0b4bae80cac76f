/**
 * Redis answering slowly while Steps flow (DESIGN §11.1, §11.3): two nodes,
 * producers enqueueing, worker slots and fetch workers completing, an engine
 * consuming outcomes — and meanwhile the server stalls for 2 s (DEBUG SLEEP),
 * then pauses its writers (CLIENT PAUSE WRITE), then every client (CLIENT
 * PAUSE ALL), 2 s each. Leases of 6 s outlast every stall: none is lost.
 * Every acknowledged enqueue gets exactly one outcome, no task is handed to a
 * second worker while another holds it, and callers see nothing but success
 * or the retryable ZD_STORE_UNAVAILABLE.
 */
import { sendCommand } from '../../src/store/embedded-redis';
import { expectOneOutcomeEach, startLoad } from '../helpers/cluster-load';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis({ args: ['--enable-debug-command', 'yes'] });
const nodes: TestNode[] = [];

// Before the file's Redis stops (afterAll): a node closing on a Redis that is gone waits out its retries.
afterEach(async () => {
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
});

const leaseLost = async (t: TestNode): Promise<number> =>
  (await t.node.metrics.registry.getSingleMetric('dexzd_cluster_lease_changes_total')!.get()).values
    .filter((v) => v.labels.event === 'lease-lost').reduce((n, v) => n + v.value, 0);

it('keeps every acknowledged Step, one outcome each, and every lease, through stalls of a slow Redis under load', async () => {
  const partitions = 8;
  const prefix = uniquePrefix('slow');
  const overrides = { 'cluster.leaseTtl': '6s', 'cluster.nodeTtl': '6s', 'cluster.heartbeat': '1s' };
  nodes.push(await startTestNode(redis.url, prefix, overrides), await startTestNode(redis.url, prefix, overrides));
  await waitFor(() => nodes.reduce((n, t) => n + t.node.owner.owned().length, 0) === partitions, { description: 'every partition owned' });

  const TOTAL = 240;
  const load = startLoad(nodes, TOTAL, 15, { holdMs: 20, redeliverAfterMs: 5000 });
  const stalls: (string | number)[][] = [['DEBUG', 'SLEEP', '2'], ['CLIENT', 'PAUSE', '2000', 'WRITE'], ['CLIENT', 'PAUSE', '2000', 'ALL']];
  for (const [i, stall] of stalls.entries()) {
    await waitFor(() => load.acked.size >= 40 + 50 * i, { timeoutMs: 20_000, description: `Steps flowing before stall ${i}` });
    const started = Date.now();
    expect(await sendCommand(redis.port, stall, { timeoutMs: 10_000 })).toBe('OK');
    // CLIENT PAUSE answers at once: the stall is over once a command from another connection is answered.
    await sendCommand(redis.port, ['SET', `${prefix}-probe`, '1'], { timeoutMs: 10_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  }
  await load.finish(25_000);

  expect(load.acked.size).toBe(TOTAL);
  expectOneOutcomeEach(load);
  expect(load.doubles).toEqual([]);
  // No lease ran out: each stall is a third of a lease.
  expect(await Promise.all(nodes.map(leaseLost))).toEqual([0, 0]);
  expect(nodes.reduce((n, t) => n + t.node.owner.owned().length, 0)).toBe(partitions);
}, 60_000);
