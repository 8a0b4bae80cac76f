/**
 * The in-memory phases of a new Step (DESIGN §4): first its flow's sticky
 * worker, up to matching.stickyWait while that worker is connected but busy;
 * then any worker of the flow type, up to matching.syncMatchWait; then the
 * durable queue's heads. The Step is durable from its enqueue: these phases
 * only decide who is offered it first. A freed slot serves sticky waiters of
 * its worker, then sync-match waiters of its flow type, then the heads.
 */
import { Yallist, type Node } from 'yallist';
import type { Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import type { DispatchPath, Dispatcher, OfferResult } from './dispatcher';
import type { HeadRef, QueueHeads } from './heads';
import type { TimerHandle, Timers } from './timers';

export interface PlacementHost {
  dispatcher(): Dispatcher | undefined;
  /** The partition's lease epoch, or undefined when it is no longer owned here. */
  epochOf(partition: number): number | undefined;
  /** The task entered the durable-queue phase: its queue has heads to offer. */
  headsAvailable(q: QueueHeads): void;
  /** An offer of the partition's went out, and settled (offers-out.ts). */
  offerSent(partition: number): void;
  offerSettled(partition: number): void;
  /** Whether the queue has ready Steps in any partition owned here (its backlog on this node). */
  backlogged(queue: string): boolean;
}

interface Waiter {
  q: QueueHeads;
  ref: HeadRef;
  phase: 'sticky' | 'sync';
  sticky: string;
  timer: TimerHandle;
  /** Park order, across Step types: the oldest sync-match waiter is served first. */
  seq: number;
  /** When its phase ends (epoch ms). */
  until: number;
  /** The waiter's place in its line (its Step type's, or its sticky worker's for the flow type). */
  node?: Node<Waiter>;
}

/**
 * The sync-match waiters of one (tenant, flow type), a line per Step type:
 * a freed slot tries the oldest waiter of each type at most once, and a type
 * without a slot is skipped whole instead of waiter by waiter (a burst parks
 * thousands, and every freed slot looked at each of them).
 */
type SyncLines = Map<string, Yallist<Waiter>>;

/**
 * The sticky waiters of one app worker, a line per flow type: a freed slot of
 * the worker serves its flow type's line from the oldest, and stops at the
 * first Step it finds no slot for (it copied and walked every waiter of the
 * worker before).
 */
type StickyLines = Map<string, Yallist<Waiter>>;

const flowKey = (tenant: string, flowType: string) => `${tenant}\0${flowType}`;
const workerKey = (tenant: string, appWorkerId: string) => `${tenant}\0${appWorkerId}`;

export class Placement {
  private readonly stickyWaiters = new Map<string, StickyLines>();
  private readonly syncWaiters = new Map<string, SyncLines>();
  /** Waiters of either phase by (tenant, flowType): the enqueue path asks on every new Step. */
  private readonly byFlow = new Map<string, number>();
  /** Waiters by task id (ids are unique across partitions): a task locked meanwhile leaves its phase. */
  private readonly byTask = new Map<string, Waiter>();
  private count = 0;
  private seq = 0;

  constructor(
    private readonly host: PlacementHost,
    private readonly timers: Timers,
    private readonly stickyWaitMs: number,
    private readonly syncMatchWaitMs: number,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Steps waiting in their sticky or sync-match phase. */
  get size(): number {
    return this.count;
  }

  /** Whether Steps of the flow type wait in memory (sync-match phase, or sticky to some worker). */
  hasWaiters(tenant: string, flowType: string): boolean {
    return this.count > 0 && this.byFlow.has(flowKey(tenant, flowType));
  }

  /** The (tenant, flowType) pairs with Steps waiting here for a slot. */
  waitingFlows(): [tenant: string, flowType: string][] {
    return [...this.byFlow.keys()].map((k) => k.split('\0') as [string, string]);
  }

  /** Places a Step that just became ready for the first time. */
  place(q: QueueHeads, ref: HeadRef, sticky: string): void {
    q.hold(ref.taskId);
    const d = this.host.dispatcher();
    if (d && sticky) {
      const presence = d.presence(q.tenant, sticky, q.flowType, q.stepType);
      if (presence === 'idle' && this.tryOffer(q, ref, 'sticky', sticky)) return;
      if (presence !== 'absent') {
        this.park(q, ref, 'sticky', sticky);
        return;
      }
    }
    this.syncPhase(q, ref);
  }

  private syncPhase(q: QueueHeads, ref: HeadRef): void {
    const d = this.host.dispatcher();
    // Behind an existing backlog that a connected worker can run: no cutting in. The
    // backlog is the queue's in every partition, here and at the other owners (their
    // CapacityUpdates), not just this Step's: a waiter is served before the heads, so
    // one that cut in would starve them.
    if (!d || (this.host.backlogged(q.name) && d.canServe(q.tenant, q.flowType, q.stepType))) {
      this.toHeads(q, ref);
      return;
    }
    if (this.tryOffer(q, ref, 'sync')) return;
    this.park(q, ref, 'sync', '');
  }

  private toHeads(q: QueueHeads, ref: HeadRef): void {
    q.unhold(ref);
    if (q.backlogged) this.host.headsAvailable(q);
  }

  private park(q: QueueHeads, ref: HeadRef, phase: 'sticky' | 'sync', sticky: string, until?: number): void {
    const wait = phase === 'sticky' ? this.stickyWaitMs : this.syncMatchWaitMs;
    const at = until ?? this.clock.now() + wait;
    const w: Waiter = {
      q, ref, phase, sticky, seq: this.seq++, until: at,
      timer: this.timers.schedule(at, () => {
        if (!this.unpark(w)) return;
        if (phase === 'sticky') this.syncPhase(q, ref);
        else this.toHeads(q, ref);
      }),
    };
    const fk = flowKey(q.tenant, q.flowType);
    const [map, key, lineKey] = phase === 'sticky'
      ? [this.stickyWaiters, workerKey(q.tenant, sticky), q.flowType]
      : [this.syncWaiters, fk, q.stepType];
    let lines = map.get(key);
    if (!lines) map.set(key, (lines = new Map()));
    let line = lines.get(lineKey);
    if (!line) lines.set(lineKey, (line = new Yallist()));
    line.push(w);
    w.node = line.tail;
    this.byTask.set(ref.taskId, w);
    this.byFlow.set(fk, (this.byFlow.get(fk) ?? 0) + 1);
    this.count++;
  }

  private unpark(w: Waiter): boolean {
    const fk = flowKey(w.q.tenant, w.q.flowType);
    const [map, key, lineKey] = w.phase === 'sticky'
      ? [this.stickyWaiters, workerKey(w.q.tenant, w.sticky), w.q.flowType]
      : [this.syncWaiters, fk, w.q.stepType];
    const lines = map.get(key);
    const line = lines?.get(lineKey);
    if (!line || !w.node || w.node.list !== line) return false;
    line.removeNode(w.node);
    w.node = undefined;
    if (this.byTask.get(w.ref.taskId) === w) this.byTask.delete(w.ref.taskId);
    if (line.length === 0) lines!.delete(lineKey);
    if (lines!.size === 0) map.delete(key);
    w.timer.cancel();
    const n = (this.byFlow.get(fk) ?? 1) - 1;
    if (n > 0) this.byFlow.set(fk, n);
    else this.byFlow.delete(fk);
    this.count--;
    return true;
  }

  /**
   * A slot of `appWorkerId` for this flow type became idle: serve its sticky
   * waiters, then the flow type's sync-match waiters, while slots last.
   */
  capacity(tenant: string, flowType: string, appWorkerId: string): void {
    const sticky = this.stickyWaiters.get(workerKey(tenant, appWorkerId))?.get(flowType);
    const d = this.host.dispatcher();
    for (let w = sticky?.head?.value; w; w = sticky?.head?.value) {
      const node = d?.reserveSlot(tenant, flowType, w.q.stepType, appWorkerId);
      if (!node) {
        // The worker declined this Step type while the Step waited for it: its sticky
        // phase ends now (DESIGN §4), and the waiters behind it may still fit the slot.
        if (d?.presence(tenant, appWorkerId, flowType, w.q.stepType) !== 'absent' || !this.unpark(w)) break;
        this.syncPhase(w.q, w.ref);
        continue;
      }
      if (!this.unpark(w)) break;
      this.offerTo(node, w.q, w.ref, 'sticky', appWorkerId, w.until);
    }
    const lines = this.syncWaiters.get(flowKey(tenant, flowType));
    // The oldest waiter of the Step types that may still find a slot, while slots last:
    // one reservation attempt per Step type that finds none.
    let noSlot: Set<string> | undefined;
    while (lines && lines.size > 0) {
      let first: Waiter | undefined;
      for (const [stepType, line] of lines) {
        const w = line.head?.value;
        if (w && !noSlot?.has(stepType) && (!first || w.seq < first.seq)) first = w;
      }
      if (!first) break;
      const node = this.host.dispatcher()?.reserveSlot(tenant, flowType, first.q.stepType);
      if (!node) {
        (noSlot ??= new Set()).add(first.q.stepType);
        continue;
      }
      if (!this.unpark(first)) break;
      this.offerTo(node, first.q, first.ref, 'sync');
    }
  }

  /** The worker can no longer take its sticky Steps (gone, draining): they move on at once. */
  workerUnavailable(tenant: string, appWorkerId: string): void {
    const lines = this.stickyWaiters.get(workerKey(tenant, appWorkerId));
    if (!lines) return;
    for (const line of [...lines.values()]) {
      for (const w of [...line]) {
        this.unpark(w);
        this.syncPhase(w.q, w.ref);
      }
    }
  }

  /**
   * The worker declined a Step type: its sticky Steps of that type move on at once (DESIGN §4),
   * unless it can still run the type at another node (declines are remembered per node).
   * A freed slot of the worker finds them too (capacity), but the slot that declined may go
   * to a waiting RPC instead, and they waited out matching.stickyWait.
   */
  typeDeclined(tenant: string, flowType: string, stepType: string, appWorkerId: string): void {
    const line = this.stickyWaiters.get(workerKey(tenant, appWorkerId))?.get(flowType);
    if (!line || this.host.dispatcher()?.presence(tenant, appWorkerId, flowType, stepType) !== 'absent') return;
    for (const w of [...line]) {
      if (w.q.stepType === stepType && this.unpark(w)) this.syncPhase(w.q, w.ref);
    }
  }

  /**
   * The task is not ready now (a fetch locked it during its sticky or sync-match phase):
   * it leaves the phase without going to the heads, where a head of a locked task would
   * count as backlog and be offered only to bounce. Its queue hears of it again when
   * it is ready (the lock's lapse, an unlock, a retry). False when it is not waiting here.
   */
  notReady(q: QueueHeads, taskId: string): boolean {
    const w = this.byTask.get(taskId);
    if (!w || w.q !== q || !this.unpark(w)) return false;
    if (q.release(taskId)) this.host.headsAvailable(q);
    return true;
  }

  /**
   * Its sticky worker's slot was taken before the offer reached it: the worker is busy,
   * so the Step waits for it for the rest of its sticky phase, as one parked at once
   * would; with the worker gone or that phase over it goes on to sync-match.
   */
  private stickyBounced(q: QueueHeads, ref: HeadRef, appWorkerId: string, until: number): void {
    if (this.host.epochOf(q.partition) === undefined) return; // the partition left: its new owner reloads it
    const presence = this.host.dispatcher()?.presence(q.tenant, appWorkerId, q.flowType, q.stepType);
    if (until > this.clock.now() && presence !== undefined && presence !== 'absent') this.park(q, ref, 'sticky', appWorkerId, until);
    else this.syncPhase(q, ref);
  }

  /** A partition left this node: its waiters are dropped (the new owner reloads them from Redis). */
  dropPartition(partition: number): void {
    for (const map of [this.stickyWaiters, this.syncWaiters]) {
      for (const lines of [...map.values()]) {
        for (const line of [...lines.values()]) for (const w of [...line]) if (w.q.partition === partition) this.unpark(w);
      }
    }
  }

  private tryOffer(q: QueueHeads, ref: HeadRef, path: DispatchPath, appWorkerId?: string): boolean {
    const node = this.host.dispatcher()?.reserveSlot(q.tenant, q.flowType, q.stepType, appWorkerId);
    if (!node) return false;
    this.offerTo(node, q, ref, path, appWorkerId, this.clock.now() + this.stickyWaitMs);
    return true;
  }

  /**
   * Offers to a node whose slot was just reserved. A bounce (the slot was taken
   * meanwhile) sends a sync-match Step to the heads; a sticky one waits on for its
   * worker until `stickyUntil` while that worker is still there (DESIGN §4).
   */
  private offerTo(node: string, q: QueueHeads, ref: HeadRef, path: DispatchPath, appWorkerId?: string, stickyUntil = 0): void {
    const d = this.host.dispatcher();
    const epoch = this.host.epochOf(q.partition);
    if (!d || epoch === undefined) return;
    const p = q.partition;
    this.host.offerSent(p);
    d.offer(node, {
      partition: p, taskId: ref.taskId, attempt: 0, tenant: q.tenant, flowType: q.flowType,
      stepType: q.stepType, readyAt: ref.readyAt, path, appWorkerId,
    }, epoch).then(
      (r: OfferResult) => {
        this.host.offerSettled(p);
        if (r === 'no-slot' && path === 'sticky' && appWorkerId) this.stickyBounced(q, ref, appWorkerId, stickyUntil);
        else if (r === 'no-slot') this.toHeads(q, ref);
        else if (q.settle(ref.taskId)) this.host.headsAvailable(q);
      },
      (err: Error) => {
        this.host.offerSettled(p);
        this.log.warn({ taskId: ref.taskId, err: err.message }, 'offer failed');
        this.toHeads(q, ref);
      },
    );
  }
}
