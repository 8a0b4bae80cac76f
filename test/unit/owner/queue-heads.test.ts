/**
 * QueueHeads: its count of stale heads in a row (passed: one incomplete seek
 * per STALE_RUN gone heads in a row, none while live heads break the run), and
 * a task that becomes ready while a refill is in flight.
 */
import { HEADS_WINDOW, QueueHeads, STALE_RUN } from '../../../src/owner/heads';

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

describe('a task made ready again while out on an offer', () => {
  // Guards the owner keeping a READY notice that comes while the task's earlier offer is
  // out (it was started, then released or retried at once): the answer forgot the id and
  // the task waited in Redis for the 5-s backlog count.
  const loaded = () => {
    const q = heads();
    q.fill([], false);
    q.add({ taskId: 't1', readyAt: 1 });
    expect(q.shift()?.taskId).toBe('t1'); // offered
    return q;
  };

  it('comes back to the window once the offer settles', () => {
    const q = loaded();
    expect(q.add({ taskId: 't1', readyAt: 5 })).toBe(false); // still out
    expect(q.size).toBe(0);
    expect(q.settle('t1')).toBe(true);
    expect(q.peek()).toEqual({ taskId: 't1', readyAt: 5 });
  });

  it('is forgotten by a settle with no notice since, and by a held task leaving as not ready', () => {
    const q = loaded();
    expect(q.settle('t1')).toBe(false);
    expect(q.size).toBe(0);
    q.hold('t2');
    q.add({ taskId: 't2', readyAt: 3 });
    expect(q.release('t2')).toBe(false); // not ready now: newer than the ready notice
    expect(q.size).toBe(0);
    expect(q.idle).toBe(true);
  });

  it('is not taken for a notice of a head still in the window', () => {
    const q = heads();
    q.fill([{ taskId: 't1', readyAt: 1 }], false);
    expect(q.add({ taskId: 't1', readyAt: 1 })).toBe(false);
    q.shift();
    expect(q.settle('t1')).toBe(false); // offered once, not twice
  });
});

describe('the window', () => {
  const loaded = () => {
    const q = heads();
    q.fill([], false);
    return q;
  };

  it('keeps heads of the same readyAt in the order they became ready', () => {
    const q = loaded();
    q.add({ taskId: 't1', readyAt: 5 });
    q.add({ taskId: 't2', readyAt: 5 });
    q.add({ taskId: 't3', readyAt: 5 });
    expect([q.shift()?.taskId, q.shift()?.taskId, q.shift()?.taskId]).toEqual(['t1', 't2', 't3']);
  });

  it('puts a task ready before every head left at the front once earlier heads were offered', () => {
    const q = loaded();
    q.add({ taskId: 't1', readyAt: 1 });
    q.add({ taskId: 't3', readyAt: 3 });
    expect(q.shift()?.taskId).toBe('t1');
    q.add({ taskId: 't2', readyAt: 2 });
    expect([q.shift()?.taskId, q.shift()?.taskId, q.shift()]).toEqual(['t2', 't3', undefined]);
  });

  it('holds at most HEADS_WINDOW heads: the task after them is left to a refill', () => {
    const q = loaded();
    for (let i = 0; i < HEADS_WINDOW; i++) expect(q.add({ taskId: `t${i}`, readyAt: i })).toBe(true);
    expect(q.more).toBe(false);
    expect(q.add({ taskId: 'over', readyAt: HEADS_WINDOW })).toBe(false);
    expect(q.size).toBe(HEADS_WINDOW);
    expect(q.more).toBe(true);

    const r = heads();
    r.fill(Array.from({ length: HEADS_WINDOW + 1 }, (_, i) => ({ taskId: `t${i}`, readyAt: i })), false);
    expect(r.size).toBe(HEADS_WINDOW);
    expect(r.more).toBe(true); // the one past the window is read by the next refill
  });

  it('takes a task dropped from the window back when it is ready again', () => {
    const q = loaded();
    q.add({ taskId: 't1', readyAt: 1 });
    expect(q.drop('t1')).toBe(true);
    expect(q.has('t1')).toBe(false);
    expect(q.add({ taskId: 't1', readyAt: 9 })).toBe(true);
    expect(q.peek()).toEqual({ taskId: 't1', readyAt: 9 });
  });
});

describe('a refill that read only known ids', () => {
  it('reads again once a held task is handed back to the queue', () => {
    const q = heads();
    q.hold('t1');
    q.fill([{ taskId: 't1', readyAt: 1 }], true); // a full page, every id known
    expect(q.refillWouldRepeat).toBe(true);
    q.unhold({ taskId: 't1', readyAt: 1 });
    expect(q.refillWouldRepeat).toBe(false);
  });

  it('reads again when a task became ready while it was in flight', () => {
    const q = heads();
    q.hold('t1');
    q.loading = true;
    q.add({ taskId: 't2', readyAt: 2 }); // left to the refill in flight, which read before it was written
    q.fill([{ taskId: 't1', readyAt: 1 }], true);
    q.loading = false;
    expect(q.refillWouldRepeat).toBe(false);
    expect(q.more).toBe(true);
  });
});
