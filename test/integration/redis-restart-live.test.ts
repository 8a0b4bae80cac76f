/**
 * One redis-server killed (SIGKILL) and started again on its port while Steps
 * flow (DESIGN §11.1, §11.3): two nodes, producers enqueueing, worker slots and
 * fetch workers completing, an engine consuming outcomes. Redis keeps an
 * append-only file synced on every write (appendfsync always), so every write
 * it answered survives the kill. The nodes reconnect by themselves and lease
 * every partition again; every acknowledged enqueue gets exactly one outcome
 * without the attempt audit's help; no task is handed to a second worker while
 * another holds it; callers see only retryable ZD_STORE_UNAVAILABLE.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sendCommand, startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { everyPartitionLeased, expectOneOutcomeEach, startLoad } from '../helpers/cluster-load';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const servers: EmbeddedRedis[] = [];
const nodes: TestNode[] = [];
let dataDir = '';

afterAll(async () => {
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const leaseLost = async (t: TestNode): Promise<number> =>
  (await t.node.metrics.registry.getSingleMetric('dexzd_cluster_lease_changes_total')!.get()).values
    .filter((v) => v.labels.event === 'lease-lost').reduce((n, v) => n + v.value, 0);

it('keeps every acknowledged Step, one outcome each, through a redis-server killed and restarted under load', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-restart-'));
  const args = ['--appendonly', 'yes', '--appendfsync', 'always'];
  const first = await startEmbeddedRedis({ dataDir, args });
  servers.push(first);
  const partitions = 8;
  const prefix = uniquePrefix('rrl');
  nodes.push(await startTestNode(first.url, prefix), await startTestNode(first.url, prefix));
  await waitFor(() => nodes.reduce((n, t) => n + t.node.owner.owned().length, 0) === partitions, { description: 'every partition owned' });

  const TOTAL = 200;
  // Slots hold each task a moment: a second hand-out of a held task would show.
  const load = startLoad(nodes, TOTAL, 15, { holdMs: 20, redeliverAfterMs: 5000 });
  await waitFor(() => load.acked.size >= 50, { timeoutMs: 20_000, description: 'Steps flowing before the kill' });
  first.kill('SIGKILL');
  await first.exited();
  // Down for longer than a lease (1.5 s): the leases lapse (or are found gone), and are taken again afterwards.
  await sleep(2000);
  servers.push(await startEmbeddedRedis({ port: first.port, dataDir, args }));
  const after = load.acked.size;
  await waitFor(() => load.acked.size >= Math.min(TOTAL, after + 30), { timeoutMs: 20_000, description: 'Steps acknowledged after the restart' });

  await load.finish(25_000);

  expect(load.acked.size).toBe(TOTAL);
  expectOneOutcomeEach(load);
  expect(load.doubles).toEqual([]);
  expect(load.refusals.length).toBeGreaterThan(0);
  expect((await Promise.all(nodes.map(leaseLost))).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

  // Every partition leased again, by one of the two nodes, in the restarted server.
  await everyPartitionLeased(nodes, partitions, (key) => sendCommand(first.port, ['GET', key]));
}, 60_000);
