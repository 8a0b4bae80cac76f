/**
 * Store calls that start or end an attempt while no slot holds it: counted by the
 * attempt's start nonce while on their way, and run again in the background
 * when Redis does not answer.
 */
import { backOff } from 'exponential-backoff';
import type { Logger } from '../util/logger';

/** Tries of a store call that ends a stranded attempt: at up to 5 s apart, about 14 h, until the node stops. */
const SETTLE_ATTEMPTS = 10_000;

export class AttemptSettling {
  /** Store calls starting or ending an attempt that are on their way or retried, by start nonce (transit()). */
  private readonly inTransit = new Map<string, number>();
  /** The node is stopping: background store retries end (the owners fail its attempts once it has left). */
  private stopped = false;

  constructor(private readonly log: Logger) {}

  /**
   * Runs a store call that ends an attempt no slot holds any more. When Redis does
   * not answer, the call runs again in the background with backoff until it does:
   * nothing else would end that attempt while this node lives (its owner fails the
   * attempts of dead nodes only), so it would stay running with no one to finish it.
   * A call that landed the first time answers the same the next (the scripts keep the
   * attempt's start nonce with what they wrote), so its hooks run and nothing is lost.
   */
  async settleNowOrLater(what: string, call: () => Promise<void>, nonce: string): Promise<void> {
    this.transit(nonce, 1);
    try {
      await call();
    } catch (err) {
      this.settleLater(what, call, err as Error, nonce);
    } finally {
      this.transit(nonce, -1);
    }
  }

  /** The background half of settleNowOrLater, for a call that has just failed. */
  settleLater(what: string, call: () => Promise<void>, err: Error, nonce: string): void {
    this.log.warn({ what, err: err.message }, 'store call failed; retrying in the background');
    this.transit(nonce, 1);
    void backOff(call, {
      startingDelay: 200, maxDelay: 5000, timeMultiple: 2, jitter: 'full', numOfAttempts: SETTLE_ATTEMPTS,
      retry: () => !this.stopped,
    }).catch((e: Error) => this.log.error({ what, err: e.message }, 'store call given up'))
      .finally(() => this.transit(nonce, -1));
  }

  /**
   * Counts a store call that starts or ends the attempt of start nonce `nonce` in (+1) or
   * out (-1): while one is on its way or retried, no slot may hold the attempt although it
   * runs in Redis, and the attempt audit must not take it for one whose end was lost.
   */
  transit(nonce: string, by: 1 | -1): void {
    const n = (this.inTransit.get(nonce) ?? 0) + by;
    if (n > 0) this.inTransit.set(nonce, n);
    else this.inTransit.delete(nonce);
  }

  /** The start nonces of the attempts whose start or end is on its way or retried. */
  nonces(): IterableIterator<string> {
    return this.inTransit.keys();
  }

  /** The node is stopping: background retries end. */
  stop(): void {
    this.stopped = true;
  }
}
