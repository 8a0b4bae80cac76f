/** Time source, injected so unit tests can use a fake clock. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The most milliseconds a Node timer holds (setTimeout, setInterval, socket timeouts): a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
