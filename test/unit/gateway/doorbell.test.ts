/**
 * subscribeBell: a ring between a read and the wait is never missed, one ring
 * wakes one wait (the next wait sleeps until a new ring), and the caller going
 * away ends a wait at once rather than at its timeout.
 */
import { EventEmitter, getEventListeners } from 'node:events';
import { subscribeBell } from '../../../src/gateway/doorbell';

const LONG = 60_000;

test('a ring before the wait is kept for it, and used up by it', async () => {
  const e = new EventEmitter();
  const sub = subscribeBell(e, ['t'], new AbortController().signal);
  e.emit('t');
  await expect(sub.wait(LONG)).resolves.toBe(true);
  await expect(sub.wait(0)).resolves.toBe(false);
  sub.close();
});

test('a ring that woke a wait does not wake the next one', async () => {
  const e = new EventEmitter();
  const sub = subscribeBell(e, ['t'], new AbortController().signal);
  const woken = sub.wait(LONG);
  e.emit('t');
  await expect(woken).resolves.toBe(true);
  await expect(sub.wait(0)).resolves.toBe(false);
  sub.close();
});

test('an abort ends a wait at once, and a wait on an aborted signal does not start', async () => {
  const e = new EventEmitter();
  const ac = new AbortController();
  const sub = subscribeBell(e, ['t'], ac.signal);
  const waiting = sub.wait(LONG);
  ac.abort();
  await expect(waiting).resolves.toBe(false);
  const started = Date.now();
  await expect(sub.wait(LONG)).resolves.toBe(false);
  expect(Date.now() - started).toBeLessThan(LONG / 2);
  sub.close();
});

test('one subscription to an event named twice is rung once and closes clean', async () => {
  const e = new EventEmitter();
  const sub = subscribeBell(e, ['t', 't'], new AbortController().signal);
  expect(e.listenerCount('t')).toBe(1);
  sub.close();
  expect(e.listenerCount('t')).toBe(0);
});

test('a wait that ends by ring or timeout leaves no listener on the caller\'s signal', async () => {
  const e = new EventEmitter();
  const ac = new AbortController();
  const sub = subscribeBell(e, ['t'], ac.signal);
  const rung = sub.wait(LONG);
  e.emit('t');
  await rung;
  await sub.wait(1);
  expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  sub.close();
});

test('a wait woken by a ring leaves no timer behind to swallow a later ring', async () => {
  jest.useFakeTimers();
  try {
    const e = new EventEmitter();
    const sub = subscribeBell(e, ['t'], new AbortController().signal);
    const woken = sub.wait(1_000);
    e.emit('t');
    await expect(woken).resolves.toBe(true);
    // Rung after that wait ended and before the next began: kept for the next one.
    e.emit('t');
    jest.advanceTimersByTime(1_000);
    await expect(sub.wait(0)).resolves.toBe(true);
    expect(jest.getTimerCount()).toBe(0);
    sub.close();
  } finally {
    jest.useRealTimers();
  }
});
