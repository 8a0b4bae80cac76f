/**
 * ListTerminalTasks reads at most 20 000 terminal entries of each partition
 * (every tenant's share one set): a tenant whose terminal tasks sit behind more
 * of another tenant's got an empty or short listing, told as the whole truth
 * ("no terminal tasks for tenant acme"). The answer now says it is incomplete,
 * and the CLI says so instead of "none".
 */
import { TerminalTasksClient } from '../../src';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { fetchClients, step, topic } from '../helpers/fetch';
import { runCliAsync } from '../helpers/cli';
import { TERMINAL_SCAN_MAX } from '../../src/store/fetch-store';

const redis = useEmbeddedRedis();
let t: TestNode;
let ops: TerminalTasksClient | undefined;
afterEach(async () => {
  ops?.close();
  await t.close();
});

/** One terminal task of acme, then `others` older entries of another tenant's in front of it. */
async function buried(others: number): Promise<string> {
  const prefix = uniquePrefix('terminal-scan');
  t = await startTestNode(redis.url, prefix, { 'cluster.partitions': 1 });
  const { external } = fetchClients(t);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  expect((await external.fetchAndLock({ worker_id: 'A', topics: [topic()], max_tasks: 1, wait_ms: 1000, lock_duration_ms: 60_000 })).tasks).toHaveLength(1);
  await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'broken', type: 'Io' }, retries: 0 });
  const key = `${prefix}:{0}:terminal`;
  for (let from = 0; from < others; from += 5000) {
    const args: (string | number)[] = [];
    for (let i = from; i < Math.min(others, from + 5000); i++) args.push(i + 1, `other-${i}`);
    await redis.command('ZADD', key, ...args);
  }
  return id;
}

it('says the listing is incomplete when a partition holds more terminal entries than one listing reads', async () => {
  await buried(TERMINAL_SCAN_MAX);
  const { operator } = fetchClients(t);
  const res = await operator.listTerminalTasks({ tenant: 'acme' });
  expect(res.tasks).toEqual([]);
  expect(res.incomplete).toBe(true);

  ops = new TerminalTasksClient({ address: t.node.apiAddress });
  expect(await ops.list('acme')).toEqual({ tasks: [], incomplete: true });

  const cli = await runCliAsync(['terminal', 'list', '--tenant', 'acme', '--address', t.node.apiAddress]);
  expect(cli.status).toBe(0);
  expect(cli.stdout).not.toMatch(/no terminal tasks/);
  expect(cli.stderr).toMatch(/incomplete.*20 000/);
}, 60_000);

it('is complete when the scan reaches the end of every partition', async () => {
  const id = await buried(TERMINAL_SCAN_MAX - 1);
  const { operator } = fetchClients(t);
  const res = await operator.listTerminalTasks({ tenant: 'acme' });
  expect(res.tasks.map((x) => x.task_id)).toEqual([id]);
  expect(res.incomplete).toBe(false);

  const cli = await runCliAsync(['terminal', 'list', '--tenant', 'acme', '--address', t.node.apiAddress]);
  expect(cli.status).toBe(0);
  expect(cli.stdout).toContain(id);
  expect(cli.stderr).toBe('');
}, 60_000);
