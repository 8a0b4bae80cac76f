/**
 * The measurements of `zdmatch bench`: the /proc readings (wakeups: voluntary
 * context switches of a process's main thread, and their absence for a process
 * that is gone; the time a process waited for a core; the machine's busy cores),
 * the sample buffers and the latency by second.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  machineCpu, machineTicks, parseMachineTicks, parseRunQueueWaitSec, procCpuSec, procRunQueueWaitSec, procWakeups, timeline,
} from '../../src/cli/bench/measure';
import { Samples } from '../../src/cli/bench/protocol';

test('procWakeups counts each time the main thread sleeps and is woken', () => {
  const before = procWakeups(process.pid);
  expect(before).toEqual(expect.any(Number));
  // Ten sleeps of the main thread (a futex wait that nothing ends early), each a
  // voluntary switch however loaded the machine: a timer wait would not block at
  // all when the loop comes to it late.
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 10; i++) Atomics.wait(cell, 0, 0, 5);
  expect(procWakeups(process.pid)! - before!).toBeGreaterThanOrEqual(10);
});

test('procWakeups is undefined for a process that no longer exists', () => {
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  expect(procWakeups(gone)).toBeUndefined();
});

test('parseRunQueueWaitSec reads the second field of a schedstat line: ns spent runnable, not running', () => {
  expect(parseRunQueueWaitSec('106209 78817000 2\n')).toBeCloseTo(0.078817, 9);
  expect(parseRunQueueWaitSec('')).toBeUndefined();
  expect(parseRunQueueWaitSec('1 2')).toBeUndefined();
});

test('procRunQueueWaitSec counts the time a process wanted a core another held', async () => {
  // Three spinners on one core: each runs a third of the time and waits the other two.
  // The CPU field of the same line would read a third: under half of the time, and so failing.
  const spinners = [0, 1, 2].map(() => spawn('taskset', ['-c', '0', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' }));
  try {
    await new Promise((r) => setTimeout(r, 300));
    const pid = spinners[0]!.pid!;
    // The clock is read outside the readings, so the wait they span cannot outlast it.
    const t0 = performance.now();
    const [wait0, cpu0] = [procRunQueueWaitSec(pid)!, procCpuSec(pid)!];
    await new Promise((r) => setTimeout(r, 1000));
    const [wait1, cpu1] = [procRunQueueWaitSec(pid)!, procCpuSec(pid)!];
    const t1 = performance.now();
    const elapsed = (t1 - t0) / 1000;
    expect(wait1 - wait0).toBeGreaterThanOrEqual(0.5 * elapsed);
    expect(wait1 - wait0).toBeGreaterThan(cpu1 - cpu0);
    expect(wait1 - wait0).toBeLessThanOrEqual(elapsed + 0.01);
  } finally {
    for (const s of spinners) s.kill('SIGKILL');
  }
});

test('procRunQueueWaitSec is undefined for a process that no longer exists', () => {
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  expect(procRunQueueWaitSec(gone)).toBeUndefined();
});

test('timed samples keep each time with its value, past the cap too', () => {
  const s = new Samples(100, 2);
  for (let i = 0; i < 5000; i++) s.add(i, i * 10);
  const v = s.values();
  expect(v.length).toBe(200);
  for (let i = 0; i < v.length; i += 2) expect(v[i + 1]).toBe(v[i]! * 10);
  // the reservoir replaced samples: not only the first 100 are left
  expect(Math.max(...v.filter((_, i) => i % 2 === 0))).toBeGreaterThan(99);
});

test('single samples grow past their first buffer and stop at the cap', () => {
  const s = new Samples(3000);
  for (let i = 0; i < 2500; i++) s.add(i);
  expect(Array.from(s.values().slice(0, 3))).toEqual([0, 1, 2]);
  expect(s.values().length).toBe(2500);
  for (let i = 0; i < 1000; i++) s.add(i);
  expect(s.values().length).toBe(3000);
});

test('timeline gives the percentiles of each second from the origin, empty seconds included', () => {
  const origin = 1_000_000;
  const worker1 = Float64Array.from([origin + 10, 5, origin + 900, 7, origin + 2500, 1]);
  const worker2 = Float64Array.from([origin + 400, 9, origin - 3, 2]); // a start just before the origin counts in second 0
  expect(timeline([worker1, worker2], origin)).toEqual([
    { atSec: 0, n: 4, p50: 5, p99: 9, max: 9 },
    { atSec: 1, n: 0, p50: null, p99: null, max: null },
    { atSec: 2, n: 1, p50: 1, p99: 1, max: 1 },
  ]);
  expect(timeline([], origin)).toEqual([]);
  expect(timeline([worker1], origin, 500).map((b) => b.n)).toEqual([1, 1, 0, 0, 0, 1]);
});

test('parseMachineTicks reads the all-cores line of /proc/stat: idle and iowait are not busy, steal apart', () => {
  const stat = [
    'cpu  272530 10 97127 236822 576 3 5339 40 7 0',
    'cpu0 132014 0 49160 122166 62 0 2410 0 0 0',
    'intr 1 2 3',
  ].join('\n');
  // user + nice + system + irq + softirq; guest (7) is in user already.
  expect(parseMachineTicks(stat)).toEqual({ busy: 272530 + 10 + 97127 + 3 + 5339, steal: 40, total: 272530 + 10 + 97127 + 236822 + 576 + 3 + 5339 + 40 });
  // A kernel older than steal's column (2.6.11) has seven.
  expect(parseMachineTicks('cpu  1 2 3 4 5 6 7\n')).toEqual({ busy: 1 + 2 + 3 + 6 + 7, steal: 0, total: 28 });
  expect(parseMachineTicks('cpu0 1 2 3 4 5 6 7 8\n')).toBeUndefined();
  expect(parseMachineTicks('')).toBeUndefined();
});

test('machineTicks reads this machine, and its busy ticks grow while this process spins', () => {
  const before = machineTicks()!;
  expect(before.total).toBeGreaterThan(before.busy);
  const until = Date.now() + 100;
  while (Date.now() < until) { /* busy */ }
  const after = machineTicks()!;
  // USER_HZ is 100: 100 ms of one core's work is about 10 ticks.
  expect(after.busy - before.busy).toBeGreaterThanOrEqual(5);
});

test("machineCpu gives busy cores over the phase, the run's share of them, and the rest", () => {
  const before = { busy: 1000, steal: 10, total: 4000 };
  // 2 cores over 2 s at 100 ticks/s: 400 ticks, 300 busy, 20 stolen.
  const after = { busy: 1300, steal: 30, total: 4400 };
  expect(machineCpu(before, after, 2, 2, 2.5)).toEqual({ cores: 2, busy: 1.5, run: 1.25, other: 0.25, stolen: 0.1 });
  // The run's processes are read apart from the machine's ticks: never more than all of it.
  expect(machineCpu(before, after, 2, 2, 3.2)).toEqual({ cores: 2, busy: 1.5, run: 1.5, other: 0, stolen: 0.1 });
  expect(machineCpu(undefined, after, 2, 2, 1)).toBeUndefined();
  expect(machineCpu(before, before, 2, 2, 1)).toBeUndefined();
  expect(machineCpu(before, after, 2, 0, 1)).toBeUndefined();
});
