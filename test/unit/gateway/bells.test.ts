/**
 * The two doorbells skip their work when nobody listens (every enqueue and
 * every outcome rings one): these tests pin down that a listener is still
 * woken, and that the bookkeeping behind "nobody listens" cannot drift.
 */
import { FETCH_SERVED_MS, FetchBell } from '../../../src/gateway/fetch-bell';
import { OutcomeBell } from '../../../src/gateway/outcome-bell';

describe('FetchBell', () => {
  afterEach(() => jest.useRealTimers());

  test('a ring for later schedules a timer only while a fetch of the topic is subscribed', async () => {
    jest.useFakeTimers({ now: 1_000 });
    const bell = new FetchBell(() => Date.now());
    bell.ringAt('t:f:s', 5_000);
    expect(jest.getTimerCount()).toBe(0);

    const sub = bell.subscribe(['t:f:s'], new AbortController().signal);
    bell.ringAt('t:f:other', 5_000);
    expect(jest.getTimerCount()).toBe(0);
    bell.ringAt('t:f:s', 5_000);
    expect(jest.getTimerCount()).toBe(1);

    const woken = sub.wait(60_000);
    await jest.advanceTimersByTimeAsync(3_999);
    let settled = false;
    void woken.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await expect(woken).resolves.toBe(true);
    sub.close();
    bell.stop();
  });

  test('a ring due now reaches a subscribed fetch, and nothing once it has unsubscribed', async () => {
    const bell = new FetchBell();
    const sub = bell.subscribe(['q'], new AbortController().signal);
    bell.ringAt('q', Date.now() - 1);
    await expect(sub.wait(0)).resolves.toBe(true);
    sub.close();
    bell.ringAt('q', Date.now() - 1);
    await expect(sub.wait(0)).resolves.toBe(false);
  });

  test('a ring further off than a timer holds waits, rather than firing at once', async () => {
    // A fetch Fail's retry timeout may be a year; a Node timer past 2^31-1 ms fires
    // after 1 ms, which woke every waiting fetch of the topic to claim nothing.
    const bell = new FetchBell();
    const sub = bell.subscribe(['q'], new AbortController().signal);
    bell.ringAt('q', Date.now() + 30 * 24 * 3_600_000);
    await expect(sub.wait(100)).resolves.toBe(false);
    sub.close();
    bell.stop();
  });

  test('a fetched topic counts for FETCH_SERVED_MS after its last fetch, and entering and leaving the set is told', async () => {
    jest.useFakeTimers({ now: 1_000 });
    const bell = new FetchBell(() => Date.now());
    const told = jest.fn();
    bell.onTopics = told;
    bell.noteFetch(['t:f:a', 't:f:b']);
    expect(told).toHaveBeenCalledTimes(1);
    bell.noteFetch(['t:f:a']); // known: peers need not hear of it again
    expect(told).toHaveBeenCalledTimes(1);
    expect(bell.fetchedTopics().sort()).toEqual(['t:f:a', 't:f:b']);

    await jest.advanceTimersByTimeAsync(FETCH_SERVED_MS / 2);
    bell.noteFetch(['t:f:a']); // asked again: a's minute starts over, b's runs on
    await jest.advanceTimersByTimeAsync(FETCH_SERVED_MS / 2);
    expect(bell.fetchedLately('t:f:b')).toBe(false);
    expect(bell.fetchedLately('t:f:a')).toBe(true);
    expect(bell.fetchedTopics()).toEqual(['t:f:a']);
    await jest.advanceTimersByTimeAsync(FETCH_SERVED_MS / 4);
    expect(told).toHaveBeenCalledTimes(2); // b left the set
    await jest.advanceTimersByTimeAsync(FETCH_SERVED_MS);
    expect(bell.fetchedTopics()).toEqual([]);
    expect(told).toHaveBeenCalledTimes(3);
    expect(jest.getTimerCount()).toBe(0); // nothing to prune: no timer left running
    bell.stop();
  });

  test('a topic fetched in the last minute counts as served, one fetched longer ago does not (docs/operations.md)', async () => {
    jest.useFakeTimers({ now: 1_000 });
    const bell = new FetchBell(() => Date.now());
    bell.noteFetch(['t:f:a']);
    await jest.advanceTimersByTimeAsync(59_000);
    expect(bell.fetchedLately('t:f:a')).toBe(true);
    expect(bell.fetchedTopics()).toEqual(['t:f:a']);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(bell.fetchedLately('t:f:a')).toBe(false);
    expect(bell.fetchedTopics()).toEqual([]);
    bell.stop();
  });

  test('a ring asked for sooner than the one pending comes at the sooner time', async () => {
    jest.useFakeTimers({ now: 1_000 });
    const bell = new FetchBell(() => Date.now());
    const sub = bell.subscribe(['q'], new AbortController().signal);
    bell.ringAt('q', 11_000); // a lock lapsing in ten seconds
    bell.ringAt('q', 1_100); // then a retry due in 100 ms
    let woken = false;
    void sub.wait(60_000).then((rung) => (woken = rung));
    await jest.advanceTimersByTimeAsync(100);
    expect(woken).toBe(true);
    sub.close();
    bell.stop();
  });

  test('a ring for later after an earlier one has rung is scheduled again', async () => {
    jest.useFakeTimers({ now: 1_000 });
    const bell = new FetchBell(() => Date.now());
    const sub = bell.subscribe(['q'], new AbortController().signal);
    bell.ringAt('q', 1_050);
    await jest.advanceTimersByTimeAsync(50);
    await expect(sub.wait(0)).resolves.toBe(true);
    bell.ringAt('q', 1_200);
    let woken = false;
    void sub.wait(60_000).then((rung) => (woken = rung));
    await jest.advanceTimersByTimeAsync(150);
    expect(woken).toBe(true);
    sub.close();
    bell.stop();
  });

  test('a fetch of several topics, one of them new here, tells that the waited topics changed', () => {
    const bell = new FetchBell();
    const told = jest.fn();
    bell.onTopics = told;
    const a = bell.subscribe(['t:f:a'], new AbortController().signal);
    expect(told).toHaveBeenCalledTimes(1);
    const ab = bell.subscribe(['t:f:a', 't:f:b'], new AbortController().signal);
    expect(told).toHaveBeenCalledTimes(2);
    expect(bell.topics().sort()).toEqual(['t:f:a', 't:f:b']);
    ab.close(); // b has no fetch left
    expect(told).toHaveBeenCalledTimes(3);
    a.close();
    expect(told).toHaveBeenCalledTimes(4);
    expect(bell.topics()).toEqual([]);
  });

  test('a topic last fetched a minute ago no longer counts as served, though the prune has not run yet', async () => {
    // The prune runs every FETCH_SERVED_MS / 4 from the first topic noted: one noted later
    // outlives its minute in the set until the next prune.
    jest.useFakeTimers({ now: 0 });
    const bell = new FetchBell(() => Date.now());
    bell.noteFetch(['t:f:a']);
    await jest.advanceTimersByTimeAsync(5_000);
    bell.noteFetch(['t:f:b']);
    await jest.advanceTimersByTimeAsync(FETCH_SERVED_MS - 1);
    expect(bell.fetchedLately('t:f:b')).toBe(true);
    expect(bell.fetchedTopics()).toEqual(['t:f:b']);
    await jest.advanceTimersByTimeAsync(1); // exactly a minute since b's fetch
    expect(bell.fetchedLately('t:f:b')).toBe(false);
    expect(bell.fetchedTopics()).toEqual([]);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(bell.fetchedLately('t:f:b')).toBe(false);
    bell.stop();
  });

  test('at most 1000 fetched topics are remembered, the longest unasked forgotten first', () => {
    const bell = new FetchBell();
    const topics = Array.from({ length: 1_001 }, (_, i) => `t:f:${i}`);
    bell.noteFetch(topics.slice(0, 1_000));
    bell.noteFetch(['t:f:0']); // asked again: now the latest
    bell.noteFetch([topics[1_000]!]);
    const kept = bell.fetchedTopics();
    expect(kept).toHaveLength(1_000);
    expect(kept).toContain('t:f:0');
    expect(kept).not.toContain('t:f:1');
    expect(bell.fetchedLately('t:f:1')).toBe(false);
    bell.stop();
  });
});

describe('OutcomeBell', () => {
  const signal = new AbortController().signal;

  test('a ring wakes the waiter of that task and the waiters of any task', async () => {
    const bell = new OutcomeBell();
    const mine = bell.subscribe('task-1', signal);
    const other = bell.subscribe('task-2', signal);
    const any = bell.subscribe(undefined, signal);
    bell.ring(3, 'task-1');
    await expect(mine.wait(0)).resolves.toBe(true);
    await expect(any.wait(0)).resolves.toBe(true);
    await expect(other.wait(0)).resolves.toBe(false);
    for (const s of [mine, other, any]) s.close();
  });

  test('closing a subscription twice does not silence the rings another still waits for', async () => {
    const bell = new OutcomeBell();
    const first = bell.subscribe('task-1', signal);
    const second = bell.subscribe('task-1', signal);
    first.close();
    first.close();
    bell.ring(0, 'task-1');
    await expect(second.wait(0)).resolves.toBe(true);
    second.close();
  });

  test('a subscription after every earlier one closed is rung again', async () => {
    const bell = new OutcomeBell();
    bell.subscribe('task-1', signal).close();
    bell.ring(0, 'task-1');
    const later = bell.subscribe('task-1', signal);
    bell.ring(0, 'task-1');
    await expect(later.wait(0)).resolves.toBe(true);
    later.close();
  });
  test('a waiter counts only once it waits: the first one and the last to leave are told, and a poll is neither', async () => {
    let told = 0;
    const bell = new OutcomeBell(() => told++);
    const poll = bell.subscribe(undefined, signal);
    await poll.wait(0);
    poll.close();
    expect([told, bell.waiting, bell.generation]).toEqual([0, 0, 1]);

    const first = bell.subscribe(undefined, signal);
    const second = bell.subscribe('task-1', signal);
    await first.wait(1);
    await second.wait(1);
    expect([told, bell.waiting, bell.generation]).toEqual([1, 2, 2]);
    first.close();
    expect([told, bell.waiting]).toEqual([1, 1]);
    second.close();
    expect([told, bell.waiting]).toEqual([2, 0]);
  });

  test('after a wake of every waiter, a consumer reads every partition, not only those rung', async () => {
    const bell = new OutcomeBell();
    const any = bell.subscribe(undefined, signal);
    bell.ring(2, 'task-1');
    bell.ring(5, 'task-2');
    expect(any.takeRung()).toEqual([2, 5]);
    expect(any.takeRung()).toEqual([]);
    bell.ring(2, 'task-3');
    bell.wakeAll();
    expect(any.takeRung()).toBeUndefined();
    // the next rings name their partitions again
    bell.ring(7, 'task-4');
    expect(any.takeRung()).toEqual([7]);
    any.close();
  });
});
