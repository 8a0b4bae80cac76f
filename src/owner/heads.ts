/**
 * The in-memory heads of one queue in one owned partition: a bounded window of
 * the next ready task ids, in readyAt order. Redis stays the truth; the window
 * is refilled from the queue's sorted set when it runs low and Redis may hold
 * more (`more`). Ids being offered stay in `known` so a refill cannot double them.
 */
export interface HeadRef {
  taskId: string;
  readyAt: number;
}

export const HEADS_WINDOW = 256;
const LOW_WATER = 64;
/** Stale heads in a row (offered, their task gone) that make one incomplete seek. */
export const STALE_RUN = 64;
/**
 * A refill reads past the ids it knows (out on offers, held in a waiting phase), up
 * to this many more: a few hundred sticky waiters at the front of a queue must not
 * hide the Steps behind them from idle slots.
 */
export const KNOWN_READ_MAX = 4096;

/**
 * How many queues of each name, over the partitions this node owns, have a
 * backlog (ready heads, or Redis may hold more): a new Step asks whether its
 * queue has one, and asking every partition cost O(partitions) per Step.
 * Each QueueHeads reports its own changes.
 */
export class BusyQueues {
  private readonly counts = new Map<string, number>();

  has(name: string): boolean {
    return this.counts.has(name);
  }

  /** Owned partitions whose queue of this name has a backlog. */
  count(name: string): number {
    return this.counts.get(name) ?? 0;
  }

  change(name: string, by: 1 | -1): void {
    const n = (this.counts.get(name) ?? 0) + by;
    if (n > 0) this.counts.set(name, n);
    else this.counts.delete(name);
  }
}

export class QueueHeads {
  private refs: HeadRef[] = [];
  private start = 0;
  /** Ids in the window or out on an offer. */
  private readonly known = new Set<string>();
  private hasMore = true;
  /** Gone heads in a row (passed). */
  private staleRun = 0;
  /** A ready task was left to the refill in flight (add while loading). */
  private addedWhileLoading = false;
  /**
   * Ids out on an offer or held in a waiting phase whose task was made ready again
   * meanwhile (released, retried at once): their readyAt, for when that ends (settle).
   */
  private readyAgain?: Map<string, number>;
  /**
   * The last refill read a full page of ids all known here: reading again finds
   * nothing new until one of them settles (settle), so nothing reads again before.
   */
  private starved = false;
  /** Whether this queue counts as busy in `busy` (see sync). */
  private counted = false;
  loading = false;
  /** Earliest future readyAt known to be scheduled (delayed entries). */
  wakeAt = Infinity;
  /** The partition's timer for wakeAt, cancelled when an earlier one replaces it (partition.ts). */
  wakeTimer: { cancel(): void } | undefined;

  constructor(
    readonly partition: number,
    readonly name: string,
    readonly tenant: string,
    readonly flowType: string,
    readonly stepType: string,
    /** Where this queue reports having a backlog or not; none once detached. */
    private busy?: BusyQueues,
  ) {
    this.sync();
  }

  /** Redis may hold ready entries that are not in the window. */
  get more(): boolean {
    return this.hasMore;
  }

  set more(v: boolean) {
    this.hasMore = v;
    this.sync();
  }

  /** Its partition left this node: the queue no longer counts anywhere. */
  detach(): void {
    if (this.counted) this.busy?.change(this.name, -1);
    this.counted = false;
    this.busy = undefined;
  }

  /**
   * Nothing here refers to a task: no heads, none out on an offer or held in a
   * waiting phase, no refill in flight, no delayed entry's timer. Such a queue
   * can be forgotten and made again by the next task that names it.
   */
  get idle(): boolean {
    return this.size === 0 && !this.hasMore && !this.loading && this.wakeAt === Infinity && this.known.size === 0;
  }

  /** Whether it has a backlog here: ready heads, or more in Redis. */
  get backlogged(): boolean {
    return this.size > 0 || this.hasMore;
  }

  /** Reports a change of `backlogged` to `busy`; every mutation ends here. */
  private sync(): void {
    if (!this.busy) return;
    const b = this.backlogged;
    if (b === this.counted) return;
    this.counted = b;
    this.busy.change(this.name, b ? 1 : -1);
  }

  get size(): number {
    return this.refs.length - this.start;
  }

  peek(): HeadRef | undefined {
    return this.refs[this.start];
  }

  /** A task became ready: keep it if the window holds everything, else leave it to a refill. */
  add(ref: HeadRef): boolean {
    if (this.known.has(ref.taskId)) {
      // Out on an offer or held: the offer's answer would forget it (settle), and the
      // task, ready in Redis, would wait for the backlog count to be found again.
      if (!this.inWindow(ref.taskId)) (this.readyAgain ??= new Map()).set(ref.taskId, ref.readyAt);
      return false;
    }
    if (this.more || this.size >= HEADS_WINDOW) {
      // A refill in flight may have read the queue before this task was written:
      // its answer must not say that Redis holds nothing more (fill).
      if (this.loading) this.addedWhileLoading = true;
      this.more = true;
      return false;
    }
    this.insertSorted(ref);
    this.sync();
    return true;
  }

  /**
   * Refill results (readyAt order); ids already known are skipped. A task left to
   * this refill while it was in flight keeps `more` set: the next refill reads it.
   */
  fill(refs: HeadRef[], more: boolean): void {
    let fresh = 0;
    let full = false;
    for (const r of refs) {
      if (this.known.has(r.taskId)) continue;
      if (this.size >= HEADS_WINDOW) {
        full = true; // read past the known ids: the rest waits for the next refill
        break;
      }
      this.insertSorted(r);
      fresh++;
    }
    this.starved = more && fresh === 0 && !this.addedWhileLoading;
    this.more = more || full || this.addedWhileLoading;
    this.addedWhileLoading = false;
  }

  /** Whether reading the queue again now would find nothing new (see `starved`). */
  get refillWouldRepeat(): boolean {
    return this.starved;
  }

  /** How many ids the next refill reads: the window and past the known ids. */
  get refillCount(): number {
    return HEADS_WINDOW + Math.min(this.known.size, KNOWN_READ_MAX);
  }

  shift(): HeadRef | undefined {
    const r = this.refs[this.start];
    if (!r) return undefined;
    this.refs[this.start++] = undefined as unknown as HeadRef;
    if (this.start > 1024 && this.start * 2 > this.refs.length) {
      this.refs = this.refs.slice(this.start);
      this.start = 0;
    }
    this.sync();
    return r;
  }

  /** An offer found no slot: the ref goes back to the front. */
  unshift(ref: HeadRef): void {
    if (this.start > 0) this.refs[--this.start] = ref;
    else this.refs.unshift(ref);
    this.sync();
  }

  /**
   * An offer settled (taken or gone): forget the id. True when the queue has
   * something to offer or read because of it: the task was made ready again while
   * out (it is back), or the last refill found only known ids.
   */
  settle(taskId: string): boolean {
    return this.forget(taskId);
  }

  private forget(taskId: string): boolean {
    this.known.delete(taskId);
    const again = this.readyAgain?.get(taskId);
    if (again !== undefined) {
      this.readyAgain!.delete(taskId);
      this.add({ taskId, readyAt: again });
      return true;
    }
    if (!this.starved) return false;
    this.starved = false;
    return true;
  }

  /**
   * A head offered from this queue was taken (live) or gone (its task deleted, cancelled
   * or no longer queued). True each time the search for the next live head has passed
   * STALE_RUN gone heads in a row: an incomplete seek
   * (dexzd_step_task_queue_incomplete_seeks_total).
   */
  passed(gone: boolean): boolean {
    if (!gone) {
      this.staleRun = 0;
      return false;
    }
    if (++this.staleRun < STALE_RUN) return false;
    this.staleRun = 0;
    return true;
  }

  /**
   * Keeps a task out of the window while it waits in memory (sticky or
   * sync-match phase), so a refill cannot load it a second time.
   */
  hold(taskId: string): void {
    this.known.add(taskId);
  }

  /** A held task goes to the durable-queue phase: into the window, or left to a refill. */
  unhold(ref: HeadRef): void {
    this.known.delete(ref.taskId);
    this.readyAgain?.delete(ref.taskId);
    this.starved = false;
    this.add(ref);
  }

  /**
   * A held task leaves without entering the window: it is not ready now (that news
   * is newer than any ready notice it had). True as settle.
   */
  release(taskId: string): boolean {
    this.readyAgain?.delete(taskId);
    return this.forget(taskId);
  }

  /** Forgets a ref in the window (not one out on an offer or held): its task is not ready now. */
  drop(taskId: string): boolean {
    const i = this.refs.findIndex((r, j) => j >= this.start && r?.taskId === taskId);
    if (i < 0) return false;
    this.refs.splice(i, 1);
    this.known.delete(taskId);
    this.sync();
    return true;
  }

  private inWindow(taskId: string): boolean {
    for (let i = this.start; i < this.refs.length; i++) if (this.refs[i]!.taskId === taskId) return true;
    return false;
  }

  has(taskId: string): boolean {
    return this.known.has(taskId);
  }

  needsRefill(): boolean {
    return this.more && !this.loading && this.size < LOW_WATER;
  }

  private insertSorted(ref: HeadRef): void {
    this.known.add(ref.taskId);
    const last = this.refs[this.refs.length - 1];
    if (this.size === 0 || !last || last.readyAt <= ref.readyAt) {
      this.refs.push(ref);
      return;
    }
    let i = this.refs.length - 1;
    while (i > this.start && this.refs[i - 1]!.readyAt > ref.readyAt) i--;
    this.refs.splice(i, 0, ref);
  }
}
