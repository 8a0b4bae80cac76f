/**
 * `zdmatch enqueue --file`: Steps loaded in bulk from NDJSON against a real node.
 * Needs `npm run build` (npm test does it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Client, type StepSpec } from '../../src';
import { loadSteps, summaryTable } from '../../src/cli/enqueue-file';
import { startAuthNode } from '../helpers/auth-node';
import { runCliAsync, runCliWithStdin } from '../helpers/cli';
import { startTestNode, type TestNode } from '../helpers/node';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
let client: Client | undefined;
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-enqueue-file-'));
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await t?.close();
  t = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(overrides: Record<string, unknown> = {}): Promise<TestNode> {
  t = await startTestNode(redis.url, uniquePrefix('cli-bulk'), { 'cluster.partitions': 2, ...overrides });
  client = new Client({ address: t.node.apiAddress });
  return t;
}

const step = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ tenant: 'acme', flowId: `f-${id}`, flowType: 'order', stepType: 'charge', stepExecutionId: id, ...extra });

function writeFile(lines: string[]): string {
  const file = path.join(dir, 'steps.ndjson');
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Whether the Step exists: enqueueing it again finds it. */
async function exists(id: string): Promise<boolean> {
  const r = await client!.enqueueStep({ tenant: 'acme', flowId: `f-${id}`, flowType: 'order', stepType: 'charge', stepExecutionId: id });
  return !r.created;
}

const failures = (stderr: string) => stderr.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { line: number; field: string; error: string });

it('loads the good lines once, names each bad line and its field, and exits 1; loading the file again creates nothing', async () => {
  const node = await start();
  const file = writeFile([
    step('s1'),
    '{"tenant": "acme", oops',
    JSON.stringify({ tenant: 'acme', flowId: 'f-x', flowType: 'order', stepType: 'charge' }),
    step('s2', { input: '{"amount":7}', readyAt: '2020-01-01T00:00:00Z' }),
    '',
    // refused by the node, inside a batch with good lines
    step('s3', { retryPolicy: { maxAttempts: 100_000 } }),
    step('s4', { stepExecutionID: 'typo' }),
    step('s5', { methodTimeoutMs: -1 }),
    step('s6', { inputBase64: Buffer.from([0, 1, 2]).toString('base64') }),
    '[1,2]',
  ]);
  const args = ['enqueue', '--file', file, '--json', '--address', node.node.apiAddress];
  const r = await runCliAsync(args);
  expect(r.status).toBe(1);
  expect(JSON.parse(r.stdout)).toMatchObject({ lines: 10, created: 3, alreadyExisted: 0, failed: 6 });
  const bad = failures(r.stderr);
  // Lines refused by the node are told once their batch is answered, after the ones refused on reading.
  expect(bad.map((f) => [f.line, f.field]).sort(([a], [b]) => Number(a) - Number(b))).toEqual([
    [2, ''], [3, 'stepExecutionId'], [6, 'retryPolicy.maxAttempts'], [7, 'stepExecutionID'], [8, 'methodTimeoutMs'], [10, ''],
  ]);
  expect(bad.find((f) => f.line === 3)!.error).toContain('is required');
  expect(bad.find((f) => f.line === 6)!.error).toContain('10000');
  const again = await runCliAsync(args);
  expect(again.status).toBe(1);
  expect(JSON.parse(again.stdout)).toMatchObject({ lines: 10, created: 0, alreadyExisted: 3, failed: 6 });
  // s3 was refused, not created; the others of its batch were.
  for (const id of ['s1', 's2', 's6']) expect(await exists(id)).toBe(true);
  expect(await exists('s3')).toBe(false);
});

it('prints the failed lines and a summary table without --json, and exits 0 when every line loaded', async () => {
  const node = await start();
  const bad = await runCliAsync(['enqueue', '--file', writeFile([step('a'), '{"tenant":"acme"}']), '--address', node.node.apiAddress]);
  expect(bad.status).toBe(1);
  expect(bad.stderr).toBe('line 2: flowId: is required\n');
  expect(bad.stdout).toMatch(/created\s*│?\s*1\b/);
  expect(bad.stdout).toMatch(/failed\s*│?\s*1\b/);
  expect(bad.stdout).toContain('lines/s');
  const good = await runCliAsync(['enqueue', '--file', writeFile([step('a'), step('b')]), '--address', node.node.apiAddress]);
  expect({ status: good.status, stderr: good.stderr }).toEqual({ status: 0, stderr: '' });
  expect(good.stdout).toMatch(/already existed\s*│?\s*1\b/);
});

it('reads the lines from stdin with --file -', async () => {
  const node = await start();
  const lines = Array.from({ length: 250 }, (_, i) => step(`in-${i}`)).join('\n');
  const r = await runCliWithStdin(['enqueue', '--file', '-', '--json', '--batch', '7', '--address', node.node.apiAddress], `${lines}\n`);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(JSON.parse(r.stdout)).toMatchObject({ lines: 250, created: 250, failed: 0 });
  const queues = await client!.describeQueues('acme');
  expect(queues.map((q) => q.ready)).toEqual([250]);
});

it('sends batches no larger than the node takes (limits.maxBatch) when --batch is larger', async () => {
  const node = await start({ 'limits.maxBatch': 5 });
  const lines = Array.from({ length: 23 }, (_, i) => step(`mb-${i}`));
  lines[12] = step('mb-12', { flowType: 'no spaces' });
  const r = await runCliAsync(['enqueue', '--file', writeFile(lines), '--json', '--batch', '20', '--address', node.node.apiAddress]);
  expect(r.status).toBe(1);
  expect(JSON.parse(r.stdout)).toMatchObject({ lines: 23, created: 22, failed: 1 });
  expect(r.stderr).toContain('note: the node takes at most 5 Steps per call (limits.maxBatch): batches of 5 from line 1 on\n');
  expect(r.stderr).toContain('{"line":13,"field":"flowType"');
});

/** The real client's enqueueSteps, each call recorded: its Steps, and how many calls are out at once. */
function recordingCalls(real: Client, holdMs = 0) {
  const calls: StepSpec[][] = [];
  let open = 0;
  let mostOpen = 0;
  const enqueueSteps = async (steps: StepSpec[]) => {
    calls.push(steps);
    mostOpen = Math.max(mostOpen, ++open);
    try {
      if (holdMs > 0) await new Promise((r) => setTimeout(r, holdMs)); // calls overlap as they would behind a slow node
      return await real.enqueueSteps(steps);
    } finally {
      open--;
    }
  };
  // loadSteps calls enqueueSteps alone.
  return { client: { enqueueSteps } as Pick<Client, 'enqueueSteps'> as Client, calls, mostOpen: () => mostOpen };
}
const lines = (ids: string[], extra: Record<string, unknown> = {}) => Readable.from(ids.map((id) => step(id, extra)).join('\n'));
const inputBytes = (steps: StepSpec[]) => steps.reduce((n, s) => n + (s.input?.length ?? 0), 0);
const noFailures = { retries: 0, onFailure: () => undefined };

it('sends --batch Steps a call', async () => {
  await start();
  const { client: spy, calls } = recordingCalls(client!);
  const summary = await loadSteps(spy, lines(Array.from({ length: 25 }, (_, i) => `b-${i}`)), { batch: 10, inflight: 4, ...noFailures });
  expect(summary).toMatchObject({ lines: 25, created: 25, failed: 0 });
  expect(calls.map((c) => c.length)).toEqual([10, 10, 5]);
});

it('keeps a batch under 64 KiB, and sends a larger Step alone', async () => {
  await start();
  const { client: spy, calls } = recordingCalls(client!);
  const input = (kib: number) => ({ input: 'x'.repeat(kib * 1024) });
  const file = Readable.from([
    ...Array.from({ length: 7 }, (_, i) => step(`m-${i}`, input(20))), step('big', input(100)), step('small-after'),
  ].join('\n'));
  const summary = await loadSteps(spy, file, { batch: 100, inflight: 1, ...noFailures });
  expect(summary).toMatchObject({ created: 9, failed: 0 });
  const shared = calls.filter((c) => c.length > 1);
  expect(shared.length).toBeGreaterThan(0); // Steps of 20 KiB still share calls
  expect(shared.map(inputBytes).filter((n) => n >= 64 * 1024)).toEqual([]);
  expect(calls.find((c) => c.some((st) => st.stepExecutionId === 'big'))!.map((st) => st.stepExecutionId)).toEqual(['big']);
});

it('has at most --inflight calls out at once, and uses them', async () => {
  await start();
  const { client: spy, calls, mostOpen } = recordingCalls(client!, 20);
  await loadSteps(spy, lines(Array.from({ length: 12 }, (_, i) => `p-${i}`)), { batch: 1, inflight: 3, ...noFailures });
  expect(calls).toHaveLength(12);
  expect(mostOpen()).toBe(3);
});

it('retries while the node cannot be reached, and loads once it can', async () => {
  const port = await freePort();
  const file = writeFile([step('r1'), step('r2')]);
  const run = runCliAsync(['enqueue', '--file', file, '--json', '--address', `127.0.0.1:${port}`]);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await start({ 'api.listen': `127.0.0.1:${port}` });
  const r = await run;
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(JSON.parse(r.stdout)).toMatchObject({ created: 2, failed: 0 });
});

it('counts Steps a retry finds existing after a try whose reply was lost apart from those that existed before', async () => {
  await start();
  expect((await client!.enqueueStep({ tenant: 'acme', flowId: 'f-old', flowType: 'order', stepType: 'charge', stepExecutionId: 'old' })).created).toBe(true);
  const slow = new Client({ address: t!.node.apiAddress, defaultTimeoutMs: 400 });
  try {
    // Redis holds the node's writes past the call's timeout, then makes them: the first try
    // creates the Steps and its reply is lost; a retry finds them existing.
    await redis.command('CLIENT', 'PAUSE', '1500', 'WRITE');
    const summary = await loadSteps(slow, Readable.from([step('l1'), step('l2')].join('\n')), {
      batch: 10, inflight: 1, retries: 8, backoff: { initialMs: 300, maxMs: 600 }, onFailure: () => undefined,
    });
    expect(summary).toMatchObject({ created: 0, alreadyExisted: 0, createdOrExisted: 2, failed: 0 });
    expect(summaryTable(summary)).toContain('created or existed (reply lost, retried)');
    // A Step that existed before the load, in a call answered at once, still counts as existing.
    const again = await loadSteps(slow, Readable.from([step('old'), step('n1')].join('\n')), { batch: 10, inflight: 1, retries: 0, onFailure: () => undefined });
    expect(again).toMatchObject({ created: 1, alreadyExisted: 1, createdOrExisted: 0 });
  } finally {
    slow.close();
  }
});

it('stops when the node stays unreachable past --retries, and says where', async () => {
  const port = await freePort();
  const file = writeFile([step('u1'), step('u2')]);
  const r = await runCliAsync(['enqueue', '--file', file, '--json', '--retries', '1', '--address', `127.0.0.1:${port}`]);
  expect(r.status).toBe(1);
  expect(JSON.parse(r.stdout)).toMatchObject({ created: 0, failed: 2, notSent: 0, stoppedAtLine: 1 });
  expect(r.stderr).toContain('the load stopped at line 1');
});

it('fails a line of a tenant the credential does not cover alone, and stops at once on a refused credential', async () => {
  const node = await startAuthNode(redis.url, 'cli-bulk-auth', { workers: [], clients: [{ token: 'client-acme-0123456789', tenants: ['acme'] }] });
  try {
    const file = writeFile([step('p1'), step('p2', { tenant: 'globex' }), step('p3')]);
    const args = ['enqueue', '--file', file, '--json', '--address', node.node.apiAddress];
    const r = await runCliAsync(args, { env: { PATH: process.env.PATH, ZD_TOKEN: 'client-acme-0123456789' } });
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2, failed: 1 });
    expect(failures(r.stderr).map((f) => f.line)).toEqual([2]);
    expect(failures(r.stderr)[0]!.error).toContain('globex');
    const lines = Array.from({ length: 50 }, (_, i) => step(`w${i}`));
    const wrong = await runCliAsync(['enqueue', '--file', writeFile(lines), '--json', '--batch', '10', '--address', node.node.apiAddress], {
      env: { PATH: process.env.PATH, ZD_TOKEN: 'client-wrong-0123456789' },
    });
    expect(wrong.status).toBe(1);
    // Stopped at the first refusal: no batch sent a line at a time, no batch read after it.
    const summary = JSON.parse(wrong.stdout) as { lines: number; created: number; failed: number; notSent: number; stoppedAtLine: number };
    expect(summary).toMatchObject({ created: 0, stoppedAtLine: 1 });
    // Each line read is told: failed (sent and refused) or not sent.
    expect(summary.failed + summary.notSent).toBe(summary.lines);
    expect(failures(wrong.stderr.split('\n').filter((l) => l.startsWith('{')).join('\n'))).toHaveLength(summary.failed);
    expect(wrong.stderr).toContain('the load stopped at line 1');
  } finally {
    await node.close();
  }
});

it.each([
  [['--tenant', 'acme'], '--tenant: not with --file (each line names its own)'],
  [['--batch', '0'], '--batch: must be a whole number from 1 to 1000 (got "0")'],
])('%j with --file exits 2 without dialling', async (extra, message) => {
  const r = await runCliAsync(['enqueue', '--file', writeFile([step('x')]), ...extra, '--address', '127.0.0.1:1']);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: `${message}\n` });
});

it('--file of a missing file exits 2 naming it', async () => {
  const r = await runCliAsync(['enqueue', '--file', '/nonexistent/steps.ndjson', '--address', '127.0.0.1:1']);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: '--file: cannot read /nonexistent/steps.ndjson: ENOENT\n' });
});
