export interface WaitOptions {
  /** @default 10000 */
  timeoutMs?: number;
  /** @default 50 */
  intervalMs?: number;
  /** Named in the timeout error. */
  description?: string;
  /** Stops the wait at once; rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Polls `predicate` until it returns a truthy value (which is returned) or the
 * timeout passes. A predicate that throws counts as "not yet"; its last error
 * is named in the timeout error.
 */
export async function waitFor<T>(predicate: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 10000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const what = opts.description ?? 'condition';
      const why = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`waitFor: ${what} not met within ${timeoutMs}ms${why}`);
    }
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
