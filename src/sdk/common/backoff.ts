/** Reconnect backoff: exponential with jitter over the upper half of the window. */

/**
 * The longest delay a Node.js timer holds (2^31 - 1 ms, about 24.8 days). A
 * longer one, Infinity included, fires after 1 ms (TimeoutOverflowWarning): a
 * duration option past it must be refused, or "wait very long" becomes "do not wait".
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface BackoffOptions {
  /** First delay ceiling in ms. @default 100 */
  initialMs?: number;
  /** Growth factor per failed attempt. @default 2 */
  coefficient?: number;
  /** Largest delay in ms. @default 10000 */
  maxMs?: number;
}

/**
 * The smallest first delay: half of each delay is random and it is floored to
 * whole ms, so a ceiling under 2 ms gave 0 ms every time, and one slot redialled
 * ≈ 470 times a second at 70 % of a core (against a node that refuses its
 * streams, each attempt hit the node too).
 */
export const MIN_BACKOFF_MS = 10;

export function backoffMs(attempt: number, opts: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = opts.initialMs ?? 100;
  const coefficient = opts.coefficient ?? 2;
  const max = opts.maxMs ?? 10_000;
  const ceiling = Math.min(max, initial * Math.pow(coefficient, Math.max(0, attempt)));
  // Half fixed, half random: spreads a fleet's reconnects without ever retrying at once.
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

/** What is wrong with a BackoffOptions, naming the field; undefined when nothing is. */
export function backoffProblem(opts: BackoffOptions): { field: keyof BackoffOptions; reason: string } | undefined {
  const { initialMs = 100, coefficient = 2, maxMs = 10_000 } = opts;
  if (!(Number.isFinite(initialMs) && initialMs >= MIN_BACKOFF_MS)) {
    return { field: 'initialMs', reason: `must be a number of ms ≥ ${MIN_BACKOFF_MS} (a shorter delay redials in a tight loop), got ${initialMs}` };
  }
  if (initialMs > MAX_TIMER_MS) return { field: 'initialMs', reason: `must be at most ${MAX_TIMER_MS} ms (what a timer holds), got ${initialMs}` };
  if (!(Number.isFinite(coefficient) && coefficient >= 1)) return { field: 'coefficient', reason: `must be a number ≥ 1, got ${coefficient}` };
  if (!(Number.isFinite(maxMs) && maxMs >= initialMs)) return { field: 'maxMs', reason: `must be a number of ms ≥ initialMs (${initialMs}), got ${maxMs}` };
  if (maxMs > MAX_TIMER_MS) return { field: 'maxMs', reason: `must be at most ${MAX_TIMER_MS} ms (what a timer holds), got ${maxMs}` };
  return undefined;
}
