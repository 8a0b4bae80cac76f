/** Time source, injected so unit tests can use a fake clock. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Milliseconds on a clock that only moves forward, for intervals a node measures
 * itself (how long since a lease was last confirmed, when the next renewal is
 * due). The wall clock steps (an NTP correction, a VM resumed): set back by X, an
 * interval read from it came out X short, and one set forward, X long.
 */
export function monotonicNow(): number {
  return performance.now();
}

/** The most milliseconds a Node timer holds (setTimeout, setInterval, socket timeouts): a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
