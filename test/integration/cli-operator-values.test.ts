/**
 * The built CLI's operator commands against a real node: what a value an
 * operator gives does, and what a script reading `--json` gets. Needs
 * `npm run build` (npm test does it).
 */
import { Client, FetchClient } from '../../src';
import { runCliAsync } from '../helpers/cli';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let client: Client;
let prefix: string;

beforeEach(async () => {
  prefix = uniquePrefix('cli-ops');
  t = await startTestNode(redis.url, prefix, { 'cluster.partitions': 2 });
  client = new Client({ address: t.node.apiAddress });
});
afterEach(async () => {
  client.close();
  await t.close();
});

const addr = () => ['--address', t.node.apiAddress];
const groupNames = async () => (await client.listOutcomeGroups()).map((g) => `${g.tenant || '*'}/${g.group}`).sort();

// `--tenant "$TENANT"` with the variable unset: the node reads '' as the group over every tenant.
it("outcome-groups drop --tenant '' exits 2 naming --tenant and leaves the group over every tenant", async () => {
  await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
  await client.consumeOutcomes({ group: 'engine', tenant: 'acme', consumer: 'a1', maxCount: 1 });
  const r = await runCliAsync(['outcome-groups', 'drop', 'engine', '--tenant', '', '--force', ...addr()]);
  expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 2, stdout: '' });
  expect(r.stderr).toContain("option '--tenant <tenant>' argument '' is invalid. must not be empty");
  expect(await groupNames()).toEqual(['*/engine', 'acme/engine']);
});

it.each([
  [['queues', '--tenant', 'acme', '--flow-type', ''], '--flow-type <type>'],
  [['terminal', 'list', '--tenant', 'acme', '--flow-type', ''], '--flow-type <type>'],
  [['terminal', 'list', '--tenant', 'acme', '--step-type', ''], '--step-type <type>'],
  // `--reason "$WHY"` unset: the node put its own words in the outcome in place of the operator's
  [['terminal', 'abandon', '0-000000000000000000000001', '--reason', ''], '--reason <text>'],
])('%j exits 2 naming the empty value instead of going on without it', async (args, flag) => {
  await client.enqueueStep({ tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1' });
  const r = await runCliAsync([...args, ...addr()]);
  expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 2, stdout: '' });
  expect(r.stderr).toContain(`option '${flag}' argument '' is invalid. must not be empty`);
});

// The table shows 'never' (and, for queues, an empty oldest ready): a script reading the JSON finds the field too.
it('outcome-groups list --json keeps a group never read as idleMs null', async () => {
  // Made by hand, so no consumer has ever read it.
  await redis.command('XGROUP', 'CREATE', `${prefix}:{0}:out`, 'engine', '0', 'MKSTREAM');
  const table = await runCliAsync(['outcome-groups', 'list', ...addr()]);
  expect(table.stdout).toMatch(/engine.*never/);
  const groups = await runCliAsync(['outcome-groups', 'list', '--json', ...addr()]);
  expect(groups.status).toBe(0);
  const [group] = JSON.parse(groups.stdout) as Record<string, unknown>[];
  expect(group).toMatchObject({ group: 'engine', registered: false, idleMs: null });
  expect(Object.keys(group!).sort()).toEqual(['consumers', 'group', 'idleMs', 'lag', 'partitions', 'pending', 'registered', 'tenant']);
});

// Redis cannot tell the lag of a group set to start mid-stream by hand: the table shows '?', the JSON null.
it('outcome-groups list --json keeps a lag Redis cannot tell as null', async () => {
  const stream = `${prefix}:{0}:out`;
  for (const id of ['1-1', '2-1', '3-1']) await redis.command('XADD', stream, id, 'f', 'v');
  await redis.command('XGROUP', 'CREATE', stream, 'engine', '2-1');
  const table = await runCliAsync(['outcome-groups', 'list', ...addr()]);
  expect(table.stdout).toMatch(/engine\s*│\s*\?\s*│/);
  const groups = await runCliAsync(['outcome-groups', 'list', '--json', ...addr()]);
  expect(groups.status).toBe(0);
  expect(JSON.parse(groups.stdout)).toEqual([expect.objectContaining({ group: 'engine', lag: null })]);
});

it('queues --json keeps the oldest ready entry of a queue with none ready as null', async () => {
  await client.enqueueStep({
    tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1', readyAt: Date.now() + 3_600_000,
  });
  const queues = await runCliAsync(['queues', '--tenant', 'acme', '--json', ...addr()]);
  expect(queues.status).toBe(0);
  expect(JSON.parse(queues.stdout)).toEqual([{
    tenant: 'acme', flowType: 'order', stepType: 'charge', ready: 0, delayed: 1, running: 0, oldestReadyAt: null,
  }]);
});

/** A terminal task of acme's order/charge: fetched, then failed with no retries left. */
async function terminalTask(): Promise<string> {
  const worker = new FetchClient({ address: t.node.apiAddress, workerId: 'w' });
  try {
    await client.enqueueStep({ tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1' });
    const [task] = await worker.fetchAndLock({ topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], maxTasks: 1, waitMs: 1000 });
    await worker.fail(task!.taskId, { message: 'boom', retries: 0 });
    return task!.taskId;
  } finally {
    worker.close();
  }
}

it('terminal list names the filter that matched none of the tenant\'s terminal tasks', async () => {
  await terminalTask();
  const all = await runCliAsync(['terminal', 'list', '--tenant', 'acme', ...addr()]);
  expect(all.stdout).toContain('order/charge');
  const byFlow = await runCliAsync(['terminal', 'list', '--tenant', 'acme', '--flow-type', 'refund', ...addr()]);
  expect({ status: byFlow.status, stdout: byFlow.stdout }).toEqual({ status: 0, stdout: 'no terminal tasks for tenant acme and flow type refund\n' });
  const byBoth = await runCliAsync(['terminal', 'list', '--tenant', 'acme', '--flow-type', 'order', '--step-type', 'ship', ...addr()]);
  expect(byBoth.stdout).toBe('no terminal tasks for tenant acme and flow type order and step type ship\n');
});

// `--retries "$N"` with the variable unset must not queue the task again as if 0 (unset) were meant.
it.each([
  [['retry', '<id>', '--retries', ''], '--retries: must be a whole number from 0 to 2147483647 (got "")'],
  [['retry', '<id>', '--retries', '1e3'], '--retries: must be a whole number from 0 to 2147483647 (got "1e3")'],
  [['list', '--tenant', 'acme', '--limit', '0x10'], '--limit: must be a whole number from 1 to 1000 (got "0x10")'],
])('terminal %j exits 2 naming the option and changes nothing', async (args, line) => {
  const id = await terminalTask();
  const r = await runCliAsync(['terminal', ...args.map((a) => (a === '<id>' ? id : a)), ...addr()]);
  expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 2, stdout: '', stderr: `${line}\n` });
  const listed = await runCliAsync(['terminal', 'list', '--tenant', 'acme', ...addr()]);
  expect(listed.stdout.split('\t')[0]).toBe(id);
});
