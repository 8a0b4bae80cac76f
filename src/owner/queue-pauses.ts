/**
 * Queues whose offer failed because Redis refused the start (or a peer's call
 * broke), held out of the pump for a while, one queue at a time:
 * - a start refused at once (OOM under noeviction, READONLY, BUSY) leaves the
 *   slot idle at once, and the pump would offer the same head again in a loop;
 * - on a Redis Cluster a partition's slot mid-migration refuses every script
 *   (TRYAGAIN) for as long as it moves, each start there failing only after the
 *   client's retries (seconds), its slot held all that time. Offered oldest
 *   first, that partition's heads took the idle slots of their flow type again
 *   and again, and the other partitions' Steps waited behind them (a pause of
 *   the whole flow type's offers, as there was, made them wait longer still).
 * A queue that failed waits a pause (doubling from `firstMs` to `maxMs`, and at
 * least twice as long as the failed offer took, so that slow failures hold a
 * slot a third of the time at most), then offers one head at a time until an
 * offer settles; the other queues go on.
 */
import type { QueueHeads } from './heads';

interface Pause {
  delayMs: number;
  /** The pause is running (its timer ends it). */
  waiting: boolean;
  /** Its one offer is out. */
  probing: boolean;
}

export class QueuePauses {
  private readonly pauses = new WeakMap<QueueHeads, Pause>();

  constructor(
    /** Puts a queue back in the pump's lines (the owner checks it is still the partition's). */
    private readonly resume: (q: QueueHeads) => void,
    private readonly firstMs: number,
    private readonly maxMs: number,
  ) {}

  /** Whether the queue stays out of the pump's lines now. */
  held(q: QueueHeads): boolean {
    const p = this.pauses.get(q);
    return p !== undefined && (p.waiting || p.probing);
  }

  /** An offer of the queue's head went out: true when the queue leaves the lines until it settles. */
  sent(q: QueueHeads): boolean {
    const p = this.pauses.get(q);
    if (!p) return false;
    p.probing = true;
    return true;
  }

  /** Redis answered an offer of the queue's (taken, gone, no slot): it offers freely again. True when it was held. */
  settled(q: QueueHeads): boolean {
    return this.pauses.delete(q);
  }

  /** An offer of the queue's failed after `tookMs`: it is held for a pause, longer each time in a row. */
  failed(q: QueueHeads, tookMs: number): void {
    const prev = this.pauses.get(q);
    if (prev?.waiting) return; // another of its offers, sent before the first failed
    const doubled = prev ? prev.delayMs * 2 : this.firstMs;
    const pause: Pause = { delayMs: Math.min(Math.max(doubled, 2 * tookMs), this.maxMs), waiting: true, probing: false };
    this.pauses.set(q, pause);
    setTimeout(() => {
      pause.waiting = false;
      if (this.pauses.get(q) === pause) this.resume(q);
    }, pause.delayMs).unref();
  }
}
