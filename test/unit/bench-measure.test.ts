/**
 * The measurements of `zdmatch bench`: the /proc readings (wakeups: voluntary
 * context switches of a process's main thread, and their absence for a process
 * that is gone), the sample buffers and the latency by second.
 */
import { spawnSync } from 'node:child_process';
import { procWakeups, timeline } from '../../src/cli/bench/measure';
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
