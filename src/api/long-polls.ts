/**
 * The bound on waiting calls a node holds at once (`limits.maxLongPolls`):
 * WaitOutcome, ConsumeOutcomes and FetchAndLock (gRPC and HTTP) with a wait.
 * Each holds a Redis subscription of the doorbell and a timer; past the bound
 * a new waiting call is refused with ZD_TOO_MANY_LONG_POLLS (RESOURCE_EXHAUSTED,
 * HTTP 429) before it touches Redis. Calls that do not wait are not counted.
 * When the node stops, close() makes waiting calls answer what they have
 * (nothing yet) at their next look and new ones not wait: the caller asks
 * again on a new connection, so another node, instead of holding the server's
 * shutdown and then meeting a closed store.
 */
import { zdError } from '../errors';

export class LongPollGate {
  private inFlight = 0;
  private stopping = false;

  constructor(private readonly cap: number) {}

  get count(): number {
    return this.inFlight;
  }

  /** Whether the node is stopping: a waiting call answers what it has instead of waiting on. */
  get closed(): boolean {
    return this.stopping;
  }

  /** The node is stopping; the caller wakes the waiting calls (their bells) so they see it. */
  close(): void {
    this.stopping = true;
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
