/**
 * The built CLI's client commands against a real node: what each prints, as a
 * line or table and with --json, and the flags it refuses before changing
 * anything. Needs `npm run build` (npm test does it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../../src';
import { runCliAsync } from '../helpers/cli';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let client: Client;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('cli-cmd'), { 'cluster.partitions': 2 });
  client = new Client({ address: t.node.apiAddress });
});
afterEach(async () => {
  client.close();
  await t.close();
});

const addr = () => ['--address', t.node.apiAddress];
const oneStep = ['enqueue', '--tenant', 'acme', '--flow-id', 'f1', '--flow-type', 'order', '--step-type', 'charge'];

describe('enqueue of one Step', () => {
  it('prints the task and its partition, and says when the Step already existed', async () => {
    const first = await runCliAsync([...oneStep, '--step-execution-id', 's1', ...addr()]);
    expect({ status: first.status, stderr: first.stderr }).toEqual({ status: 0, stderr: '' });
    const m = /^task (\S+) partition (\d+)\n$/.exec(first.stdout);
    expect(m).not.toBeNull();
    const again = await runCliAsync([...oneStep, '--step-execution-id', 's1', ...addr()]);
    expect({ status: again.status, stdout: again.stdout }).toEqual({ status: 0, stdout: `task ${m![1]} partition ${m![2]} (already existed)\n` });
  });

  it('--json prints the result with the stepExecutionId it chose', async () => {
    const r = await runCliAsync([...oneStep, '--json', ...addr()]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { taskId: string; created: boolean; stepExecutionId: string };
    expect(out).toEqual(expect.objectContaining({ created: true, taskId: expect.any(String), stepExecutionId: expect.stringMatching(/^[0-9a-f-]{36}$/) }));
    // The id printed is the one the node took: enqueueing it again finds the same task.
    const again = await client.enqueueStep({ tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: out.stepExecutionId });
    expect({ created: again.created, taskId: again.taskId }).toEqual({ created: false, taskId: out.taskId });
  });

  it.each(['--batch', '--inflight', '--retries'])('refuses %s without --file, exit 2, and enqueues nothing', async (flag) => {
    const r = await runCliAsync([...oneStep, flag, '5', ...addr()]);
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 2, stdout: '', stderr: `${flag}: only with --file\n` });
    expect(await client.describeQueues('acme')).toEqual([]);
  });
});

describe('enqueue --file', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-cli-commands-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    [['--input', 'x'], '--input: not with --file (each line names its own)'],
    [['--step-execution-id', 's1'], '--step-execution-id: not with --file (each line names its own)'],
    [['--inflight', '257'], '--inflight: must be a whole number from 1 to 256 (got "257")'],
    [['--retries', '1001'], '--retries: must be a whole number from 0 to 1000 (got "1001")'],
    [['--batch', '1001'], '--batch: must be a whole number from 1 to 1000 (got "1001")'],
  ])('%j exits 2 naming the flag and enqueues nothing', async (extra, message) => {
    const file = path.join(dir, 'steps.ndjson');
    fs.writeFileSync(file, `${JSON.stringify({ tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 'x' })}\n`);
    const refused = await runCliAsync(['enqueue', '--file', file, ...extra, ...addr()]);
    expect({ status: refused.status, stdout: refused.stdout, stderr: refused.stderr }).toEqual({ status: 2, stdout: '', stderr: `${message}\n` });
    expect(await client.describeQueues('acme')).toEqual([]);
  });
});

describe('outcome-groups', () => {
  it('list says when there are none, and shows the group over every tenant as (all)', async () => {
    const none = await runCliAsync(['outcome-groups', 'list', ...addr()]);
    expect({ status: none.status, stdout: none.stdout }).toEqual({ status: 0, stdout: 'no outcome consumer groups\n' });
    await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
    await client.consumeOutcomes({ group: 'billing', tenant: 'acme', consumer: 'b1', maxCount: 1 });
    const table = await runCliAsync(['outcome-groups', 'list', ...addr()]);
    expect(table.status).toBe(0);
    const rows = table.stdout.split('\n').map((l) => l.split('│').map((c) => c.trim()).filter(Boolean)).filter((r) => r.length > 2);
    expect(rows[0]).toEqual(['tenant', 'group', 'lag', 'unacked', 'consumers', 'last read', 'partitions', 'registered']);
    expect(rows.slice(1).map((r) => [r[0], r[1], r[6], r[7]]).sort()).toEqual([['(all)', 'engine', '2', 'yes'], ['acme', 'billing', '2', 'yes']]);
  });

  it('drop says which group of which tenant it dropped from how many partitions', async () => {
    await client.consumeOutcomes({ group: 'billing', tenant: 'acme', consumer: 'b1', maxCount: 1 });
    const r = await runCliAsync(['outcome-groups', 'drop', 'billing', '--tenant', 'acme', '--force', ...addr()]);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toBe('dropped billing of tenant acme from 2 partitions (0 unacked outcomes it held will not be redelivered to it)\n');
    expect(await client.listOutcomeGroups()).toEqual([]);
    await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
    const all = await runCliAsync(['outcome-groups', 'drop', 'engine', '--force', ...addr()]);
    expect({ status: all.status, stdout: all.stdout }).toEqual({ status: 0, stdout: 'dropped engine from 2 partitions (0 unacked outcomes it held will not be redelivered to it)\n' });
  });
});

describe('cluster', () => {
  it('prints the partitions and live nodes, and with --partitions each owner and epoch', async () => {
    const info = await client.describeCluster();
    const nodeId = info.nodes[0]!.nodeId;
    // The live node as its membership record holds it: its id, the mesh address peers dial, a recent heartbeat.
    expect(info.nodes).toEqual([{
      nodeId: t.node.nodeId, address: t.node.internalAddress, lastHeartbeat: expect.any(Date), ownedPartitions: 2, live: true,
    }]);
    expect(Math.abs(Date.now() - info.nodes[0]!.lastHeartbeat!.getTime())).toBeLessThan(60_000);
    // Each lease's epoch, as the lease holds it: 0 is never one (the first acquire makes it 1).
    expect(info.partitionOwners.map((o) => o.owner)).toEqual([nodeId, nodeId]);
    for (const o of info.partitionOwners) expect(o.epoch).toBeGreaterThan(0);
    const r = await runCliAsync(['cluster', '--partitions', ...addr()]);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('2 partitions, 1 live nodes');
    const rows = lines.map((l) => l.split('│').map((c) => c.trim()).filter(Boolean)).filter((c) => c.length > 1);
    expect(rows).toContainEqual([nodeId, expect.any(String), '2', expect.stringMatching(/^\d{4}-\d\d-\d\dT/)]);
    expect(rows).toContainEqual(['partition', 'owner', 'epoch']);
    for (const p of ['0', '1']) expect(rows).toContainEqual([p, nodeId, expect.stringMatching(/^\d+$/)]);
  });

  it('--json prints the same as the API', async () => {
    const r = await runCliAsync(['cluster', '--json', ...addr()]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { partitions: number; nodes: { nodeId: string; ownedPartitions: number }[] };
    expect(out.partitions).toBe(2);
    expect(out.nodes.map((n) => n.ownedPartitions)).toEqual([2]);
  });
});
