/**
 * The bound on waiting calls a node holds at once (`limits.maxLongPolls`):
 * WaitOutcome, ConsumeOutcomes and FetchAndLock (gRPC and HTTP) with a wait.
 * Each holds a Redis subscription of the doorbell and a timer; past the bound
 * a new waiting call is refused with ZD_TOO_MANY_LONG_POLLS (RESOURCE_EXHAUSTED,
 * HTTP 429) before it touches Redis. Calls that do not wait are not counted,
 * nor those that wait 1 ms: that is how a FetchAndLock asks for no long poll
 * (its 0 means the default wait), and such a call must not be refused for one.
 * When the node stops, close() makes waiting calls answer what they have
 * (nothing yet) at their next look and new ones not wait: the caller asks
 * again on a new connection, so another node, instead of holding the server's
 * shutdown and then meeting a closed store.
 */
import { zdError } from '../errors';

/** A wait this short is no long poll (FetchAndLock's `wait = 1`, docs/fetch.md). */
const NO_LONG_POLL_MS = 1;

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

  /** Takes a place for a call waiting `waitMs` (> 1 ms); returns its release (idempotent). */
  enter(waitMs: number): () => void {
    if (waitMs <= NO_LONG_POLL_MS) return () => undefined;
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
