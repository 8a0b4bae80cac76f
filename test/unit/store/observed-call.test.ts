/**
 * What the task and fetch stores share about their script calls
 * (store/observed-call.ts): each call's time told in seconds, whether it
 * answered or failed, and a done record's TTL never under a second.
 */
import { doneRetention, timedCall } from '../../../src/store/observed-call';

it('keeps a done record at least a second, and as long as outcomes.retention says above that', () => {
  expect(doneRetention(0)).toBe(1000);
  expect(doneRetention(999)).toBe(1000);
  expect(doneRetention(1000)).toBe(1000);
  expect(doneRetention(1001)).toBe(1001);
  expect(doneRetention(86_400_000)).toBe(86_400_000);
});

it('tells the time of a call that answers, in seconds, under its command name', async () => {
  const seen: [string, number][] = [];
  const call = new Promise<string>((resolve) => setTimeout(() => resolve('ok'), 30));
  expect(await timedCall((c, s) => seen.push([c, s]), 'startTasks', call)).toBe('ok');
  expect(seen.map(([c]) => c)).toEqual(['startTasks']);
  expect(seen[0]![1]).toBeGreaterThanOrEqual(0.02);
  expect(seen[0]![1]).toBeLessThan(1);
});

it('tells the time of a call that fails, and passes its error on', async () => {
  const seen: string[] = [];
  const err = new Error('NOSCRIPT');
  await expect(timedCall((c) => seen.push(c), 'completeTasks', Promise.reject(err))).rejects.toBe(err);
  expect(seen).toEqual(['completeTasks']);
});

it('adds no promise of its own to a call nothing observes (the hot path allocates nothing for it)', () => {
  const call = Promise.resolve(1);
  expect(timedCall(undefined, 'x', call)).toBe(call);
});
