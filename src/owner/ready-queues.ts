/**
 * The queues of one flow type that have ready heads, across every partition
 * this node owns, oldest head first: what the owner's pump offers from.
 *
 * A min-heap of head entries instead of a scan of every queue per offer: a
 * queue spreads over all partitions, so the scan cost O(partitions) per Step
 * (≈ 30 µs a Step at 1 024 partitions). Entries are dropped lazily: a queue's
 * head can change (taken, handed back, an earlier ready entry arrived) and
 * only its latest entry counts; stale ones are skipped when they surface.
 */
import { Heap } from 'heap-js';
import type { QueueHeads } from './heads';

interface HeadEntry {
  q: QueueHeads;
  /** The head's readyAt when the entry was made. */
  at: number;
  /**
   * The queue's place in the set: of equal readyAt, the queue that came first
   * goes first, and keeps going while its heads tie. Runs from one queue (one
   * partition) are what lets a Redis Cluster batch starts per partition.
   */
  seq: number;
}

export class ReadyQueues {
  /** Queues in the set (each with ready heads, or about to be found empty). */
  private readonly queues = new Set<QueueHeads>();
  /** Each queue's live entry; any other entry of it in the heap is stale. */
  private readonly live = new Map<QueueHeads, HeadEntry>();
  /** When each queue joined the set (ties, see HeadEntry.seq). */
  private readonly joined = new Map<QueueHeads, number>();
  private readonly heap = new Heap<HeadEntry>((a, b) => a.at - b.at || a.seq - b.seq);
  private seq = 0;

  get size(): number {
    return this.queues.size;
  }

  /** The queue has heads (or its head may have changed): true when it was not in the set. */
  add(q: QueueHeads): boolean {
    const added = !this.queues.has(q);
    if (added) {
      this.queues.add(q);
      this.joined.set(q, this.seq++);
    }
    this.note(q);
    return added;
  }

  /** The queue leaves (its partition left this node). */
  delete(q: QueueHeads): void {
    this.queues.delete(q);
    this.live.delete(q);
    this.joined.delete(q);
  }

  /**
   * The queue whose head became ready first, left in place (the caller may
   * find no slot for it). Queues found empty leave the set, each reported to
   * `emptied`.
   */
  oldest(emptied: (q: QueueHeads) => void): QueueHeads | undefined {
    for (;;) {
      const e = this.heap.peek();
      if (!e) return this.recover(emptied);
      if (this.live.get(e.q) !== e) {
        this.heap.pop();
        continue;
      }
      const head = e.q.peek();
      if (!head) {
        this.heap.pop();
        this.delete(e.q);
        emptied(e.q);
        continue;
      }
      if (head.readyAt !== e.at) {
        // The head changed without a note (a ref dropped): place the queue again by its head now.
        this.heap.pop();
        this.live.delete(e.q);
        this.note(e.q);
        continue;
      }
      return e.q;
    }
  }

  /** The caller took the head of `q` (the one `oldest` returned): it is placed by its next head, or leaves. */
  taken(q: QueueHeads, emptied: (q: QueueHeads) => void): void {
    this.live.delete(q); // its heap entry is stale now, skipped when it surfaces
    if (q.size > 0) this.note(q);
    else {
      this.delete(q);
      emptied(q);
    }
  }

  private note(q: QueueHeads): void {
    const head = q.peek();
    if (!head) return;
    const cur = this.live.get(q);
    if (cur && cur.at === head.readyAt) return;
    const e: HeadEntry = { q, at: head.readyAt, seq: this.joined.get(q) ?? this.seq++ };
    this.live.set(q, e);
    this.heap.push(e);
    // Stale entries are bounded: past twice the live ones, the heap is rebuilt from them.
    if (this.heap.length > 2 * this.live.size + 64) this.heap.init([...this.live.values()]);
  }

  /** No entry left: any queue still in the set gets one by its head, or leaves if empty. */
  private recover(emptied: (q: QueueHeads) => void): QueueHeads | undefined {
    if (this.queues.size === 0) return undefined;
    for (const q of [...this.queues]) {
      if (q.size > 0) this.note(q);
      else {
        this.delete(q);
        emptied(q);
      }
    }
    return this.heap.length > 0 ? this.oldest(emptied) : undefined;
  }
}
