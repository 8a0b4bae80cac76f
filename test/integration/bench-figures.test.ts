/**
 * Figures of `zdmatch bench` against what docs/benchmarks.md says they measure,
 * on tiny --local runs.
 */
import { execFile, spawn } from 'node:child_process';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';

function bench(args: string[], timeoutMs: number): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI_MAIN, 'bench', ...args],
      { cwd: REPO_ROOT, timeout: timeoutMs },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').pop()!))),
    );
  });
}

test('a rate run that keeps up reads its offered rate: Steps started ÷ the time until the last one started', async () => {
  // 20/s for 2 s: a Step every 50 ms, the last sent 50 ms before the end, each started
  // within a few ms. The phase's end was taken as the moment the last start was heard
  // of (after the producer's last pacing tick and a worker's next progress report), so
  // such a run read 19 Steps/s over more than its 2 s: "a backlog built up".
  const r = await bench(['--local', '--mode', 'rate', '--rate', '20', '--duration', '2', '--warmup', '50', '--json', '--no-progress'], 40_000);
  expect(r).toMatchObject({ mode: 'rate', enqueueErrors: 0, timedOut: false });
  expect(r.completed).toBeGreaterThanOrEqual(39);
  expect(r.elapsedSec).toBeLessThan(2);
  expect(r.tasksPerSec).toBeGreaterThanOrEqual(20);
}, 45_000);

test('enqueuedAt → handler start reads less than submit → handler start: the enqueue stamp comes after the send', async () => {
  // The server stamps enqueuedAt in whole ms (Date.now()), the handler's start is hi-res:
  // their difference read on average 0.5 ms long, and at low load enqueuedAt → start p50
  // came out above submit → start p50 (1.03 against 0.67 ms), though it is a part of it.
  const r = await bench(['--local', '--mode', 'rate', '--rate', '200', '--duration', '2', '--warmup', '200', '--json', '--no-progress'], 40_000);
  expect(r).toMatchObject({ mode: 'rate', enqueueErrors: 0, timedOut: false });
  const { submitToStart, enqueueToStart } = r.latencyMs;
  expect(enqueueToStart.n).toBe(submitToStart.n);
  expect(enqueueToStart.p50).toBeLessThan(submitToStart.p50);
}, 45_000);

test('load the run did not make is counted as other, not as the run\'s', async () => {
  // A process that spins for the whole run: a neighbour on a shared machine.
  const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  try {
    const r = await bench(['--local', '--mode', 'throughput', '--tasks', '5000', '--warmup', '200', '--json', '--no-progress'], 40_000);
    expect(r).toMatchObject({ completed: 5000, timedOut: false });
    const m = r.machineCpu as { cores: number; busy: number; run: number; other: number };
    // The run holds every process of a --local run: the node, Redis, the worker and the producer
    // (their CPU per Step over Steps/s, within the few hundred ms the phase outlasts its Steps).
    const c = r.cpuUsecPerTask as { node: number; workers: number; producers: number };
    const theirs = ((c.node + c.workers + c.producers + r.redis.cpuUsecPerTask) * r.completed) / 1e6 / r.elapsedSec;
    expect(m.run).toBeGreaterThanOrEqual(0.5 * theirs);
    // The spinner is one of six runnable processes on this machine's cores (with Redis, the node,
    // the worker, the producer and the bench): a few tenths of a core at the least, all of it other.
    expect(m.other).toBeGreaterThanOrEqual(0.2);
    expect(m.busy).toBeCloseTo(m.run + m.other, 1);
  } finally {
    spinner.kill('SIGKILL');
  }
}, 45_000);

test('a run on one core reads its processes waiting for it, each at most the phase', async () => {
  // taskset pins the bench and every process it starts (the node, Redis, the worker, the
  // producer) to one core: each one's main thread wants it while another holds it.
  const r = await new Promise<Record<string, any>>((resolve, reject) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    execFile(
      'taskset',
      ['-c', '0', process.execPath, CLI_MAIN, 'bench', '--local', '--mode', 'throughput', '--tasks', '6000', '--warmup', '200', '--json', '--no-progress'],
      { cwd: REPO_ROOT, timeout: 40_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').pop()!))),
    );
  });
  expect(r).toMatchObject({ completed: 6000, timedOut: false });
  const w = r.waitingForCore as Record<'node' | 'workers' | 'producers' | 'redis', number>;
  // Cores' worth over the phase, one process a role: never more than one each.
  for (const role of ['node', 'workers', 'producers', 'redis'] as const) {
    expect(w[role]).toBeGreaterThanOrEqual(0);
    expect(w[role]).toBeLessThanOrEqual(1.05);
  }
  // The node, the hub of every Step, waited a good part of the phase (0.54 and 0.58 read
  // here). Per Step it would read nothing; in seconds, over a phase of about 3 s, more than 1.
  expect(w.node).toBeGreaterThanOrEqual(0.2);
  expect(w.node + w.workers + w.producers + w.redis).toBeGreaterThanOrEqual(0.5);
}, 45_000);
