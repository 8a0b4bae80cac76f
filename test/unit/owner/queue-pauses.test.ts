/**
 * A queue's offers paused after one failed (src/owner/queue-pauses.ts): the
 * pause doubles while failures follow each other, is at least twice as long
 * as the failed offer took, never exceeds its bound, ends by putting the queue
 * back, lets one offer out at a time until one settles, and holds no other
 * queue.
 */
import { QueuePauses } from '../../../src/owner/queue-pauses';
import type { QueueHeads } from '../../../src/owner/heads';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** Only the object's identity matters to QueuePauses. */
const queue = (name: string) => ({ name }) as unknown as QueueHeads;

function setup(firstMs = 100, maxMs = 5000) {
  const resumed: QueueHeads[] = [];
  return { pauses: new QueuePauses((q) => resumed.push(q), firstMs, maxMs), resumed };
}

/** How long after `failed` the queue comes back, in ms (at most `limitMs`). */
function pauseOf(p: QueuePauses, resumed: QueueHeads[], q: QueueHeads, limitMs = 120_000): number {
  const before = resumed.length;
  let waited = 0;
  while (resumed.length === before && waited < limitMs) {
    jest.advanceTimersByTime(10);
    waited += 10;
  }
  expect(p.held(q)).toBe(false);
  return waited;
}

it('holds a queue for the first pause after a failed offer, then puts it back', () => {
  const { pauses, resumed } = setup();
  const q = queue('a');
  expect(pauses.held(q)).toBe(false);
  expect(pauses.sent(q)).toBe(false); // a queue that never failed offers freely
  pauses.failed(q, 0);
  expect(pauses.held(q)).toBe(true);
  jest.advanceTimersByTime(90);
  expect(resumed).toEqual([]);
  expect(pauseOf(pauses, resumed, q)).toBe(10);
  expect(resumed).toEqual([q]);
});

it('doubles the pause while offers fail in a row, up to its bound', () => {
  const { pauses, resumed } = setup(100, 1000);
  const q = queue('a');
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) {
    pauses.failed(q, 0);
    seen.push(pauseOf(pauses, resumed, q));
    expect(pauses.sent(q)).toBe(true); // the probe after the pause
  }
  expect(seen).toEqual([100, 200, 400, 800, 1000, 1000]);
});

it('pauses at least twice as long as the failed offer took', () => {
  const { pauses, resumed } = setup(100, 5000);
  const q = queue('a');
  pauses.failed(q, 1500);
  expect(pauseOf(pauses, resumed, q)).toBe(3000);
  expect(pauses.sent(q)).toBe(true);
  pauses.failed(q, 10_000); // even so, never past the bound
  expect(pauseOf(pauses, resumed, q)).toBe(5000);
});

it('lets one offer out after the pause and holds the queue until it settles, then offers freely again', () => {
  const { pauses, resumed } = setup();
  const q = queue('a');
  pauses.failed(q, 0);
  pauseOf(pauses, resumed, q);
  expect(pauses.sent(q)).toBe(true);
  expect(pauses.held(q)).toBe(true); // its probe is out
  expect(pauses.settled(q)).toBe(true);
  expect(pauses.held(q)).toBe(false);
  expect(pauses.sent(q)).toBe(false);
  // A settled queue starts again from the first pause when it fails next.
  pauses.failed(q, 0);
  expect(pauseOf(pauses, resumed, q)).toBe(100);
});

it('counts the other offers of one failure, sent before it failed, as that failure', () => {
  const { pauses, resumed } = setup();
  const q = queue('a');
  pauses.failed(q, 0);
  pauses.failed(q, 0);
  pauses.failed(q, 0);
  expect(pauseOf(pauses, resumed, q)).toBe(100);
  expect(resumed).toEqual([q]); // put back once
  jest.advanceTimersByTime(1000);
  expect(resumed).toEqual([q]);
});

it('holds only the queue that failed', () => {
  const { pauses, resumed } = setup();
  const [a, b] = [queue('a'), queue('b')];
  pauses.failed(a, 0);
  expect(pauses.held(a)).toBe(true);
  expect(pauses.held(b)).toBe(false);
  expect(pauses.sent(b)).toBe(false);
  expect(pauses.settled(b)).toBe(false);
  expect(pauses.held(a)).toBe(true);
  pauseOf(pauses, resumed, a);
  expect(resumed).toEqual([a]);
});

it('does not put back a queue whose pause a later settle ended', () => {
  const { pauses, resumed } = setup();
  const q = queue('a');
  pauses.failed(q, 0);
  expect(pauses.settled(q)).toBe(true); // an offer of its, sent before the failure, settled
  jest.advanceTimersByTime(1000);
  expect(resumed).toEqual([]);
  expect(pauses.held(q)).toBe(false);
});
