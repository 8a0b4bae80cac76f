/**
 * Doorbell for long-polling fetches (DESIGN §7), keyed by topic (the queue
 * name "<tenant>:<flowType>:<stepType>"). A ring carries only "look again":
 * a woken fetch re-runs its claim, so a spurious or duplicate ring costs one
 * extra claim and a missed one costs at most the rest of a bounded wait.
 * Fetches subscribe before their first claim query, so a ring between the
 * query and the wait is never missed.
 *
 * Rings come from enqueues (node.ts `taskEnqueued`), unlocks, fetch-Fail
 * retries and operator retries; `ringAt` schedules a ring for a task that
 * becomes fetchable later (a retry timeout). The topics waited on here are
 * advertised to peers (`topics`, CapacityUpdate.fetch_topics), and `onTopics`
 * hears when that set changes, so that a task made fetchable on another node
 * rings here too (a FETCH doorbell).
 */
import { EventEmitter } from 'node:events';
import { subscribeBell, type BellSubscription } from './doorbell';
import { MAX_TIMER_MS } from '../util/clock';
import { FetchHints } from './fetch-hints';

export type FetchSubscription = BellSubscription;

/** How long a fetch of a topic counts its queue as taken from (the unserved-queues gauge). */
export const FETCH_SERVED_MS = 60_000;
/**
 * Topics remembered as fetched; past it the longest unasked is forgotten (and its queue
 * may count as unserved). Every capacity update carries the list, so it stays short.
 */
const MAX_FETCHED_TOPICS = 1_000;

export class FetchBell {
  private readonly emitter = new EventEmitter();
  /** One pending timer per topic: the earliest due time asked for. */
  private readonly due = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  /** Told when a topic gains its first waiting fetch or loses its last, or enters or leaves the fetched set. */
  onTopics: () => void = () => undefined;
  /** What claims saw of each partition's queue, forgotten as rings say it changed (fetch-hints.ts). */
  readonly hints = new FetchHints();
  /** When each topic was last asked for by a fetch here, oldest first (a re-asked topic moves to the end). */
  private readonly fetched = new Map<string, number>();
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(private readonly now: () => number = Date.now) {
    this.emitter.setMaxListeners(0);
  }

  /** The topics fetches wait on here now. */
  topics(): string[] {
    return this.emitter.eventNames().filter((t): t is string => typeof t === 'string' && this.awaited(t));
  }

  ring(topic: string): void {
    this.emitter.emit(topic);
  }

  /** Whether a fetch of `topic` is subscribed now. */
  private awaited(topic: string): boolean {
    return this.emitter.listenerCount(topic) > 0;
  }

  /**
   * Rings `topic` at `at` (epoch ms), for a task made fetchable in `partition`
 * (undefined: somewhere, as a peer's doorbell says). Only the earliest pending time per topic
   * is kept: a fetch woken then finds later due times itself (its claim
   * reports the next due score of its queues) and sleeps until them.
   */
  ringAt(topic: string, at: number, partition?: number): void {
    // The queue changed now, whenever the task is due: claims must look at it again.
    this.hints.touched(topic, partition);
    // Every enqueue rings its topic. A fetch that subscribes later claims first and
    // sleeps until the next due time its claim reports, so nobody misses this ring.
    if (!this.awaited(topic)) return;
    const delay = at - this.now();
    if (delay <= 0) {
      this.ring(topic);
      return;
    }
    const cur = this.due.get(topic);
    if (cur && cur.at <= at) return;
    if (cur) clearTimeout(cur.timer);
    // A retry timeout may run to a year; past what a timer holds it would fire at once.
    // Capped, the ring comes early instead: a spurious ring costs one claim.
    const timer = setTimeout(() => {
      this.due.delete(topic);
      this.ring(topic);
    }, Math.min(delay, MAX_TIMER_MS));
    timer.unref();
    this.due.set(topic, { at, timer });
  }

  /** Subscribes to rings of any of `topics`; call before the first claim query. */
  subscribe(topics: readonly string[], signal: AbortSignal): FetchSubscription {
    const fresh = topics.some((t) => !this.awaited(t));
    const sub = subscribeBell(this.emitter, topics, signal);
    if (fresh) this.onTopics();
    return {
      wait: (ms) => sub.wait(ms),
      close: () => {
        sub.close();
        if (topics.some((t) => !this.awaited(t))) this.onTopics();
      },
    };
  }

  /**
   * A fetch asked for `topics`: their queues have a taker for FETCH_SERVED_MS,
   * here and, advertised (`fetchedTopics`), at their owners. A topic new to the
   * set tells `onTopics`, as one leaving it does.
   */
  noteFetch(topics: readonly string[]): void {
    const now = this.now();
    let fresh = false;
    for (const t of topics) {
      if (!this.fetched.delete(t)) fresh = true;
      this.fetched.set(t, now);
    }
    for (const t of this.fetched.keys()) {
      if (this.fetched.size <= MAX_FETCHED_TOPICS) break;
      this.fetched.delete(t);
    }
    if (!fresh) return;
    if (!this.pruneTimer) {
      this.pruneTimer = setInterval(() => this.prune(), FETCH_SERVED_MS / 4);
      this.pruneTimer.unref();
    }
    this.onTopics();
  }

  /** The topics fetches asked for here within FETCH_SERVED_MS. */
  fetchedTopics(): string[] {
    const since = this.now() - FETCH_SERVED_MS;
    return [...this.fetched].filter(([, at]) => at > since).map(([t]) => t);
  }

  /** Whether a fetch asked for `topic` here within FETCH_SERVED_MS. */
  fetchedLately(topic: string): boolean {
    const at = this.fetched.get(topic);
    return at !== undefined && at > this.now() - FETCH_SERVED_MS;
  }

  private prune(): void {
    const since = this.now() - FETCH_SERVED_MS;
    let gone = false;
    for (const [t, at] of this.fetched) {
      if (at > since) break; // oldest first: the rest are newer
      this.fetched.delete(t);
      gone = true;
    }
    if (this.fetched.size === 0) {
      clearInterval(this.pruneTimer);
      this.pruneTimer = undefined;
    }
    if (gone) this.onTopics();
  }

  /** Wakes every waiting fetch (the node is stopping: they answer what they have). */
  wakeAll(): void {
    for (const topic of this.topics()) this.ring(topic);
  }

  stop(): void {
    for (const d of this.due.values()) clearTimeout(d.timer);
    this.due.clear();
    clearInterval(this.pruneTimer);
    this.pruneTimer = undefined;
  }
}
