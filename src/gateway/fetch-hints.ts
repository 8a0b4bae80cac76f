/**
 * What the node last saw of each partition's queue of a fetch topic: empty, or
 * nothing due before some time. A claim peeks every partition's queue (one
 * command each), and every ring wakes every fetch of the topic into another
 * claim: a few fetch workers long-polling a busy topic peeked each of 64
 * partitions for every batch enqueued, ≈ 30 commands per task fetched. With
 * the hints, a claim peeks only the partitions something may have changed in.
 *
 * A hint is forgotten when a task of the topic is made fetchable in its
 * partition on this node (`touched` with the partition) or anywhere the node
 * hears of without one (a peer's FETCH doorbell names no partition: the whole
 * topic), when the time it names comes (a retry timeout, a lock expiring: the
 * queue's first score), and after HINT_TTL_MS in any case: a fetch that skipped a
 * partition looks again by then (quietUntil), so whatever adds to a queue without
 * ringing its topic is found at most HINT_TTL_MS late, even by a waiting fetch. A touch during a claim
 * voids what that claim learns of the partition: hints are stamped with the
 * claim's mark, taken before its peeks.
 */
import { LRUCache } from 'lru-cache';

/** The longest a hint is trusted without a touch. */
export const HINT_TTL_MS = 1000;
/** Topics with hints kept; a topic evicted is peeked in full again. */
const MAX_TOPICS = 10_000;

interface Quiet {
  /** The mark of the claim that saw it. */
  mark: number;
  /** When, by the node's clock. */
  at: number;
  /** The queue's first score (Infinity: empty): nothing in it is due before. */
  dueAt: number;
}

interface TopicHints {
  /** Sequence of the last touch of the whole topic. */
  allTouched: number;
  /** Sequence of the last touch of each partition. */
  touched: Map<number, number>;
  quiet: Map<number, Quiet>;
}

export class FetchHints {
  private seq = 0;
  private readonly topics = new LRUCache<string, TopicHints>({ max: MAX_TOPICS });

  /** Before a claim's peeks: its mark (hints it records later are void if a touch came after). */
  begin(topics: readonly string[]): number {
    for (const t of topics) if (!this.topics.has(t)) this.topics.set(t, { allTouched: 0, touched: new Map(), quiet: new Map() });
    return ++this.seq;
  }

  /** A task of `topic` was made fetchable (now or later) in `partition`, or somewhere unknown. */
  touched(topic: string, partition?: number): void {
    const h = this.topics.peek(topic);
    if (!h) return; // no claim has asked about it: nothing to forget, none in flight
    const seq = ++this.seq;
    if (partition === undefined) {
      h.allTouched = seq;
      h.quiet.clear();
    } else {
      h.touched.set(partition, seq);
      h.quiet.delete(partition);
    }
  }

  /** A claim with `mark` saw the partition's queue empty (dueAt Infinity) or its first score at dueAt. */
  quiet(topic: string, partition: number, mark: number, now: number, dueAt: number): void {
    const h = this.topics.peek(topic);
    if (!h || h.allTouched > mark || (h.touched.get(partition) ?? 0) > mark) return;
    h.quiet.set(partition, { mark, at: now, dueAt });
  }

  /**
   * When the partition's queue must be looked at again, when the node knows that
   * nothing in it is due before then (the claim may skip its peek): the time its
   * first entry is due, or the hint's end, whichever comes first. A fetch that
   * skipped it sleeps no longer than that, so whatever changed the queue without
   * ringing its topic is found within HINT_TTL_MS. Undefined: peek it now.
   */
  quietUntil(topic: string, partition: number, now: number): number | undefined {
    const q = this.topics.get(topic)?.quiet.get(partition);
    if (!q) return undefined;
    const until = Math.min(q.dueAt, q.at + HINT_TTL_MS);
    return now < until ? until : undefined;
  }
}
