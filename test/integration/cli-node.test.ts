/**
 * The built CLI against a real node: what an operator reads, through a pipe as
 * scripts and `| jq` read it. Needs `npm run build` (npm test does it).
 */
import { FetchClient } from '../../src';
import { runCliAsync } from '../helpers/cli';
import { step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
const clients: { close(): void }[] = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('cli'));
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t.close();
});

const addr = () => ['--address', t.node.apiAddress];

// More than a pipe or socket buffer holds: the process must not exit before stdout drains.
it('task --json prints all of a 900 KB task as valid JSON through a pipe', async () => {
  const input = 'x'.repeat(900_000);
  const id = (await t.matching.enqueueStep({ step: step({ input: Buffer.from(input) }) })).task_id!;
  const r = await runCliAsync(['task', id, '--json', ...addr()]);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(r.stdout.length).toBeGreaterThan(900_000);
  expect((JSON.parse(r.stdout) as { input: string }).input).toBe(input);
});

it('terminal list keeps one line per task when a last error spans lines', async () => {
  const worker = new FetchClient({ address: t.node.apiAddress, workerId: 'w' });
  clients.push(worker);
  const topics = [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }];
  const ids = [];
  for (const flowId of ['f1', 'f2']) ids.push((await t.matching.enqueueStep({ step: step({ flow_id: flowId }) })).task_id!);
  const stack = 'Error: connect ECONNREFUSED\n    at dial (net.js:1)\n\tat retry (x.js:2)';
  for (const task of await worker.fetchAndLock({ topics, maxTasks: 2, waitMs: 1000 })) {
    await worker.fail(task.taskId, { message: stack, retries: 0 });
  }
  const r = await runCliAsync(['terminal', 'list', '--tenant', 'acme', ...addr()]);
  expect(r.status).toBe(0);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines.map((l) => l.split('\t')[0]).sort()).toEqual([...ids].sort());
  for (const l of lines) expect(l).toContain('last error: Error: connect ECONNREFUSED at dial (net.js:1) at retry (x.js:2)');
  // Tab-separated fields for cut and awk: id, topic, flow, attempt, when, why, last error.
  expect(lines.map((l) => l.split('\t')).sort(([a], [b]) => a!.localeCompare(b!))).toEqual(ids.map((id, i) => [
    id, 'order/charge', `f${i + 1}`, 'attempt 1', expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), 'fetch retries exhausted',
    'last error: Error: connect ECONNREFUSED at dial (net.js:1) at retry (x.js:2)',
  ]).sort(([a], [b]) => (a as string).localeCompare(b as string)));
  const one = await runCliAsync(['terminal', 'list', '--tenant', 'acme', '--limit', '1', ...addr()]);
  expect(one.stdout.trimEnd().split('\n')).toHaveLength(1);
  const most = await runCliAsync(['terminal', 'list', '--tenant', 'acme', '--limit', '1000', '--json', ...addr()]);
  expect({ status: most.status, count: (JSON.parse(most.stdout) as unknown[]).length }).toEqual({ status: 0, count: 2 });
});

it('queues says which filter matched nothing', async () => {
  await t.matching.enqueueStep({ step: step() });
  const listed = await runCliAsync(['queues', '--tenant', 'acme', ...addr()]);
  expect(listed.stdout).toContain('order');
  const none = await runCliAsync(['queues', '--tenant', 'acme', '--flow-type', 'nope', ...addr()]);
  expect({ status: none.status, stdout: none.stdout }).toEqual({ status: 0, stdout: 'no queues for tenant acme and flow type nope\n' });
  expect((await runCliAsync(['queues', '--tenant', 'other', ...addr()])).stdout).toBe('no queues for tenant other\n');
});
