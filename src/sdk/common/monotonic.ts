/**
 * Milliseconds on a clock that only moves forward, for the SDK's intervals and
 * deadlines (timeouts, pong and heartbeat spacing, silence checks). The wall
 * clock steps (an NTP correction, a VM resumed): set back by X, a deadline
 * taken from it ran X late, and a pong or heartbeat due by it waited X; the
 * node then reset the stream as silent, and its attempt failed as worker lost.
 * Timestamps sent on the wire stay wall-clock (Date.now()).
 */
export function monotonicMs(): number {
  return performance.now();
}
