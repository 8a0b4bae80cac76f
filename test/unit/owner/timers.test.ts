/**
 * The owner's one timer for many deadlines (src/owner/timers.ts): cancelled
 * entries behind a live one do not stay in the heap until their time, and the
 * live ones still fire, in due order.
 */
import { Timers } from '../../../src/owner/timers';

const DAY = 86_400_000;

it('drops cancelled entries that wait behind a live one, and still fires the live ones in order', async () => {
  const timers = new Timers({ now: () => Date.now() });
  const fired: string[] = [];
  const now = Date.now();
  timers.schedule(now + 20, () => fired.push('first'));
  // A far deadline armed and replaced, again and again: each one cancelled days ahead of its time.
  for (let i = 0; i < 10_000; i++) timers.schedule(now + DAY + i, () => fired.push(`far-${i}`)).cancel();
  timers.schedule(now + 30, () => fired.push('second'));
  const kept = timers.schedule(now + 2 * DAY, () => fired.push('kept'));
  expect(timers.size).toBeLessThan(100);
  await new Promise((r) => setTimeout(r, 60));
  expect(fired).toEqual(['first', 'second']);
  expect(timers.size).toBe(1);
  kept.cancel();
  kept.cancel(); // twice is once
  timers.stop();
  expect(timers.size).toBe(0);
});

it('fires an entry scheduled after a later one at its own time, not at the later one\'s', async () => {
  const timers = new Timers({ now: () => Date.now() });
  const fired: string[] = [];
  const now = Date.now();
  timers.schedule(now + 1000, () => fired.push('late'));
  timers.schedule(now + 20, () => fired.push('early'));
  await new Promise((r) => setTimeout(r, 300));
  expect(fired).toEqual(['early']);
  timers.stop();
});

it('never runs a cancelled entry, and runs the others due at the same time in the order they were scheduled', async () => {
  const timers = new Timers({ now: () => Date.now() });
  const fired: string[] = [];
  const at = Date.now() + 20;
  timers.schedule(at, () => fired.push('a'));
  timers.schedule(at, () => fired.push('b')).cancel();
  timers.schedule(at, () => fired.push('c'));
  timers.schedule(at, () => fired.push('d'));
  await new Promise((r) => setTimeout(r, 100));
  expect(fired).toEqual(['a', 'c', 'd']);
  expect(timers.size).toBe(0);
  timers.stop();
});
