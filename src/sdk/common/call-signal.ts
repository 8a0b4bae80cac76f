/**
 * The AbortSignal of one unary SDK call (nice-grpc has no deadline of its
 * own): it aborts at the call's timeout or with the first of its sources
 * (the client's close, the caller's signal) and remembers which ended it,
 * so the client can name the error. `dispose()` once the call settled.
 */
export class CallSignal {
  readonly signal: AbortSignal;
  /** What ended the call: its own timeout, or the source signal that aborted first. */
  cause: 'timeout' | AbortSignal | undefined;
  private readonly controller = new AbortController();
  private readonly sources: AbortSignal[];
  private readonly timer: NodeJS.Timeout;

  constructor(timeoutMs: number, sources: ReadonlyArray<AbortSignal | undefined>) {
    this.signal = this.controller.signal;
    this.sources = sources.filter((s): s is AbortSignal => s !== undefined);
    this.timer = setTimeout(() => this.end('timeout', undefined), timeoutMs);
    for (const s of this.sources) {
      if (s.aborted) this.end(s, s.reason);
      else s.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  get timedOut(): boolean {
    return this.cause === 'timeout';
  }

  dispose(): void {
    clearTimeout(this.timer);
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
