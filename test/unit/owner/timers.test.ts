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

describe('with a clock the test sets', () => {
  /** A clock that stands still unless the test moves it, and counts how often it is read. */
  function clocked(start = 1_000_000) {
    const clock = { t: start, reads: 0, now: () => (clock.reads++, clock.t) };
    return clock;
  }
  const tick = () => new Promise((r) => setTimeout(r, 5));

  it('fires an entry due exactly now', async () => {
    const clock = clocked();
    const timers = new Timers(clock);
    const fired: string[] = [];
    timers.schedule(clock.t, () => fired.push('now'));
    await tick();
    expect(fired).toEqual(['now']);
    timers.stop();
  });

  it('fires many entries in due order whatever order they were scheduled in', async () => {
    const clock = clocked();
    const timers = new Timers(clock);
    const fired: number[] = [];
    // A fixed shuffle of 0..199 (a multiplier prime to 200).
    const ats = Array.from({ length: 200 }, (_, i) => (i * 67) % 200);
    for (const at of ats) timers.schedule(clock.t - 1000 + at, () => fired.push(at));
    await tick();
    expect(fired).toEqual([...ats].sort((a, b) => a - b));
    timers.stop();
  });

  it('arms a deadline past what setTimeout holds once, not over and over', async () => {
    const clock = clocked();
    const timers = new Timers(clock);
    timers.schedule(clock.t + 40 * DAY, () => undefined);
    const reads = clock.reads;
    await new Promise((r) => setTimeout(r, 30));
    expect(clock.reads - reads).toBeLessThanOrEqual(1);
    timers.stop();
  });

  it('keeps entries due at the same time in scheduling order when it drops the cancelled ones', async () => {
    const clock = clocked();
    const timers = new Timers(clock);
    const fired: string[] = [];
    const at = clock.t + 50;
    timers.schedule(at, () => fired.push('a'));
    timers.schedule(at, () => fired.push('b'));
    // An earlier entry, cancelled: it moved ahead of a in the heap, and leaves with the far ones.
    const early = timers.schedule(at - 10, () => fired.push('early'));
    const far = Array.from({ length: 70 }, (_, i) => timers.schedule(clock.t + DAY + i, () => fired.push('far')));
    early.cancel();
    for (const h of far) h.cancel();
    expect(timers.size).toBeLessThan(73); // they were dropped at once
    clock.t = at;
    await new Promise((r) => setTimeout(r, 80));
    expect(fired).toEqual(['a', 'b']);
    timers.stop();
  });

  describe('drops the cancelled entries at once only when they are most of the heap', () => {
    const far = (timers: Timers, clock: { t: number }, n: number) =>
      Array.from({ length: n }, (_, i) => timers.schedule(clock.t + DAY + i, () => undefined));

    it('not at exactly half', () => {
      const clock = clocked();
      const timers = new Timers(clock);
      const hs = far(timers, clock, 128);
      for (const h of hs.slice(0, 64)) h.cancel();
      expect(timers.size).toBe(128);
      hs[64]!.cancel();
      expect(timers.size).toBe(63);
      timers.stop();
    });

    it('counting a cancel twice once', () => {
      const clock = clocked();
      const timers = new Timers(clock);
      const hs = far(timers, clock, 10);
      for (let i = 0; i < 70; i++) hs[0]!.cancel();
      expect(timers.size).toBe(10);
      timers.stop();
    });

    it('not counting cancels of entries that already fired', async () => {
      const clock = clocked();
      const timers = new Timers(clock);
      const hs = far(timers, clock, 100);
      const fired = Array.from({ length: 63 }, () => timers.schedule(clock.t - 1, () => undefined));
      await tick();
      for (const h of fired) h.cancel();
      hs[0]!.cancel();
      expect(timers.size).toBe(100);
      timers.stop();
    });

    it('not counting cancels of entries dropped by a stop', () => {
      const clock = clocked();
      const timers = new Timers(clock);
      const stopped = far(timers, clock, 63);
      timers.stop();
      for (const h of stopped) h.cancel();
      const hs = far(timers, clock, 100);
      hs[0]!.cancel();
      expect(timers.size).toBe(100);
      timers.stop();
    });

    it('not counting cancelled entries that already left from the top', async () => {
      const clock = clocked();
      const timers = new Timers(clock);
      // 40 cancelled entries that come due: they leave the heap from its top.
      for (let i = 0; i < 40; i++) timers.schedule(clock.t - 1, () => undefined).cancel();
      await tick();
      expect(timers.size).toBe(0);
      const hs = far(timers, clock, 100);
      for (const h of hs.slice(0, 30)) h.cancel();
      expect(timers.size).toBe(100);
      timers.stop();
    });

    it('and counts afresh after dropping them', () => {
      const clock = clocked();
      const timers = new Timers(clock);
      const hs = far(timers, clock, 100);
      for (const h of hs.slice(0, 64)) h.cancel();
      expect(timers.size).toBe(36);
      hs[64]!.cancel();
      expect(timers.size).toBe(36);
      timers.stop();
    });
  });
});
