/**
 * The /proc readings of `zdmatch bench`: wakeups (voluntary context switches
 * of a process's main thread) and their absence for a process that is gone.
 */
import { spawnSync } from 'node:child_process';
import { procWakeups } from '../../src/cli/bench/measure';

test('procWakeups counts each time the main thread sleeps and is woken', async () => {
  const before = procWakeups(process.pid);
  expect(before).toEqual(expect.any(Number));
  // Ten timer waits: the event loop blocks in epoll ten times at least.
  for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 5));
  expect(procWakeups(process.pid)! - before!).toBeGreaterThanOrEqual(10);
});

test('procWakeups is undefined for a process that no longer exists', () => {
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  expect(procWakeups(gone)).toBeUndefined();
});
