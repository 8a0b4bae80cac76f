import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { boundedSignal } from '../../../src/util/bounded-signal';

// A collection between creating the signal and its deadline is what lost the
// composite's timeout before (nodejs/node#57736); force one.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function abortedWithin(signal: AbortSignal, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(true); }, { once: true });
  });
}

it('aborts at its deadline even when a collection runs in between', async () => {
  const outer = new AbortController();
  const { signal } = boundedSignal(outer.signal, 100);
  // The bug never aborts at all, so a wide window loses nothing: a CI runner whose worker
  // held a 1.6-GB heap once let 2 s pass here without the 100-ms deadline being heard.
  const aborted = abortedWithin(signal, 10_000);
  await new Promise((r) => setTimeout(r, 20));
  gc();
  expect(await aborted).toBe(true);
  expect((signal.reason as Error).name).toBe('TimeoutError');
  expect(outer.signal.aborted).toBe(false);
});

it('aborts with the outer signal, and its reason, before the deadline', async () => {
  const outer = new AbortController();
  const { signal } = boundedSignal(outer.signal, 10_000);
  const aborted = abortedWithin(signal, 2000);
  outer.abort(new Error('caller gone'));
  expect(await aborted).toBe(true);
  expect((signal.reason as Error).message).toBe('caller gone');
});

it('is aborted at once when the outer signal already is', () => {
  const outer = new AbortController();
  outer.abort(new Error('early'));
  expect(boundedSignal(outer.signal, 10_000).signal.aborted).toBe(true);
});

it('stops its timer and its listener when disposed', async () => {
  const outer = new AbortController();
  const bounded = boundedSignal(outer.signal, 50);
  bounded.dispose();
  const aborted = abortedWithin(bounded.signal, 200);
  outer.abort();
  expect(await aborted).toBe(false);
});

// A long-lived outer signal (a node's, a client's) gets one bounded signal per call: each must
// leave nothing on it, nor a timer holding the process, once it has aborted either way.
it('leaves no listener on the outer signal once its deadline passed', async () => {
  const outer = new AbortController();
  const { signal } = boundedSignal(outer.signal, 20);
  expect(getEventListeners(outer.signal, 'abort')).toHaveLength(1);
  expect(await abortedWithin(signal, 2000)).toBe(true);
  expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
});

it('stops its timer when the outer signal aborts first', () => {
  jest.useFakeTimers();
  try {
    const outer = new AbortController();
    boundedSignal(outer.signal, 60_000);
    expect(jest.getTimerCount()).toBe(1);
    outer.abort();
    expect(jest.getTimerCount()).toBe(0);
  } finally {
    jest.useRealTimers();
  }
});
