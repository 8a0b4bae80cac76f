/**
 * The /proc readings of `zdmatch bench`: wakeups (voluntary context switches
 * of a process's main thread) and their absence for a process that is gone.
 */
import { spawnSync } from 'node:child_process';
import { procWakeups } from '../../src/cli/bench/measure';

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
