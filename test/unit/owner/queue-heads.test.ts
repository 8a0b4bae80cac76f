/**
 * QueueHeads: its count of stale heads in a row (passed: one incomplete seek
 * per STALE_RUN gone heads in a row, none while live heads break the run), and
 * a task that becomes ready while a refill is in flight.
 */
import { QueueHeads, STALE_RUN } from '../../../src/owner/heads';

const heads = () => new QueueHeads(0, 'acme:order:pack', 'acme', 'order', 'pack');

it('counts one incomplete seek per run of STALE_RUN gone heads', () => {
  const q = heads();
  const seeks = Array.from({ length: 3 * STALE_RUN }, () => q.passed(true)).filter(Boolean).length;
  expect(seeks).toBe(3);
});

it('starts the run again at a live head', () => {
  const q = heads();
  for (let i = 0; i < STALE_RUN - 1; i++) expect(q.passed(true)).toBe(false);
  expect(q.passed(false)).toBe(false);
  for (let i = 0; i < STALE_RUN - 1; i++) expect(q.passed(true)).toBe(false);
  expect(q.passed(true)).toBe(true);
});

describe('a task that becomes ready while a refill is in flight', () => {
  it('keeps `more` set after that refill, so the next one reads it', () => {
    const q = heads(); // Redis may hold more: a refill is due
    expect(q.more).toBe(true);
    q.loading = true; // the refill has read the sorted set and waits for its answer
    expect(q.add({ taskId: 't1', readyAt: 1 })).toBe(false); // refused: left to the refill
    q.fill([], false); // the answer, read before t1 was written
    q.loading = false;
    expect(q.more).toBe(true);
    q.fill([{ taskId: 't1', readyAt: 1 }], false); // the next refill finds it
    expect(q.more).toBe(false);
    expect(q.peek()?.taskId).toBe('t1');
  });
});

describe('an idle queue (one its partition may forget)', () => {
  const empty = () => {
    const q = heads();
    q.fill([], false); // loaded: Redis holds nothing more
    return q;
  };

  it('is idle only with no heads, nothing more in Redis, no refill and no timer', () => {
    expect(heads().idle).toBe(false); // not loaded yet: Redis may hold more
    const q = empty();
    expect(q.idle).toBe(true);
    q.loading = true;
    expect(q.idle).toBe(false);
    q.loading = false;
    q.wakeAt = 5_000; // a delayed entry's timer refers to it
    expect(q.idle).toBe(false);
    q.wakeAt = Infinity;
    q.add({ taskId: 't1', readyAt: 1 });
    expect(q.idle).toBe(false);
  });

  it('is not idle while a head is out on an offer or a task is held in a waiting phase', () => {
    const q = empty();
    q.add({ taskId: 't1', readyAt: 1 });
    q.shift(); // offered: the answer comes back to this queue
    expect(q.idle).toBe(false);
    q.settle('t1');
    expect(q.idle).toBe(true);
    q.hold('t2'); // a sticky or sync-match phase may hand it back here
    expect(q.idle).toBe(false);
  });
});
