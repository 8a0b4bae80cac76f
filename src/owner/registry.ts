/**
 * The node-wide owner: the partitions this node leases, and the matching of
 * their heads to idle capacity. Heads of a (tenant, flowType) across all owned
 * partitions compete for that flow type's slots, oldest readyAt first.
 */
import type { HeldLease, UnloadCause } from '../cluster/leases';
import type { Keys } from '../store/keys';
import type { RedisClient } from '../store/redis';
import type { CancelledAttempt, OutcomeStatusName, TaskStore } from '../store/task-store';
import type { Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import type { Dispatcher, OfferResult } from './dispatcher';
import { BusyQueues, type HeadRef, type QueueHeads } from './heads';
import { PartitionOwner, type PartitionHost } from './partition';
import { Placement } from './placement';
import { QueuePauses } from './queue-pauses';
import { ReadyQueues } from './ready-queues';
import { HeadsResync } from './resync';
import { BacklogCounter } from './backlog';
import { OffersOut } from './offers-out';
import { Timers, type TimerHandle } from './timers';
import { UnheldAttempts, type AskHeld } from './unheld-attempts';

export interface MatchingWaits {
  stickyWaitMs: number;
  syncMatchWaitMs: number;
  /** matching.headsResyncInterval; 0 disables the resync. */
  headsResyncIntervalMs: number;
  /** How often the backlog gauges recount owned partitions. */
  backlogCountIntervalMs?: number;
}

export interface OwnerHooks {
  isNodeGone(nodeId: string, bootId: string): Promise<boolean>;
  leaseMoved(partition: number): void;
  outcomeWritten(partition: number, taskId: string, status: OutcomeStatusName, count?: number): void;
  /** The resync restored refs matching had lost (a bug: counted and logged). */
  headsRestored(n: number): void;
  headsIncompleteScan(): void;
  /** A queue's search for its next live head passed a run of stale ones (heads.ts STALE_RUN). */
  incompleteSeek(): void;
  /** A queue gained ready heads or ran out of them: peers should hear of this node's backlog soon. */
  backlogChanged(): void;
  /** Whether another owner advertises ready Steps of the queue (its CapacityUpdate). */
  peersBacklogged(queue: string): boolean;
  /** Sends Cancel to the slots (on any node) that hold these attempts. */
  cancelAttempts(attempts: CancelledAttempt[], reason: string): void;
  /** Asks a node which of these attempts its slots hold (unheld-attempts.ts). */
  heldAttempts: AskHeld;
  /** A task of `queue` is fetchable at `readyAt` in `partition` (a retry the owner queued): wake the fetches of its topic. */
  taskFetchable(queue: string, readyAt: number, partition: number): void;
}

const flowKey = (tenant: string, flowType: string) => `${tenant}\0${flowType}`;
/** How soon a dead-node sweep, or a partition load, that failed runs again. */
const DEAD_SWEEP_RETRY_MS = 1000;
const LOAD_RETRY_MS = 1000;
/** How long a partition being given up waits for its offers out to settle before its lease goes. */
export const OFFER_SETTLE_MS = 1000;
const RESOLVED = Promise.resolve();

/** The first pause of a queue's offers after one failed, and the longest (doubling between; queue-pauses.ts). */
const OFFER_ERROR_PAUSE_MS = 100;
const OFFER_ERROR_PAUSE_MAX_MS = 5000;

export class OwnerRegistry implements PartitionHost {
  private readonly partitions = new Map<number, PartitionOwner>();
  /** Queues with heads in memory, by (tenant, flowType). */
  /** Queues with a backlog, by name, over every partition owned here (QueueHeads keep it). */
  private readonly busy = new BusyQueues();
  /**
   * The queues with ready heads of each flow type, a line per Step type, oldest head
   * first: a Step type no idle slot can run is passed over whole, not waited on.
   */
  private readonly ready = new Map<string, Map<string, ReadyQueues>>();
  private readonly pumpScheduled = new Set<string>();
  /** Queues held out of the pump after failed offers. */
  private readonly queuePauses = new QueuePauses((q) => this.headsAvailable(q), OFFER_ERROR_PAUSE_MS, OFFER_ERROR_PAUSE_MAX_MS);
  private dispatcher: Dispatcher | undefined;
  private readonly timers: Timers;
  private sweepRetry: TimerHandle | undefined;
  private readonly placement: Placement;
  private readonly offersOut = new OffersOut();
  readonly resync: HeadsResync;
  readonly backlog: BacklogCounter;
  /** The attempt audit of the partitions owned here; the node runs it (node/attempt-audit.ts). */
  readonly unheldAttempts: UnheldAttempts;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly store: TaskStore,
    private readonly hooks: OwnerHooks,
    waits: MatchingWaits,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.timers = new Timers(clock);
    this.placement = new Placement({
      dispatcher: () => this.dispatcher,
      epochOf: (p) => this.partitions.get(p)?.lease.epoch,
      headsAvailable: (q) => this.headsAvailable(q),
      offerSent: (p) => this.offersOut.sent(p),
      offerSettled: (p) => this.offersOut.settled(p),
      // The queue's backlog in the whole cluster: here, and as the other owners advertise it.
      backlogged: (queue) => this.backlogged(queue) || hooks.peersBacklogged(queue),
    }, this.timers, waits.stickyWaitMs, waits.syncMatchWaitMs, clock, log);
    this.resync = new HeadsResync(() => this.owned(), redis, keys, {
      restored: (n) => hooks.headsRestored(n),
      incomplete: () => hooks.headsIncompleteScan(),
    }, waits.headsResyncIntervalMs, clock, log);
    this.resync.start();
    this.backlog = new BacklogCounter(() => this.owned(), () => this.dispatcher, redis, keys, waits.backlogCountIntervalMs ?? 5000, clock, log,
      (p, name) => this.resync.restoreQueue(p, name));
    this.backlog.start();
    this.unheldAttempts = new UnheldAttempts(() => this.owned(), hooks.heldAttempts, log);
  }

  /** Steps waiting in memory in their sticky or sync-match phase. */
  get waitingInMemory(): number {
    return this.placement.size;
  }

  stop(): void {
    this.timers.stop();
    this.resync.stop();
    this.backlog.stop();
  }

  setDispatcher(d: Dispatcher): void {
    this.dispatcher = d;
  }

  // ---- leases --------------------------------------------------------------

  async acquired(lease: HeldLease): Promise<void> {
    const owner = new PartitionOwner(lease, this.redis, this.keys, this.store, this, this.clock, this.log, this.busy);
    this.partitions.set(lease.partition, owner);
    this.hooks.backlogChanged(); // loading: peers hold their starts at enqueue until it is known
    await this.load(owner);
  }

  /**
   * Loads a partition's heads and timers and sweeps its dead-node attempts. A load
   * that fails (Redis unreachable a moment) runs again shortly while the lease is
   * still ours: left as it was, the partition stayed loading (no timers, no sweep,
   * and peers holding their starts at enqueue) for as long as the lease lasted.
   */
  private async load(owner: PartitionOwner): Promise<void> {
    const { partition, epoch } = owner.lease;
    try {
      await owner.load();
      this.hooks.backlogChanged();
      this.log.debug({ partition, epoch }, 'partition loaded');
      // The backlog count runs in the background: dispatch does not wait for it.
      void this.backlog.count(owner);
    } catch (err) {
      this.log.warn({ partition, err: (err as Error).message }, 'partition load failed; retrying');
      this.hooks.leaseMoved(partition); // perhaps it is not ours any more: the lease check says
      this.timers.schedule(this.clock.now() + LOAD_RETRY_MS, () => {
        if (this.partitions.get(partition) === owner) void this.load(owner);
      });
    }
  }

  /**
   * Stops offering the partition's heads at once; resolves once the offers already
   * out have settled (or OFFER_SETTLE_MS passed), so that the lease is deleted only
   * then (DESIGN §3). A lost lease is another node's already: nothing to wait for.
   */
  unload(lease: HeldLease, cause: UnloadCause): Promise<void> {
    const owner = this.partitions.get(lease.partition);
    if (!owner || owner.lease !== lease) return RESOLVED;
    owner.unload(cause);
    this.partitions.delete(lease.partition);
    this.hooks.backlogChanged();
    this.backlog.forget(owner);
    this.placement.dropPartition(lease.partition);
    for (const q of owner.queues.values()) this.queueForgotten(q);
    if (cause === 'lease-lost') return RESOLVED;
    return this.offersOut.settledWithin(lease.partition, OFFER_SETTLE_MS).then((settled) => {
      if (!settled) this.log.info({ partition: lease.partition, out: this.offersOut.count(lease.partition) }, 'partition given up with offers still out');
    });
  }

  owned(): PartitionOwner[] {
    return [...this.partitions.values()];
  }

  get(partition: number): PartitionOwner | undefined {
    return this.partitions.get(partition);
  }

  // ---- notifications -------------------------------------------------------

  /** A task became ready in a partition (enqueue, retry, release), with its sticky worker if any. False when not owned here. */
  taskReady(partition: number, queue: string, taskId: string, readyAt: number, sticky = ''): boolean {
    const owner = this.partitions.get(partition);
    if (!owner) return false;
    owner.taskReady(queue, taskId, readyAt, sticky);
    return true;
  }

  /**
   * A new Step was enqueued: ready now, it goes through the sticky and
   * sync-match phases; delayed, it waits for its readyAt in the queue, and
   * its sticky phase comes then.
   */
  taskEnqueued(partition: number, queue: string, taskId: string, readyAt: number, sticky: string): boolean {
    const owner = this.partitions.get(partition);
    if (!owner) return false;
    if (readyAt > this.clock.now() || !owner.active) return this.taskReady(partition, queue, taskId, readyAt, sticky);
    this.placement.place(owner.queueFor(queue), { taskId, readyAt }, sticky);
    return true;
  }

  /**
   * Whether nothing at this node stands in the way of a new Step starting at
   * enqueue in an idle slot here (sync match at enqueue): the partition, if
   * this node owns it, has loaded its heads (else no partition here is still
   * loading), the queue holds nothing ready in any partition owned here (a new
   * Step never cuts in front of a backlog), and no Step of the flow type waits
   * here in memory for a slot. The other owners' backlogs come from their
   * CapacityUpdates (node.ts).
   */
  mayStartAtEnqueue(partition: number, queue: string, tenant: string, flowType: string): boolean {
    const owner = this.partitions.get(partition);
    if (owner ? !owner.loaded || owner.queues.get(queue)?.loading : this.anyLoading()) return false;
    return !this.backlogged(queue) && !this.placement.hasWaiters(tenant, flowType);
  }

  /**
   * Whether a queue has ready Steps in any partition this node owns. A queue
   * (tenant, flow type, step type) spreads over every partition, so its backlog
   * is the sum of theirs: a new Step checks them all before it cuts in.
   */
  backlogged(queue: string): boolean {
    return this.busy.has(queue);
  }

  /**
   * What this node tells its peers of its backlog as an owner (CapacityUpdate):
   * the queues with ready Steps in a partition it owns, the flow types with
   * Steps waiting in memory, and whether some partition is still loading (its
   * backlog is not known yet). Peers start a new Step at enqueue only when
   * no owner names its queue or flow type.
   */
  backlogSnapshot(): { busyQueues: string[]; waitingFlows: string[]; loading: boolean } {
    const busy = new Set<string>();
    let loading = false;
    for (const owner of this.partitions.values()) {
      // A partition still loading may hold any backlog; a loaded one knows its
      // queues (one being refilled has `more` set or heads in memory).
      if (!owner.loaded) loading = true;
      for (const [name, q] of owner.queues) if (q.backlogged) busy.add(name);
    }
    return { busyQueues: [...busy], waitingFlows: this.placement.waitingFlows().map(([t, f]) => `${t}:${f}`), loading };
  }

  private anyLoading(): boolean {
    for (const owner of this.partitions.values()) if (!owner.loaded) return true;
    return false;
  }

  /** An attempt's deadline: the partition's timer fires by then. False when the partition is not owned here. */
  attemptStarted(partition: number, deadlineAt: number): boolean {
    const owner = this.partitions.get(partition);
    owner?.attemptDeadline(deadlineAt);
    return owner !== undefined;
  }

  /** A flow deadline: the partition's timer fires by then. False when the partition is not owned here. */
  flowDeadlineSet(partition: number, deadline: number): boolean {
    const owner = this.partitions.get(partition);
    owner?.flowDeadline(deadline);
    return owner !== undefined;
  }

  /**
   * A slot of `appWorkerId` for the flow type became idle: its sticky
   * waiters first, then the flow type's sync-match waiters, then the heads.
   */
  capacityAvailable(tenant: string, flowType: string, appWorkerId: string): void {
    this.placement.capacity(tenant, flowType, appWorkerId);
    this.schedulePump(flowKey(tenant, flowType));
  }

  /** The app worker stopped taking work (drains, disconnected): its sticky waiters move on at once. */
  workerUnavailable(tenant: string, appWorkerId: string): void {
    this.placement.workerUnavailable(tenant, appWorkerId);
  }

  /** The app worker declined a Step type (here or at a peer): its sticky waiters of the type move on once none of its slots can run it. */
  typeDeclined(tenant: string, flowType: string, stepType: string, appWorkerId: string): void {
    this.placement.typeDeclined(tenant, flowType, stepType, appWorkerId);
  }

  /**
   * Attempts of dead node instances fail through the retry policy. A sweep that
   * fails (Redis unreachable a moment) runs again shortly: nothing else would, until
   * the next membership change, and those attempts would stay running.
   */
  async membershipChanged(): Promise<void> {
    const failed = await Promise.all(this.owned().map((p) => p.failDeadNodeAttempts().then(() => false, (err: Error) => {
      this.log.warn({ partition: p.partition, err: err.message }, 'dead-node sweep failed; retrying');
      return true;
    })));
    if (failed.includes(true) && !this.sweepRetry) {
      this.sweepRetry = this.timers.schedule(this.clock.now() + DEAD_SWEEP_RETRY_MS, () => {
        this.sweepRetry = undefined;
        void this.membershipChanged();
      });
    }
  }

  // ---- PartitionHost -------------------------------------------------------

  /** A head that becomes ready with a sticky worker (a delayed Step, a retry) goes through the sticky phase. */
  placeSticky(q: QueueHeads, ref: HeadRef, sticky: string): void {
    this.placement.place(q, ref, sticky);
  }

  notReady(q: QueueHeads, taskId: string): void {
    this.placement.notReady(q, taskId);
  }

  /**
   * Heads of `q` can be offered. Only the queue object its partition's current owner
   * here holds counts: a placement offer that bounces after the partition was given
   * up hands back the old one (placement.ts toHeads), and were it kept, once the
   * partition came back here the old and the new queue would both offer each task.
   */
  headsAvailable(q: QueueHeads): void {
    const owner = this.partitions.get(q.partition);
    if (owner?.queues.get(q.name) !== q) return;
    if (this.queuePauses.held(q)) return; // its pause, or its one offer out, puts it back
    if (q.size === 0) {
      if (q.needsRefill()) owner.refillInBackground(q);
      return;
    }
    const key = flowKey(q.tenant, q.flowType);
    let lines = this.ready.get(key);
    if (!lines) this.ready.set(key, (lines = new Map()));
    let line = lines.get(q.stepType);
    if (!line) lines.set(q.stepType, (line = new ReadyQueues()));
    if (line.add(q)) this.hooks.backlogChanged();
    this.schedulePump(key);
  }

  isNodeGone(nodeId: string, bootId: string): Promise<boolean> {
    return this.hooks.isNodeGone(nodeId, bootId);
  }

  cancelAttempt(a: CancelledAttempt, reason: string): void {
    this.hooks.cancelAttempts([a], reason);
  }

  taskRequeued(partition: number, queue: string, readyAt: number): void {
    this.hooks.taskFetchable(queue, readyAt, partition);
  }

  queueForgotten(q: QueueHeads): void {
    const key = flowKey(q.tenant, q.flowType);
    const lines = this.ready.get(key);
    const line = lines?.get(q.stepType);
    if (!lines || !line) return;
    line.delete(q);
    if (line.size === 0) lines.delete(q.stepType);
    if (lines.size === 0) this.ready.delete(key);
  }

  leaseMoved(partition: number): void {
    this.hooks.leaseMoved(partition);
  }

  outcomeWritten(partition: number, taskId: string, status: OutcomeStatusName, count = 1): void {
    this.hooks.outcomeWritten(partition, taskId, status, count);
  }

  // ---- matching ------------------------------------------------------------

  private schedulePump(key: string): void {
    if (this.pumpScheduled.has(key)) return;
    this.pumpScheduled.add(key);
    // A resolved promise, not queueMicrotask: that one builds an AsyncResource per call.
    void RESOLVED.then(() => {
      this.pumpScheduled.delete(key);
      this.pump(key);
    });
  }

  /** Offers heads of one flow type while some node has an idle slot for it. */
  private pump(key: string): void {
    const lines = this.ready.get(key);
    const d = this.dispatcher;
    if (!lines || !d) return;
    const emptied = () => this.hooks.backlogChanged();
    // Step types no node has an idle slot for: their heads wait, the other types' go on
    // (a slot whose worker declined one type, or runs none of it, still takes the rest).
    let noSlot: Set<string> | undefined;
    for (;;) {
      let line: ReadyQueues | undefined;
      let q: QueueHeads | undefined;
      for (const [stepType, l] of lines) {
        if (noSlot?.has(stepType)) continue;
        const head = l.oldest(emptied);
        if (!head) lines.delete(stepType);
        else if (!q || head.peek()!.readyAt < q.peek()!.readyAt) [line, q] = [l, head];
      }
      if (lines.size === 0) {
        this.ready.delete(key);
        return;
      }
      if (!q || !line) return;
      const node = d.reserveSlot(q.tenant, q.flowType, q.stepType);
      if (!node) {
        (noSlot ??= new Set()).add(q.stepType);
        continue;
      }
      const ref = q.shift()!;
      line.taken(q, emptied);
      // A queue whose offers failed offers one head at a time until one settles.
      if (this.queuePauses.sent(q)) this.queueForgotten(q);
      const owner = this.partitions.get(q.partition);
      if (!owner) continue;
      if (q.needsRefill()) owner.refillInBackground(q);
      const offer = {
        partition: q.partition, taskId: ref.taskId, attempt: 0,
        tenant: q.tenant, flowType: q.flowType, stepType: q.stepType, readyAt: ref.readyAt, path: 'queued' as const,
      };
      this.offersOut.sent(q.partition);
      const sentAt = this.clock.now();
      d.offer(node, offer, owner.lease.epoch).then(
        (result) => {
          const held = this.queuePauses.settled(q);
          this.settle(q, ref, result);
          if (held) this.headsAvailable(q);
        },
        (err: Error) => {
          this.log.warn({ taskId: ref.taskId, err: err.message }, 'offer failed');
          // The queue leaves the lines for its pause: the other partitions' heads are offered meanwhile.
          this.queuePauses.failed(q, this.clock.now() - sentAt);
          this.queueForgotten(q);
          this.settle(q, ref, 'no-slot');
        },
      );
    }
  }

  private settle(q: QueueHeads, ref: { taskId: string; readyAt: number }, result: OfferResult): void {
    this.offersOut.settled(q.partition);
    if (result === 'no-slot') {
      q.unshift(ref);
      this.headsAvailable(q); // only while q is still its partition's queue here
      return;
    }
    if (q.settle(ref.taskId)) this.headsAvailable(q);
    if (q.passed(result === 'gone')) this.hooks.incompleteSeek();
  }
}
