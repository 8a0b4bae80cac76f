/**
 * The bound on waiting calls a node holds at once (`limits.maxLongPolls`):
 * WaitOutcome, ConsumeOutcomes and FetchAndLock (gRPC and HTTP) with a wait.
 * Each holds a Redis subscription of the doorbell and a timer; past the bound
 * a new waiting call is refused with ZD_TOO_MANY_LONG_POLLS (RESOURCE_EXHAUSTED,
 * HTTP 429) before it touches Redis. Calls that do not wait are not counted.
 */
import { zdError } from '../errors';

export class LongPollGate {
  private inFlight = 0;

  constructor(private readonly cap: number) {}

  get count(): number {
    return this.inFlight;
  }

  /** Takes a place for a call waiting `waitMs` (> 0); returns its release (idempotent). */
  enter(waitMs: number): () => void {
    if (waitMs <= 0) return () => undefined;
    if (this.inFlight >= this.cap) throw zdError('ZD_TOO_MANY_LONG_POLLS', { count: this.inFlight, cap: this.cap });
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }
}
