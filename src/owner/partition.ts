/**
 * One owned partition: its queues' heads, the timers of its delayed tasks,
 * attempt deadlines and flow deadlines, and the failing of attempts whose
 * node died. Owner-initiated scripts carry the lease token and are refused
 * once the lease has moved; the partition then stops doing work.
 */
import { LRUCache } from 'lru-cache';
import type { HeldLease, UnloadCause } from '../cluster/leases';
import type { Keys } from '../store/keys';
import { parseQueueName } from '../store/keys';
import { attemptNode, attemptSlot } from '../store/layout';
import type { RedisClient } from '../store/redis';
import type { CancelledAttempt, FailCondition, OutcomeStatusName, RunningAttempt, TaskStore } from '../store/task-store';
import type { Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import { QueueHeads, type BusyQueues, type HeadRef } from './heads';
import { Timers, type TimerHandle } from './timers';

/** What a partition needs from the node around it. */
export interface PartitionHost {
  /** Heads of `q` became available to offer. */
  headsAvailable(q: QueueHeads): void;
  /** Whether the node instance that started an attempt is gone, as Redis says now (Membership.isGone). */
  isNodeGone(nodeId: string, bootId: string): Promise<boolean>;
  /** An owner-initiated script found the lease gone. */
  leaseMoved(partition: number): void;
  /** An outcome was written (doorbell for outcome waiters). */
  outcomeWritten(partition: number, taskId: string, status: OutcomeStatusName, count?: number): void;
  /** The partition forgot an idle queue: nothing may keep offering from it. */
  queueForgotten(q: QueueHeads): void;
  /** An attempt ended without its worker (it timed out): its slot gets a Cancel. */
  cancelAttempt(a: CancelledAttempt, reason: string): void;
  /** An attempt the owner ended went back to its queue for a retry: fetches of its topic may take it too. */
  taskRequeued(partition: number, queue: string, readyAt: number): void;
  /** A head ready now with a sticky worker: its sticky phase (placement) instead of the window. */
  placeSticky(q: QueueHeads, ref: HeadRef, sticky: string): void;
  /** A task held in its sticky or sync-match phase is not ready now (locked by a fetch): it leaves the phase. */
  notReady(q: QueueHeads, taskId: string): void;
}

const EXPIRY_BATCH = 100;
/** Task reads a look at the running attempts has in flight at once. */
const INFLIGHT_READS = 500;

/** An attempt that runs, as Redis holds it, on a node instance that is not gone. */
export interface LiveAttempt extends RunningAttempt {
  node: string;
  boot: string;
}
/** The inflight score of an attempt without timeouts (Lua's 2^53-1). */
const NO_DEADLINE = 9007199254740991;
/** A timer whose Redis work failed (a failover, a dropped connection) runs again this much later. */
export const TIMER_RETRY_MS = 1000;
/**
 * Delayed Steps and retries whose sticky worker this owner remembers until they are
 * ready. Only affinity rides on it: an evicted entry, or a new owner after a
 * handover, offers the Step to any worker.
 */
const STICKY_AT_READY_ENTRIES = 10_000;

export class PartitionOwner {
  readonly queues = new Map<string, QueueHeads>();
  private readonly timers: Timers;
  private inflightWake = Infinity;
  private deadlineWake = Infinity;
  /**
   * The timers of inflightWake and deadlineWake (and of each queue's wakeAt): one armed
   * earlier cancels the one it replaces, which would else stay in the heap until its time.
   */
  private inflightTimer: TimerHandle | undefined;
  private deadlineTimer: TimerHandle | undefined;
  private state: 'loading' | 'active' | 'unloaded' = 'loading';
  /**
   * Made on first use: an LRUCache allocates its whole capacity up front (≈ 3 ms of CPU
   * and 0.3 MB), which every acquire paid, 64 of them in one turn at a start or a takeover.
   */
  private stickyAtReady: LRUCache<string, string> | undefined;
  /** An owner-initiated script found the lease moved: this owner is done, its unload on the way. */
  private leaseRefused = false;
  /** This owner's fails in flight, by task: one fails a task at a time (failAttempt). */
  private readonly failing = new Map<string, Promise<boolean>>();

  constructor(
    readonly lease: HeldLease,
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly store: TaskStore,
    private readonly host: PartitionHost,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Where its queues report a backlog (the registry's count over every owned partition). */
    private readonly busy?: BusyQueues,
  ) {
    this.timers = new Timers(clock);
  }

  get partition(): number {
    return this.lease.partition;
  }

  get active(): boolean {
    return this.state !== 'unloaded';
  }

  /** Its queues' heads are loaded from Redis: a queue not in memory holds nothing ready. */
  get loaded(): boolean {
    return this.state === 'active';
  }

  /** Reloads heads and timers from Redis: the oldest queued task of each queue first. */
  async load(): Promise<void> {
    const p = this.partition;
    const names = await this.redis.smembers(this.keys.queues(p));
    await Promise.all(names.map((n) => this.refill(this.queueFor(n))));
    if (!this.active) return;
    this.state = 'active';
    await Promise.all([this.failDeadNodeAttempts(), this.armInflight(), this.armDeadlines()]);
  }

  unload(cause: UnloadCause): void {
    if (this.state === 'unloaded') return;
    this.state = 'unloaded';
    this.timers.stop();
    for (const q of this.queues.values()) q.detach();
    this.log.info({ partition: this.partition, epoch: this.lease.epoch, cause }, 'partition unloaded');
  }

  queueFor(name: string): QueueHeads {
    let q = this.queues.get(name);
    if (!q) {
      const { tenant, flowType, stepType } = parseQueueName(name);
      q = new QueueHeads(this.partition, name, tenant, flowType, stepType, this.busy);
      // A queue first seen after the load held nothing then: every entry since came through here.
      if (this.state === 'active') q.more = false;
      this.queues.set(name, q);
    }
    return q;
  }

  /**
   * The queue left the partition's set in Redis (it holds nothing): its heads
   * go too when idle, or every queue name ever used would stay in memory and
   * in the backlog gauges for as long as the node owns the partition.
   */
  forgetQueue(name: string): boolean {
    const q = this.queues.get(name);
    if (!q || !q.idle || this.state !== 'active') return false;
    q.detach();
    this.queues.delete(name);
    this.host.queueForgotten(q);
    return true;
  }

  /**
   * A task of queue `name` is ready at `readyAt` (enqueue, retry, release). With a
   * `sticky` worker it is offered to that worker first (DESIGN §4), now or once ready.
   */
  taskReady(name: string, taskId: string, readyAt: number, sticky = ''): void {
    if (!this.active) return;
    const q = this.queueFor(name);
    if (readyAt > this.clock.now()) {
      // Not ready before then (a fetch locked it, say): a head of it in the window is
      // stale, and on a queue no slot stream serves nothing would ever offer it away.
      this.dropHead(q, taskId);
      if (sticky) (this.stickyAtReady ??= new LRUCache({ max: STICKY_AT_READY_ENTRIES })).set(taskId, sticky);
      this.wakeQueueAt(q, readyAt);
      return;
    }
    if (sticky && !q.has(taskId)) {
      this.host.placeSticky(q, { taskId, readyAt }, sticky);
      return;
    }
    q.add({ taskId, readyAt });
    if (q.needsRefill()) this.refillInBackground(q);
    else if (q.size > 0) this.host.headsAvailable(q);
  }

  /** Reads the next ready entries of a queue into its window; arms the timer of its next delayed one. */
  async refill(q: QueueHeads): Promise<void> {
    if (q.loading || !this.active) return;
    q.loading = true;
    const sticky: [HeadRef, string][] = [];
    try {
      const now = this.clock.now();
      const key = this.keys.queue(this.partition, q.name);
      const count = q.refillCount;
      const [ready, next] = await Promise.all([
        this.redis.zrangebyscore(key, '-inf', now, 'WITHSCORES', 'LIMIT', 0, count),
        this.redis.zrangebyscore(key, `(${now}`, '+inf', 'WITHSCORES', 'LIMIT', 0, 1),
      ]);
      const refs = [];
      for (let i = 0; i + 1 < ready.length; i += 2) {
        const ref = { taskId: ready[i]!, readyAt: Number(ready[i + 1]) };
        // A delayed Step or retry with a sticky worker, ready now: its sticky phase, not the window.
        const worker = this.stickyAtReady?.size && !q.has(ref.taskId) ? this.stickyAtReady.get(ref.taskId) : undefined;
        if (worker === undefined) refs.push(ref);
        else sticky.push([ref, worker]);
      }
      q.fill(refs, ready.length / 2 >= count);
      if (next.length === 2) this.wakeQueueAt(q, Number(next[1]));
    } finally {
      q.loading = false;
    }
    if (!this.active) return;
    for (const [ref, worker] of sticky) {
      this.stickyAtReady?.delete(ref.taskId);
      this.host.placeSticky(q, ref, worker);
    }
    if (q.size > 0) this.host.headsAvailable(q);
    // Left to this refill while it ran: read again. Not when all it read is out on offers
    // or held (they spun here, a read per turn): the first of them to settle reads again.
    else if (q.more && !q.refillWouldRepeat) this.refillInBackground(q);
  }

  /** A refill no caller waits for: one that fails (Redis did not answer) runs again shortly. */
  refillInBackground(q: QueueHeads): void {
    void this.refill(q).catch((err: Error) => {
      this.log.warn({ partition: this.partition, queue: q.name, err: err.message }, 'queue refill failed; trying again');
      this.wakeQueueAt(q, this.clock.now() + TIMER_RETRY_MS);
    });
  }

  private wakeQueueAt(q: QueueHeads, at: number): void {
    // A refill in flight at the unload must not arm a timer that keeps this owner alive until then.
    if (!this.active || at >= q.wakeAt) return;
    q.wakeAt = at;
    q.wakeTimer?.cancel();
    q.wakeTimer = this.timers.schedule(at, () => {
      if (q.wakeAt !== at) return;
      q.wakeAt = Infinity;
      q.wakeTimer = undefined;
      q.more = true;
      this.refillInBackground(q);
    });
  }

  // ---- attempt deadlines and dead nodes ------------------------------------

  /** An attempt started or its deadline moved: make sure the inflight timer fires by then. */
  attemptDeadline(at: number): void {
    // NO_DEADLINE: an attempt without method or heartbeat timeout ends only with its node.
    if (!this.active || at >= NO_DEADLINE || at >= this.inflightWake) return;
    this.inflightWake = at;
    this.inflightTimer?.cancel();
    this.inflightTimer = this.timers.schedule(at, () => {
      if (this.inflightWake !== at) return;
      this.inflightWake = Infinity;
      this.inflightTimer = undefined;
      void this.expireAttempts().catch((err: Error) => {
        // The attempts still due stay in the inflight set: the next run finds them.
        this.log.warn({ err: err.message }, 'attempt expiry failed; trying again');
        this.attemptDeadline(this.clock.now() + TIMER_RETRY_MS);
      });
    });
  }

  /**
   * Arms both timers from Redis again. The owner hears of attempts started and
   * deadlines set on other nodes by doorbells, which a broken link can lose:
   * the periodic backlog count calls this, so a lost one costs a few seconds.
   */
  async rearmTimers(): Promise<void> {
    if (!this.active) return;
    await Promise.all([this.armInflight(), this.armDeadlines()]);
  }

  private async armInflight(): Promise<void> {
    const first = await this.redis.zrange(this.keys.inflight(this.partition), 0, 0, 'WITHSCORES');
    if (first.length === 2) this.attemptDeadline(Number(first[1]));
  }

  /**
   * Fails attempts past their method or heartbeat deadline; the retry policy runs.
   * What this reads can be out of date by the time the fail script runs (a
   * heartbeat moved the deadline, or the attempt ended and another started): the
   * script fails an attempt only if it is still due then.
   */
  private async expireAttempts(): Promise<void> {
    if (!this.active) return;
    const now = this.clock.now();
    const due = await this.redis.zrangebyscore(this.keys.inflight(this.partition), '-inf', now, 'LIMIT', 0, EXPIRY_BATCH);
    await Promise.all(due.map((id) => this.failAttempt(id, 'attempt timed out', 'timeout', { kind: 'due' })));
    // Refused: the attempts are still due, and re-armed the timer would fire at once, a
    // batch of refused scripts a turn until the unload lands. The new owner expires them.
    if (this.leaseRefused) return;
    await this.armInflight();
  }

  /** Tells the node once: each refused script of a batch asked for a lease pass of its own. */
  private leaseGone(): void {
    if (this.leaseRefused) return;
    this.leaseRefused = true;
    this.host.leaseMoved(this.partition);
  }

  /**
   * One look at the partition's running attempts (its inflight set, task by task): those
   * of node instances that are gone fail now (DESIGN §6: within cluster.nodeTtl); the
   * others are returned, for the attempt audit to ask their nodes whether a slot holds
   * them (unheld-attempts.ts). The fail script checks that the attempt still runs on
   * that node instance: another, started on a live node since this read, is left alone.
   */
  async failDeadNodeAttempts(): Promise<LiveAttempt[]> {
    if (!this.active) return [];
    const ids = await this.redis.zrange(this.keys.inflight(this.partition), 0, -1);
    // One look per node instance, however many of its attempts this partition holds.
    const gone = new Map<string, Promise<boolean>>();
    const live: LiveAttempt[] = [];
    for (let i = 0; i < ids.length; i += INFLIGHT_READS) {
      await Promise.all(ids.slice(i, i + INFLIGHT_READS).map(async (id) => {
        const [run, n, b, state, attempt, nonce, queue] = await this.redis.hmget(
          this.keys.task(this.partition, id), 'run', 'node', 'boot', 'state', 'attempt', 'nonce', 'queue');
        const { node, boot } = attemptNode(run, n, b);
        if (!node) return;
        const instance = `${node}\0${boot}`;
        if (!gone.has(instance)) gone.set(instance, this.host.isNodeGone(node, boot));
        if (await gone.get(instance)) {
          await this.failAttempt(id, `worker lost: node ${node} is gone`, 'worker_lost', { kind: 'node-lost', node, boot });
        } else if (state === 'running' && nonce) {
          live.push({ partition: this.partition, taskId: id, attempt: Number(attempt ?? 0), nonce, queue: queue ?? '', node, boot });
        }
      }));
    }
    return live;
  }

  /**
   * Fails, as worker lost, an attempt that runs on a live node none of whose slots held
   * it on two looks (unheld-attempts.ts): its end never reached Redis, or Redis lost it.
   * The script checks that it still runs on that node instance under the nonce read, so
   * an attempt started there since is left alone. True when it failed it.
   */
  failUnheld(a: LiveAttempt): Promise<boolean> {
    return this.failAttempt(a.taskId, `worker lost: no slot of node ${a.node} holds the attempt (its end was not recorded)`,
      'worker_lost', { kind: 'node-lost', node: a.node, boot: a.boot }, a);
  }

  /**
   * Fails the attempt of `taskId` running now (or `pinned`, the one read earlier), if
   * `condition` still holds when the fail script runs (it checks; nothing read here
   * decides). A task that no longer runs loses the inflight entry left of it in the same
   * script, never by a write of its own here: an attempt started since this read keeps
   * its entry. True when it failed the attempt.
   */
  private failAttempt(taskId: string, message: string, type: string, condition: FailCondition, pinned?: RunningAttempt): Promise<boolean> {
    // Two passes may fail one attempt at once (two dead-node sweeps, a sweep and an expiry). Side by
    // side, both read the attempt before either fail landed, the script answered the second as a replay
    // of the first, and its outcome was counted and rung twice (a retry made ready twice). The second
    // reads the task once the first has finished, and finds the attempt ended.
    const before = this.failing.get(taskId);
    const run = (before ? before.catch(() => undefined) : Promise.resolve())
      .then(() => this.failOnce(taskId, message, type, condition, pinned))
      .finally(() => {
        if (this.failing.get(taskId) === run) this.failing.delete(taskId);
      });
    this.failing.set(taskId, run);
    return run;
  }

  private async failOnce(taskId: string, message: string, type: string, condition: FailCondition, pinned?: RunningAttempt): Promise<boolean> {
    // A pinned attempt was read whole a moment ago (its queue too): no second read of the task.
    const [attempt, nonce, queue, run, slot, node] = pinned
      ? [String(pinned.attempt), pinned.nonce, pinned.queue, null, null, null]
      : await this.redis.hmget(this.keys.task(this.partition, taskId), 'attempt', 'nonce', 'queue', 'run', 'slot', 'node');
    const ref = { partition: this.partition, taskId, attempt: Number(attempt ?? 0), nonce: nonce ?? '' };
    const r = await this.store.fail(
      ref, { message, type, nonRetryable: false, retryAfterMs: 0 }, this.clock.now(), this.lease.token, condition,
    );
    // Its worker may still be running it, on a slot that stays busy until told:
    // the retry runs elsewhere meanwhile (a worker lost has no slot left to tell).
    if (type === 'timeout' && (r.kind === 'retry' || r.kind === 'terminal')) {
      const where = attemptSlot(run, slot, node);
      if (where.streamId && where.nodeId) this.host.cancelAttempt({ taskId, attempt: ref.attempt, nonce: ref.nonce, ...where }, message);
    }
    if (r.kind === 'retry' && queue) {
      this.taskReady(queue, taskId, r.readyAt, r.sticky);
      this.host.taskRequeued(this.partition, queue, r.readyAt);
      this.flowDeadline(r.flowDeadline); // its timer may have found the task running and passed on
    }
    else if (r.kind === 'terminal') this.host.outcomeWritten(this.partition, taskId, r.status);
    else if (r.kind === 'lease-moved') this.leaseGone();
    return r.kind === 'retry' || r.kind === 'terminal';
  }

  // ---- flow deadlines -----------------------------------------------------

  flowDeadline(at: number): void {
    if (!this.active || at <= 0 || at >= this.deadlineWake) return;
    this.deadlineWake = at;
    this.deadlineTimer?.cancel();
    this.deadlineTimer = this.timers.schedule(at, () => {
      if (this.deadlineWake !== at) return;
      this.deadlineWake = Infinity;
      this.deadlineTimer = undefined;
      void this.expireDeadlines().catch((err: Error) => {
        this.log.warn({ err: err.message }, 'deadline expiry failed; trying again');
        this.flowDeadline(this.clock.now() + TIMER_RETRY_MS);
      });
    });
  }

  private async armDeadlines(): Promise<void> {
    const first = await this.redis.zrange(this.keys.deadlines(this.partition), 0, 0, 'WITHSCORES');
    if (first.length === 2) this.flowDeadline(Number(first[1]));
  }

  /**
   * A queued task of this partition ended without a slot (its flow deadline passed): a head
   * of it is stale. Offered, it would bounce as gone; on a queue no stream slot serves nothing
   * offers it away, and it stayed a queued Step in the backlog gauges, and the queue's backlog,
   * for as long as this node owned the partition.
   */
  private taskEnded(taskId: string): void {
    for (const q of this.queues.values()) {
      if (q.has(taskId)) return this.dropHead(q, taskId);
    }
  }

  /** A head of `taskId` in `q` is stale: out of the window, or out of its sticky or sync-match phase. */
  private dropHead(q: QueueHeads, taskId: string): void {
    if (q.has(taskId) && !q.drop(taskId)) this.host.notReady(q, taskId);
  }

  private async expireDeadlines(): Promise<void> {
    if (!this.active) return;
    const now = this.clock.now();
    const due = await this.redis.zrangebyscore(this.keys.deadlines(this.partition), '-inf', now, 'LIMIT', 0, EXPIRY_BATCH);
    const results = await Promise.all(due.map((id) => this.store.timeout(this.partition, id, now, this.lease.token)));
    results.forEach((r, i) => {
      if (r !== 'timed-out') return;
      this.taskEnded(due[i]!);
      this.host.outcomeWritten(this.partition, due[i]!, 'TIMED_OUT');
    });
    if (results.includes('lease-moved')) {
      this.leaseGone();
      return;
    }
    await this.armDeadlines();
  }
}
