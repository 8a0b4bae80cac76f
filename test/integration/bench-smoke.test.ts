/**
 * CI smoke of `zdmatch bench`: tiny --local throughput runs must finish and
 * print the report fields. Not timed tests: no figure is checked.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { startTestNode } from '../helpers/node';
import { startEmbeddedRedis, uniquePrefix } from '../helpers/redis';

function bench(args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI_MAIN, 'bench', ...args],
      { cwd: REPO_ROOT, timeout: timeoutMs },
      // A failure says how the process ended and what it printed: Node's message holds stderr alone.
      (err, stdout, stderr) => (err
        ? reject(new Error(`${err.message.trimEnd()}\nexit code ${String(err.code)}, signal ${String(err.signal)}, killed by the timeout: ${String(err.killed)}\nstdout:\n${stdout}`))
        : resolve({ stdout, stderr })),
    );
  });
}

test('zdmatch bench --local --mode throughput --tasks 200 --json prints the report (and profiles every process)', async () => {
  const profiles = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-bench-prof-'));
  const { stdout } = await bench(['--local', '--mode', 'throughput', '--tasks', '200', '--warmup', '50', '--json', '--cpu-prof-dir', profiles], 40_000);
  const written = fs.readdirSync(profiles);
  fs.rmSync(profiles, { recursive: true, force: true });
  expect(written).toEqual(expect.arrayContaining(['worker-0.cpuprofile', 'producer-0.cpuprofile']));
  expect(written.some((f) => /^CPU\..*\.cpuprofile$/.test(f))).toBe(true); // the node's
  const r = JSON.parse(stdout.trim().split('\n').pop()!);
  expect(r).toMatchObject({ system: 'zdmatch', mode: 'throughput', completed: 200, expected: 200, timedOut: false });
  expect(r.tasksPerSec).toBeGreaterThan(0);
  for (const k of ['submitToStart', 'enqueueToStart', 'dispatch', 'enqueueToOutcome']) {
    expect(r.latencyMs[k]).toEqual(expect.objectContaining({ n: expect.any(Number), p50: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) }));
  }
  // The same submit → start samples by second of the phase: every one lands in a second.
  const bySecond = r.latencyMs.submitToStartBySecond as { atSec: number; n: number }[];
  expect(bySecond.length).toBeGreaterThan(0);
  expect(bySecond.map((b) => b.atSec)).toEqual(bySecond.map((_, i) => i));
  expect(bySecond.reduce((s, b) => s + b.n, 0)).toBe(r.latencyMs.submitToStart.n);
  expect(r.redis).toEqual(expect.objectContaining({
    commandsPerTask: expect.any(Number), scriptCallsPerTask: expect.any(Number), cpuUsecPerTask: expect.any(Number),
  }));
  // Each Step leaves its outcome behind (stream entry and done record): memory grows with it.
  expect(r.redis.memoryBytesPerTask).toBeGreaterThan(100);
  expect(r.redis.scriptCallsPerTask).toBeGreaterThan(0);
  expect(typeof r.cpuUsecPerTask.node).toBe('number');
  // Every process of a --local run is on this machine, so each role's wakeups are read;
  // 200 Steps cannot all reach a process in one wakeup, so each counted more than none.
  for (const role of ['node', 'workers', 'producers', 'redis']) expect(r.wakeupsPerTask[role]).toBeGreaterThan(0);
  // Their main threads' waits for a core, in cores over the phase: none can wait longer than the phase.
  for (const role of ['node', 'workers', 'producers', 'redis']) {
    expect(r.waitingForCore[role]).toBeGreaterThanOrEqual(0);
    expect(r.waitingForCore[role]).toBeLessThanOrEqual(1.05);
  }
  // The single-node report has no per-node or per-primary parts.
  expect(r.cpuUsecPerTask.nodes).toBeUndefined();
  expect(r.redis.perPrimary).toBeUndefined();
  // The machine over the phase, in cores: the run's processes are part of what was busy.
  expect(r.machineCpu).toEqual({ cores: os.cpus().length, busy: expect.any(Number), run: expect.any(Number), other: expect.any(Number), stolen: expect.any(Number) });
  expect(r.machineCpu.run).toBeGreaterThan(0);
  expect(r.machineCpu.busy).toBeGreaterThanOrEqual(r.machineCpu.run);
  expect(r.machineCpu.other).toBeCloseTo(r.machineCpu.busy - r.machineCpu.run, 1);
}, 45_000);

test('zdmatch bench --local --nodes 2 --redis-cluster reports each node and each Redis primary', async () => {
  const { stdout, stderr } = await bench([
    '--local', '--nodes', '2', '--redis-cluster', '--workers', '2', '--producers', '2',
    '--mode', 'throughput', '--tasks', '600', '--warmup', '100', '--json',
  ], 38_000);
  // stdout is the JSON report alone; the setup lines go to stderr.
  const r = JSON.parse(stdout.trim());
  expect(stderr).toContain('starting 2 nodes');
  expect(stderr).toContain('cluster settled');
  expect(r).toMatchObject({
    system: 'zdmatch', completed: 600, expected: 600, enqueueErrors: 0, timedOut: false,
    config: { nodes: 2, redisPrimaries: 3, workers: 2, producers: 2 },
  });
  expect(r.cpuUsecPerTask.nodes).toEqual([expect.any(Number), expect.any(Number)]);
  expect(r.cpuUsecPerTask.node).toBeCloseTo(r.cpuUsecPerTask.nodes[0] + r.cpuUsecPerTask.nodes[1], 0);
  // The outcome streams were read through the Cluster (a plain client would get MOVED and fail).
  expect(r.latencyMs.enqueueToOutcome.n).toBeGreaterThan(0);
  expect(r.redis.perPrimary).toHaveLength(3);
  const addresses = new Set<string>();
  for (const p of r.redis.perPrimary) {
    expect(p).toEqual(expect.objectContaining({
      address: expect.stringMatching(/^127\.0\.0\.1:\d+$/), cpuUsecPerTask: expect.any(Number), commandsPerTask: expect.any(Number),
      memoryBytesPerTask: expect.any(Number),
    }));
    // 64 partitions hash to slots on all three primaries, so each runs scripts.
    expect(p.scriptCallsPerTask).toBeGreaterThan(0);
    addresses.add(p.address);
  }
  expect(addresses.size).toBe(3);
  const sumScripts = r.redis.perPrimary.reduce((s: number, p: { scriptCallsPerTask: number }) => s + p.scriptCallsPerTask, 0);
  expect(sumScripts).toBeCloseTo(r.redis.scriptCallsPerTask, 1);
}, 40_000);

test('zdmatch bench without --json prints its summary as a plain table when piped: no colour codes in a saved file', async () => {
  const { stdout } = await bench(['--local', '--mode', 'throughput', '--tasks', '100', '--warmup', '20', '--no-progress'], 40_000);
  expect(stdout).toMatch(/│ Steps started \/ expected\s+│ 100 \/ 100\s+│/);
  expect(stdout).toMatch(/│ Redis CPU \/ Step\s+│ [\d.]+ µs/);
  // The figures a reader compares runs by, each on its row with its unit.
  expect(stdout).toMatch(/│ Steps\/s\s+│ [\d.]+ \(over [\d.]+s\)\s+│/);
  expect(stdout).toMatch(/│ submit → handler start\s+│ p50 [\d.]+ · p99 [\d.]+ · max [\d.]+ ms \(n=\d+\)\s+│/);
  expect(stdout).toMatch(/│ Redis commands \/ Step\s+│ [\d.]+\s+│/);
  expect(stdout).toMatch(/│ node CPU \/ Step\s+│ [\d.]+ µs\s+│/);
  expect(stdout).toMatch(/│ worker CPU \/ Step\s+│ [\d.]+ µs\s+│/);
  const [, p50, p99, max] = /submit → handler start\s+│ p50 ([\d.]+) · p99 ([\d.]+) · max ([\d.]+)/.exec(stdout)!.map(Number);
  const [, perSec, overSec] = /│ Steps\/s\s+│ ([\d.]+) \(over ([\d.]+)s\)/.exec(stdout)!.map(Number);
  expect(perSec! * overSec!).toBeGreaterThan(80); // the 100 Steps over the time they took
  expect(perSec! * overSec!).toBeLessThan(120);
  expect(p50).toBeLessThanOrEqual(p99!);
  expect(p99).toBeLessThanOrEqual(max!);
  expect(stdout).not.toContain('\u001b[');
}, 45_000);

test('zdmatch bench fails, naming the error, when its enqueues fail', async () => {
  // Guards the exit code: every enqueue refused (a batch over limits.maxBatch) printed
  // "0 / 200 (200 enqueue errors)" and exited 0, the error itself unsaid.
  const redis = await startEmbeddedRedis();
  const t = await startTestNode(redis.url, uniquePrefix('bench-err'), { 'limits.maxBatch': 10, 'auth.enabled': false });
  try {
    const err = await bench(['--address', t.node.apiAddress, '--mode', 'throughput', '--tasks', '200', '--warmup', '0', '--batch', '100', '--no-progress'], 30_000)
      .then(() => undefined, (e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toMatch(/error: 200 enqueues failed; the last: .*limits\.maxBatch/);
  } finally {
    await t.close();
    await redis.stop();
  }
}, 40_000);
