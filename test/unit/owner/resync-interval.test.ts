/**
 * matching.headsResyncInterval (DESIGN §9): the periodic heads resync passes
 * over the owned partitions once every interval, and 0 disables it: no pass
 * runs, however long the node lives.
 */
import pino from 'pino';
import { HeadsResync } from '../../../src/owner/resync';
import type { PartitionOwner } from '../../../src/owner/partition';
import { systemClock } from '../../../src/util/clock';

const FIVE_MINUTES = 300_000;

/** A resync over no partitions; `owned` counts its passes (each one asks for the owned partitions first). */
function resync(intervalMs: number): { r: HeadsResync; owned: jest.Mock<PartitionOwner[], []> } {
  const owned = jest.fn<PartitionOwner[], []>(() => []);
  const r = new HeadsResync(owned, {} as never, {} as never, { restored: () => undefined, incomplete: () => undefined },
    intervalMs, systemClock, pino({ level: 'silent' }));
  return { r, owned };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('passes once every interval (the default 5m)', () => {
  const { r, owned } = resync(FIVE_MINUTES);
  r.start();
  jest.advanceTimersByTime(FIVE_MINUTES - 1);
  expect(owned).not.toHaveBeenCalled();
  jest.advanceTimersByTime(1);
  expect(owned).toHaveBeenCalledTimes(1);
  jest.advanceTimersByTime(FIVE_MINUTES);
  expect(owned).toHaveBeenCalledTimes(2);
  r.stop();
  jest.advanceTimersByTime(FIVE_MINUTES);
  expect(owned).toHaveBeenCalledTimes(2);
});

it('0 disables it: no pass at all, and no timer armed', () => {
  const { r, owned } = resync(0);
  // Counted against the timers already there: a loaded runner's other modules may hold one.
  const before = jest.getTimerCount();
  r.start();
  expect(jest.getTimerCount()).toBe(before);
  jest.advanceTimersByTime(24 * 3_600_000);
  expect(owned).not.toHaveBeenCalled();
  r.stop();
});
