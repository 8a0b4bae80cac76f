/** Reconnect backoff: exponential with jitter over the upper half of the window. */
export interface BackoffOptions {
  /** First delay ceiling in ms. @default 100 */
  initialMs?: number;
  /** Growth factor per failed attempt. @default 2 */
  coefficient?: number;
  /** Largest delay in ms. @default 10000 */
  maxMs?: number;
}

export function backoffMs(attempt: number, opts: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = opts.initialMs ?? 100;
  const coefficient = opts.coefficient ?? 2;
  const max = opts.maxMs ?? 10_000;
  const ceiling = Math.min(max, initial * Math.pow(coefficient, Math.max(0, attempt)));
  // Half fixed, half random: spreads a fleet's reconnects without ever retrying at once.
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}
