import { MAX_TIMER_MS } from './backoff';

/**
 * The AbortSignal of one unary SDK call (nice-grpc has no deadline of its
 * own): it aborts at the call's timeout or with the first of its sources
 * (the client's close, the caller's signal) and remembers which ended it,
 * so the client can name the error. `dispose()` once the call settled.
 *
 * A timeout of 0 or none arms no timer. One past MAX_TIMER_MS (Infinity,
 * NaN, < 0 too) is refused with a RangeError: a timer that long fires after
 * 1 ms, so the callers check users' values and cap the ones they compute.
 */
export class CallSignal {
  readonly signal: AbortSignal;
  /** What ended the call: its own timeout, or the source signal that aborted first. */
  cause: 'timeout' | AbortSignal | undefined;
  private readonly controller = new AbortController();
  private readonly sources: AbortSignal[];
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number | undefined, sources: ReadonlyArray<AbortSignal | undefined>) {
    if (timeoutMs !== undefined && !(timeoutMs >= 0 && timeoutMs <= MAX_TIMER_MS)) {
      throw new RangeError(`CallSignal: a timeout must be in [0, ${MAX_TIMER_MS}] ms (what a timer holds), got ${timeoutMs}`);
    }
    this.signal = this.controller.signal;
    this.sources = sources.filter((s): s is AbortSignal => s !== undefined);
    if (timeoutMs) this.timer = setTimeout(() => this.end('timeout', undefined), timeoutMs);
    for (const s of this.sources) {
      if (s.aborted) this.end(s, s.reason);
      else s.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  get timedOut(): boolean {
    return this.cause === 'timeout';
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.sources) s.removeEventListener('abort', this.onAbort);
  }

  private readonly onAbort = (event: Event): void => {
    const source = event.target as AbortSignal;
    this.end(source, source.reason);
  };

  private end(cause: 'timeout' | AbortSignal, reason: unknown): void {
    if (this.cause) return;
    this.cause = cause;
    this.controller.abort(reason);
  }
}
