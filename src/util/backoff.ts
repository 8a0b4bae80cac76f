/** Exponential backoff with full jitter, for reconnects and store retries. */
export interface BackoffOptions {
  /** @default 100 */
  initialMs?: number;
  /** @default 2 */
  coefficient?: number;
  /** @default 10000 */
  maxMs?: number;
}

export function backoffMs(attempt: number, opts: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = opts.initialMs ?? 100;
  const coefficient = opts.coefficient ?? 2;
  const max = opts.maxMs ?? 10_000;
  const ceiling = Math.min(max, initial * Math.pow(coefficient, Math.max(0, attempt)));
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}
