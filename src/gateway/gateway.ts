/**
 * The gateway: the worker streams connected to this node, their idle and busy
 * slots, and the commit of task starts and results (DESIGN §1, §4). It is the
 * only place that runs the start and result scripts for stream workers.
 */
import { randomBytes } from 'node:crypto';
import { zdError } from '../errors';
import type { Metrics } from '../metrics/registry';
import type { Refusal } from '../store/codes';
import { queueName } from '../store/keys';
import type { EnqueueStart, NewTask, OutcomeStatusName, SlotIdentity, StartedTask, TaskStore } from '../store/task-store';
import type { Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import { pb, PROTOCOL_VERSION, rpcDeclineType as rpcType } from '../wire';
import type { DispatchPath, OfferRef, OfferResult, Presence } from '../owner/dispatcher';
import { AttemptSettling } from './attempt-settling';
import { capacitySnapshot, slotCounts, type CapacitySnapshot } from './capacity-snapshot';
import { Declines } from './declines';
import { IdleSlots } from './idle-slots';
import { resultProblem } from './result-problem';
import { RpcDispatch, type RpcInvocation } from './rpc-dispatch';
import { Slot, type HeldAttempt, type RpcCall, type RpcSettlement, type SlotRegistration } from './slot';
import { addTo, flowKey, removeFrom, workerKey } from './slot-maps';
import { StreamSweep } from './stream-sweep';
import { decodeToken, encodeToken } from './task-token';

/** What the gateway tells the owners (local registry or peers). */
export interface GatewayHooks {
  /** An idle Step slot of `appWorkerId` for a flow type appeared on this node. */
  capacityAvailable(tenant: string, flowType: string, appWorkerId: string): void;
  /** The app worker stopped taking work on this node (drains, or its last stream went). */
  workerUnavailable(tenant: string, appWorkerId: string): void;
  /** The app worker declined a Step type it lacks: its sticky Steps of that type need not wait for it. */
  typeDeclined(tenant: string, flowType: string, stepType: string, appWorkerId: string): void;
  /**
   * Back in its queue (retry, return); `flowDeadline` (0 = none) for its owner to re-arm, its timer may have
   * passed it by while the task ran; `sticky`, a retry's sticky worker, for its sticky phase once ready.
   */
  taskReady(partition: number, queue: string, taskId: string, readyAt: number, flowDeadline?: number, sticky?: string): void;
  /** Back in its queue where its owner already knows (an offer answered no-slot): only fetches of its topic need telling. */
  taskFetchable(partition: number, queue: string, readyAt: number): void;
  /** An attempt started; its owner arms the deadline timer. */
  attemptStarted(partition: number, deadlineAt: number): void;
  outcomeWritten(partition: number, taskId: string, status: OutcomeStatusName, count?: number): void;
  /** Idle/busy slots, workers or declines changed: peers should get a new snapshot (coalesced). */
  capacityChanged(): void;
  /**
   * A sticky RPC's window closed with no slot free here: a peer with an idle slot
   * for it runs it (its answer settles the call). False when none advertises one.
   */
  rpcToIdlePeer?(call: RpcCall): boolean;
}

export interface GatewayOptions {
  nodeId: string;
  bootId: string;
  maxConcurrentTasksCap: number;
  maxStreams: number;
  unsupportedTypeCacheEntries: number;
  pingIntervalMs: number;
  /** matching.busyStreamSilence: a busy stream quiet this long is lost; 0 never. */
  busyStreamSilenceMs: number;
  maxPayloadBytes: number;
  stickyWaitMs: number;
}

/**
 * How long a slot whose worker declined a task for capacity (an older SDK, all its handlers
 * busy) is offered nothing. It declines for as long as they stay busy: freed at once, it was
 * offered the task straight back, hundreds of times a second, each a start and a release
 * script in Redis. Other slots take the task meanwhile.
 */
const CAPACITY_DECLINE_PAUSE_MS = 250;

/** An idle slot bound to a Step being enqueued, and the start the enqueue script makes in it. */
export interface EnqueueBinding {
  slot: Slot;
  start: EnqueueStart;
}

export class Gateway {
  private readonly slots = new Map<string, Slot>();
  /** Every open slot by (tenant, flowType). */
  private readonly connected = new Map<string, Set<Slot>>();
  /** Streams by (tenant, app worker id): two tenants may use the same app worker id. */
  private readonly byWorker = new Map<string, Set<Slot>>();
  /** App workers (tenant\0id) that half-closed a stream: they are stopping and take no new sticky work. */
  private readonly drainingWorkers = new Set<string>();
  /** Types each app worker declined as unknown: not offered to it. */
  private readonly declines: Declines;
  /** The idle slots offers, enqueues and RPCs pick from. */
  private readonly idle: IdleSlots;
  /** RPCs: placed on these slots, waiting for one, or moved to a peer. */
  private readonly rpc: RpcDispatch;
  /** Counts the slots of this node, for their ids. */
  private seq = 0;
  /**
   * Start nonces: a random per-process prefix and a counter. They only need to
   * differ between starts of the same attempt (a result is accepted only on the
   * stream holding the attempt), and randomBytes per start showed in profiles.
   */
  private readonly noncePrefix = randomBytes(4).toString('hex');
  private nonceSeq = 0;
  /**
   * A Cancel that reached a busy slot before the task it names (its start committed in
   * Redis, the reply still on its way): sent right behind that task's frame, reasons by nonce.
   * Several per slot: a slot freed early (Slot.awaitAck) may be told of the attempt whose
   * result is still on its way after it was told of the one it starts next.
   */
  private readonly earlyCancels = new WeakMap<Slot, Map<string, string>>();
  /** Store calls starting or ending attempts no slot holds: counted while on their way, retried. */
  private readonly settling: AttemptSettling;
  /** Pings idle streams, finds busy ones gone silent. */
  private readonly sweep: StreamSweep;
  private draining = false;

  constructor(
    private readonly opts: GatewayOptions,
    private readonly store: TaskStore,
    private readonly hooks: GatewayHooks,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.settling = new AttemptSettling(log);
    this.declines = new Declines(opts.unsupportedTypeCacheEntries);
    this.idle = new IdleSlots(this.declines);
    this.rpc = new RpcDispatch(
      { stickyWaitMs: opts.stickyWaitMs, maxPayloadBytes: opts.maxPayloadBytes, tokenPrefix: this.noncePrefix },
      this.idle, this.declines, this.connected, this.drainingWorkers, this, hooks, metrics, clock,
    );
    this.sweep = new StreamSweep(opts, this.slots, (slot, because) => this.unregister(slot, false, because), clock, log);
  }

  get streamCount(): number {
    return this.slots.size;
  }

  // ---- registration ---------------------------------------------------------

  register(reg: SlotRegistration): Slot {
    if (this.draining) throw zdError('ZD_DRAINING');
    if (this.slots.size >= this.opts.maxStreams) {
      throw zdError('ZD_TOO_MANY_STREAMS', { count: this.slots.size, cap: this.opts.maxStreams });
    }
    const mine = this.byWorker.get(workerKey(reg.tenant, reg.appWorkerId));
    if (mine && mine.size >= this.opts.maxConcurrentTasksCap) {
      throw zdError('ZD_TOO_MANY_STREAMS_PER_WORKER', {
        appWorkerId: reg.appWorkerId, count: mine.size, cap: this.opts.maxConcurrentTasksCap,
      });
    }
    const slot = new Slot(`${this.opts.nodeId}/${++this.seq}`, reg);
    this.slots.set(slot.id, slot);
    // A new stream of a worker we took for stopping: it is not (a stream half-closed for
    // another reason), and its idle slots take work again.
    if (this.drainingWorkers.delete(workerKey(reg.tenant, reg.appWorkerId))) {
      for (const s of mine ?? []) if (s.state === 'idle') this.idle.add(s);
    }
    for (const ft of reg.flowTypes) addTo(this.connected, flowKey(reg.tenant, ft), slot);
    if (mine) mine.add(slot);
    else this.byWorker.set(workerKey(reg.tenant, reg.appWorkerId), new Set([slot]));
    this.metrics.streams.inc({ kind: reg.kind });
    slot.send({
      registered: {
        max_concurrent_tasks_cap: this.opts.maxConcurrentTasksCap,
        ping_interval_ms: this.opts.pingIntervalMs,
        server_protocol_version: PROTOCOL_VERSION,
        node_id: this.opts.nodeId,
        stream_id: slot.id,
      },
    }, this.clock.now());
    this.becomeIdle(slot);
    this.hooks.capacityChanged();
    return slot;
  }

  /**
   * The stream ended. A half-close (`graceful`) returns a held task without
   * consuming the attempt; a reset or a lost connection fails it (the worker
   * may have run it) and the retry policy runs.
   */
  async unregister(slot: Slot, graceful: boolean, lostBecause = 'stream reset mid-task'): Promise<void> {
    if (slot.state === 'closed') return;
    this.idle.remove(slot);
    slot.state = 'closed';
    slot.close();
    this.slots.delete(slot.id);
    this.metrics.streams.dec({ kind: slot.reg.kind });
    for (const ft of slot.reg.flowTypes) removeFrom(this.connected, flowKey(slot.reg.tenant, ft), slot);
    const wk = workerKey(slot.reg.tenant, slot.reg.appWorkerId);
    const mine = this.byWorker.get(wk);
    mine?.delete(slot);
    if (mine && mine.size === 0) {
      this.byWorker.delete(wk);
      this.drainingWorkers.delete(wk);
      this.declines.forget(slot.reg);
      this.hooks.workerUnavailable(slot.reg.tenant, slot.reg.appWorkerId);
      this.rpc.stickyRpcsMoveOn(slot.reg.tenant, slot.reg.appWorkerId);
    } else if (graceful && !this.draining && !this.drainingWorkers.has(wk)) {
      // A half-close from the worker means it is stopping (SDK stop()): it starts no
      // new tasks (DESIGN §5), so none of its slots is offered one from now on.
      this.drainingWorkers.add(wk);
      for (const s of mine ?? []) this.idle.remove(s);
      this.hooks.workerUnavailable(slot.reg.tenant, slot.reg.appWorkerId);
      this.rpc.stickyRpcsMoveOn(slot.reg.tenant, slot.reg.appWorkerId);
    }
    this.hooks.capacityChanged();
    const rpc = slot.rpc;
    slot.rpc = slot.rpcToken = undefined;
    if (rpc && !rpc.settled) {
      // A half-close without its result: the worker is stopping and did not run it (as a
      // held Step goes back unconsumed); nor did it run one held behind an ack (Slot.awaitAck),
      // which never reached it. A reset may have run it: the caller hears so.
      if (graceful || slot.holdsTask) this.rpc.returnRpc(rpc);
      else rpc.settle({ kind: 'unavailable', reason: `worker ${slot.reg.appWorkerId} went away while running rpc ${rpc.rpcName}` });
    }
    const held = slot.attempt;
    slot.attempt = undefined;
    // A result read in the same turn as the stream's end is recorded (and retried) by its own
    // call; failing the attempt here reached Redis first (results are batched to the turn's end).
    if (!held || held.recording) return;
    const ref = { partition: held.partition, taskId: held.taskId, attempt: held.attempt, nonce: held.nonce };
    // A task held behind an ack (Slot.awaitAck), or whose frame still waits to be written (a
    // worker that reads slowly or not at all), never reached the worker either.
    const unread = held.delivered && !graceful && slot.takeBackUnread(held.token);
    const returned = graceful || !held.delivered || slot.holdsTask || unread;
    if (returned) this.metrics.returnedAttempts.inc({ reason: graceful ? 'drain_no_output' : 'write_failed' });
    const settle = returned
      ? () => this.returnTask(ref, held.queue)
      : async () => {
        const r = await this.store.fail(ref, { message: `worker lost: ${lostBecause}`, type: 'worker_lost', nonRetryable: false, retryAfterMs: 0 }, this.clock.now());
        this.afterFail(r, held.partition, held.taskId, held.queue);
      };
    await this.settling.settleNowOrLater(`attempt ${held.attempt} of ${held.taskId}`, settle, held.nonce);
  }

  // ---- offers ---------------------------------------------------------------

  /** Whether an idle Step slot of this node (of `appWorkerId` when given) can take a task of this type. */
  hasIdleStepSlot(tenant: string, flowType: string, stepType: string, appWorkerId?: string): boolean {
    return this.idle.pick(tenant, flowType, stepType, appWorkerId) !== undefined;
  }

  /** Whether the app worker has a stream here and is not draining. */
  hasWorker(tenant: string, appWorkerId: string): boolean {
    const mine = this.byWorker.get(workerKey(tenant, appWorkerId));
    if (!mine || this.drainingWorkers.has(workerKey(tenant, appWorkerId))) return false;
    for (const slot of mine) if (slot.state !== 'closed') return true;
    return false;
  }

  /** How an app worker stands on this node for a Step type (or an RPC name with `rpc`). */
  presence(tenant: string, appWorkerId: string, flowType: string, type: string, rpc = false): Presence {
    const mine = this.byWorker.get(workerKey(tenant, appWorkerId));
    if (!mine || this.drainingWorkers.has(workerKey(tenant, appWorkerId))) return 'absent';
    if (this.declines.has(tenant, flowType, rpc ? rpcType(type) : type, appWorkerId)) return 'absent';
    let any = false;
    for (const slot of mine) {
      if (slot.reg.tenant !== tenant || !slot.reg.flowTypes.includes(flowType) || slot.state === 'closed') continue;
      if (!rpc && slot.reg.kind !== 'STEP_AND_RPC') continue;
      if (slot.state === 'idle') return 'idle';
      if (slot.state === 'busy') any = true;
    }
    return any ? 'busy' : 'absent';
  }

  /** Whether any stream of the flow type is connected here. */
  hasConnected(tenant: string, flowType: string): boolean {
    return (this.connected.get(flowKey(tenant, flowType))?.size ?? 0) > 0;
  }

  /**
   * Whether a worker of the flow type is connected here that takes new work (any slot kind,
   * even one that declined a type): not stopping, on a node not draining. A worker that is
   * stopping serves nothing more, so a queue left with only such workers has no worker.
   */
  hasAvailable(tenant: string, flowType: string): boolean {
    for (const slot of this.connected.get(flowKey(tenant, flowType)) ?? []) {
      if (slot.state === 'closed' || slot.state === 'draining') continue;
      if (!this.drainingWorkers.has(workerKey(tenant, slot.reg.appWorkerId))) return true;
    }
    return false;
  }

  /** Whether an idle slot here could run this RPC now (RPC-only or shared, not declined). */
  hasIdleRpcSlot(tenant: string, flowType: string, rpcName: string): boolean {
    const key = flowKey(tenant, flowType);
    for (const set of [this.idle.rpc.get(key), this.idle.step.get(key)]) {
      for (const slot of set ?? []) if (!this.declines.has(tenant, flowType, rpcType(rpcName), slot.reg.appWorkerId)) return true;
    }
    return false;
  }

  /** Whether a connected, non-declining worker (idle or busy) can run this Step type. */
  canServe(tenant: string, flowType: string, stepType: string): boolean {
    for (const slot of this.connected.get(flowKey(tenant, flowType)) ?? []) {
      if (slot.reg.kind !== 'STEP_AND_RPC' || slot.state === 'closed' || slot.state === 'draining') continue;
      if (this.drainingWorkers.has(workerKey(tenant, slot.reg.appWorkerId))) continue;
      if (!this.declines.has(tenant, flowType, stepType, slot.reg.appWorkerId)) return true;
    }
    return false;
  }

  /**
   * Offers a task: binds an idle slot synchronously (before any await, so the
   * caller's capacity check stays true), commits the start, writes the task.
   */
  offer(ref: OfferRef): Promise<OfferResult> {
    const slot = this.bindIdle(ref.tenant, ref.flowType, ref.stepType, ref.appWorkerId);
    if (!slot) return Promise.resolve('no-slot');
    return this.start(slot, ref);
  }

  /**
   * Binds an idle slot for a Step about to be enqueued, so the enqueue script
   * starts it there (sync match at enqueue: no start round trip, no owner
   * hop). Undefined when no eligible slot is idle. The binding must end in
   * startedAtEnqueue or releaseBinding.
   */
  bindForEnqueue(tenant: string, flowType: string, stepType: string, appWorkerId?: string): EnqueueBinding | undefined {
    const slot = this.bindIdle(tenant, flowType, stepType, appWorkerId);
    if (!slot) return undefined;
    const b = { slot, start: { slot: this.identity(slot), nonce: this.nextNonce() } };
    // Until the enqueue's answer, the task may run in Redis in this slot with no slot holding it.
    this.settling.transit(b.start.nonce, 1);
    return b;
  }

  /** The enqueue did not start the task (not created, or its flow remembers another sticky worker). */
  releaseBinding(b: EnqueueBinding): void {
    this.settling.transit(b.start.nonce, -1);
    this.slotFree(b.slot);
  }

  /** The enqueue script failed: had it started the task, the task goes back unconsumed (a release by its nonce). */
  async abandonBinding(b: EnqueueBinding, t: NewTask): Promise<void> {
    // The slot is free at once; the return runs until Redis answers (a start that
    // committed would otherwise hold the task with no slot and no end).
    this.settling.transit(b.start.nonce, -1);
    this.slotFree(b.slot);
    await this.settling.settleNowOrLater(`return of ${t.taskId} after a failed enqueue`, () => this.returnTask(bindingRef(b, t), t.queue), b.start.nonce);
  }

  /** The enqueue script started the task in the bound slot: write it to the worker (`path`: the flow's sticky worker's slot, or any). */
  async startedAtEnqueue(b: EnqueueBinding, t: NewTask, deadlineAt: number, now: number, path: 'sticky' | 'sync'): Promise<void> {
    const started: StartedTask = {
      taskId: t.taskId, attempt: 1, nonce: b.start.nonce, startedAt: now, input: t.input, tenant: t.tenant, flowId: t.flowId,
      flowType: t.flowType, stepType: t.stepType, stepExecutionId: t.stepExecutionId, enqueuedAt: now,
      methodTimeout: t.methodTimeout, heartbeatTimeout: t.heartbeatTimeout, flowDeadline: t.flowDeadline, deadlineAt,
    };
    this.settling.transit(b.start.nonce, -1);
    if (this.deliver(b.slot, t.partition, started, path, now, now)) return;
    // The stream went away: the worker never saw it, so it goes back unconsumed to its owner.
    await this.settling.settleNowOrLater(`return of ${t.taskId} after a failed write`, () => this.returnTask(bindingRef(b, t), t.queue), b.start.nonce);
  }

  private bindIdle(tenant: string, flowType: string, stepType: string, appWorkerId?: string): Slot | undefined {
    const slot = this.idle.pick(tenant, flowType, stepType, appWorkerId);
    if (!slot) return undefined;
    this.idle.remove(slot);
    slot.state = 'busy';
    this.hooks.capacityChanged();
    return slot;
  }

  private identity(slot: Slot): SlotIdentity {
    return { appWorkerId: slot.reg.appWorkerId, streamId: slot.id, nodeId: this.opts.nodeId, bootId: this.opts.bootId };
  }

  private nextNonce(): string {
    this.nonceSeq = (this.nonceSeq + 1) >>> 0;
    return this.noncePrefix + this.nonceSeq.toString(16).padStart(8, '0');
  }

  private async start(slot: Slot, ref: OfferRef): Promise<OfferResult> {
    const nonce = this.nextNonce();
    // The owner offers a head once its clock says it is ready; a gateway whose clock
    // runs behind would refuse it as not ready yet, and the owner forget it: honour
    // the owner's reading (node clocks differ by milliseconds, not by attempts).
    const now = Math.max(this.clock.now(), ref.readyAt);
    let started;
    this.settling.transit(nonce, 1);
    try {
      started = await this.store.start(ref.partition, ref.taskId, ref.attempt, this.identity(slot), nonce, now);
    } catch (err) {
      this.slotFree(slot);
      // The start may have committed before its reply was lost: then the task runs under
      // this nonce with no slot holding it, and nothing would end it. Once Redis answers,
      // give it back if it did (the release checks attempt and nonce; a head does not
      // know its attempt, so it is read first).
      this.settling.settleLater(`start of ${ref.taskId}`, async () => {
        const h = await this.store.readTask(ref.partition, ref.taskId);
        if (h?.nonce?.toString() !== nonce || h.state?.toString() !== 'running') return;
        await this.returnTask({ partition: ref.partition, taskId: ref.taskId, attempt: Number(h.attempt), nonce },
          queueName(ref.tenant, ref.flowType, ref.stepType));
      }, err as Error, nonce);
      throw err;
    } finally {
      this.settling.transit(nonce, -1);
    }
    if (!('input' in started)) {
      this.slotFree(slot);
      // No task behind the head: its queue entry is stale, and goes before the
      // owner hears 'gone' (else its next refill reads it again).
      if (started.kind === 'not-found') await this.dropStale(ref);
      return 'gone';
    }
    if (this.deliver(slot, ref.partition, started, ref.path, ref.readyAt, now)) return 'taken';
    // The stream went away between binding and writing: the worker never saw
    // the task, so it goes back unconsumed at once (unregister did not see it).
    const attemptRef = { partition: ref.partition, taskId: ref.taskId, attempt: started.attempt, nonce };
    const queue = queueName(ref.tenant, ref.flowType, ref.stepType);
    let back;
    try {
      back = await this.store.release(attemptRef);
    } catch (err) {
      // Still running under this nonce: re-offered now its start would be refused and
      // the head forgotten. 'gone' drops it; the return, once Redis answers, rings its owner.
      this.settling.settleLater(`return of ${ref.taskId} after a failed write`, () => this.returnTask(attemptRef, queue), err as Error, nonce);
      return 'gone';
    }
    if (back.kind === 'released') this.hooks.taskFetchable(ref.partition, queue, back.readyAt);
    // 'no-slot' hands the ref back to the offering owner, which re-offers it elsewhere.
    return 'no-slot';
  }

  private async dropStale(ref: OfferRef): Promise<void> {
    try {
      if (await this.store.dropStaleEntry(ref.partition, queueName(ref.tenant, ref.flowType, ref.stepType), ref.taskId)) {
        this.log.debug({ partition: ref.partition, taskId: ref.taskId }, 'queue entry without its task removed');
      }
    } catch (err) {
      this.log.warn({ taskId: ref.taskId, err: (err as Error).message }, 'stale queue entry not removed');
    }
  }

  /**
   * Holds a started attempt on its slot and writes it to the worker. False
   * when the stream went away first (counted as write_failed): the caller
   * returns the task unconsumed.
   */
  private deliver(slot: Slot, partition: number, started: StartedTask, path: DispatchPath, readyAt: number, now: number): boolean {
    const queue = queueName(started.tenant, started.flowType, started.stepType);
    const token = encodeToken({ partition, taskId: started.taskId, attempt: started.attempt, nonce: started.nonce });
    slot.attempt = { partition, taskId: started.taskId, attempt: started.attempt, nonce: started.nonce, queue, token, delivered: false };
    this.hooks.attemptStarted(partition, started.deadlineAt);
    const task: pb.IStepTask = {
      task_token: token, task_id: started.taskId, tenant: started.tenant, flow_id: started.flowId,
      flow_type: started.flowType, step_type: started.stepType, step_execution_id: started.stepExecutionId,
      attempt: started.attempt, input: started.input, enqueued_at_ms: started.enqueuedAt, started_at_ms: now,
      method_timeout_ms: started.methodTimeout, heartbeat_timeout_ms: started.heartbeatTimeout,
      flow_deadline_ms: started.flowDeadline,
    };
    const written = slot.state === 'busy' && slot.send({ step_task: task }, now);
    if (!written) {
      slot.attempt = undefined;
      this.metrics.returnedAttempts.inc({ reason: 'write_failed' });
      return false;
    }
    slot.attempt.delivered = true;
    const early = this.earlyCancels.get(slot);
    if (early) {
      this.earlyCancels.delete(slot);
      const reason = early.get(started.nonce);
      if (reason !== undefined) this.cancelHeld(slot, reason);
    }
    this.metrics.dispatchLatency.observe({ path }, Math.max(0, now - readyAt) / 1000);
    return true;
  }

  // ---- worker frames --------------------------------------------------------

  async stepResult(slot: Slot, msg: pb.IStepResult): Promise<void> {
    const held = this.heldBy(slot, msg.task_token ?? '');
    if (!held) {
      slot.send({ result_ack: { task_token: msg.task_token ?? '', verdict: pb.ResultVerdict.REFUSED_STALE, error: 'step_result.task_token: no such attempt on this stream; nothing was recorded' } }, this.clock.now());
      return;
    }
    // Refused, and the attempt stays the slot's: the worker may send a valid result.
    const problem = resultProblem('step_result', msg);
    if (problem) {
      this.ack(slot, held.token, pb.ResultVerdict.REFUSED_INVALID, problem);
      return;
    }
    const ref = { partition: held.partition, taskId: held.taskId, attempt: held.attempt, nonce: held.nonce };
    const now = this.clock.now();
    // A worker that takes a task right behind an ack gets its slot back now: the
    // next start joins this completion's trip to Redis, and its task frame waits
    // in the slot until the ack is written (Slot.awaitAck). A draining node does not.
    const early = slot.reg.acceptsTaskAfterAck && !this.draining;
    if (early) {
      slot.awaitAck();
      slot.attempt = undefined;
      this.slotFree(slot);
    }
    // The result's store call and its ack; run again later when Redis does not answer now.
    const record = async (): Promise<void> => {
      if (msg.output != null && msg.failure == null) {
        const output = Buffer.from(msg.output ?? new Uint8Array(0));
        if (output.length > this.opts.maxPayloadBytes) {
          const r = await this.store.fail(ref, { message: `output: ${output.length} bytes exceeds limits.maxPayloadBytes (${this.opts.maxPayloadBytes})`, type: 'invalid_result', nonRetryable: false, retryAfterMs: 0 }, now);
          this.afterFail(r, held.partition, held.taskId, held.queue);
          if (r.kind === 'retry' || r.kind === 'terminal') {
            // Refused, and unlike other refusals the attempt is spent: no valid output can follow.
            slot.send({ result_ack: {
              task_token: held.token, verdict: pb.ResultVerdict.REFUSED_INVALID, retry_scheduled: r.kind === 'retry',
              error: `step_result.output: exceeds limits.maxPayloadBytes (${this.opts.maxPayloadBytes}); the attempt failed`,
            } }, now);
          } else {
            // The attempt had ended already (cancelled, timed out): that is what the worker learns, not a failure it did not cause.
            this.ackRefusal(slot, held.token, r);
          }
        } else {
          const stopping = this.drainingWorkers.has(workerKey(slot.reg.tenant, slot.reg.appWorkerId));
          const r = await this.store.complete(ref, output, now, stopping);
          if (r.kind === 'completed') {
            this.hooks.outcomeWritten(held.partition, held.taskId, 'COMPLETED');
            // Types evicted from the decline cache are offered to this worker again.
            if (this.declines.liftEvicted(slot.reg.tenant, slot.reg.appWorkerId)) this.declinesLifted(slot.reg.tenant, slot.reg.appWorkerId);
            this.ack(slot, held.token, pb.ResultVerdict.ACCEPTED);
          } else {
            this.ackRefusal(slot, held.token, r);
          }
        }
      } else {
        const f = msg.failure!;
        const r = await this.store.fail(ref, {
          message: f.message ?? '', type: f.type ?? '', nonRetryable: f.non_retryable ?? false, retryAfterMs: Number(f.retry_after_ms ?? 0),
        }, now);
        this.afterFail(r, held.partition, held.taskId, held.queue);
        if (r.kind === 'retry' || r.kind === 'terminal') {
          slot.send({ result_ack: { task_token: held.token, verdict: pb.ResultVerdict.ACCEPTED, retry_scheduled: r.kind === 'retry' } }, now);
        } else {
          this.ackRefusal(slot, held.token, r);
        }
      }
    };
    held.recording = true;
    this.settling.transit(held.nonce, 1);
    try {
      await record();
    } catch (err) {
      // Whether the call landed is unknown, and the stream ends (the caller's catch):
      // the attempt is recorded once Redis answers, not left running. The ack of a
      // late success goes nowhere; the worker sees its stream end first. A task
      // held behind that ack stays held, so the stream's end returns it unconsumed.
      if (!early && slot.attempt?.token === held.token) slot.attempt = undefined;
      this.settling.settleLater(`result of attempt ${held.attempt} of ${held.taskId}`, record, err as Error, held.nonce);
      throw err;
    } finally {
      this.settling.transit(held.nonce, -1);
    }
    if (early) slot.ackWritten();
    else this.finishAttempt(slot, held.token);
  }

  /** The worker lacks the type: return the task unconsumed and remember the decline. */
  async decline(slot: Slot, msg: pb.IDecline): Promise<void> {
    if (msg.reason !== pb.DeclineReason.UNKNOWN_TYPE && msg.reason !== pb.DeclineReason.NO_CAPACITY) {
      // Refused, changing nothing: read as UNKNOWN_TYPE it returned the task and stopped the type
      // from being offered to this worker, on a frame that said neither.
      this.ack(slot, msg.task_token ?? '', pb.ResultVerdict.REFUSED_INVALID, `decline.reason: must be UNKNOWN_TYPE or NO_CAPACITY, got ${msg.reason ?? 0}`);
      return;
    }
    const rpc = slot.rpc;
    if (rpc && slot.rpcToken === msg.task_token) {
      // Only a worker that lacks the name is remembered as lacking it; an older SDK's
      // capacity decline just sends the call on to another slot.
      const unknown = msg.reason !== pb.DeclineReason.NO_CAPACITY;
      this.metrics.returnedAttempts.inc({ reason: unknown ? 'unknown_type' : 'legacy_no_capacity' });
      if (unknown) this.declines.add(slot.reg.tenant, rpc.flowType, rpcType(rpc.rpcName), slot.reg.appWorkerId);
      slot.rpc = slot.rpcToken = undefined;
      if (unknown) this.slotFree(slot);
      else this.freeAfterPause(slot);
      this.rpc.returnRpc(rpc);
      if (unknown) {
        // Calls of that name waiting for this worker as their sticky one skip the rest of the
        // sticky phase (DESIGN §4: it has declined the type), as Steps do (Placement.capacity).
        this.rpc.declinedBy(slot.reg.tenant, slot.reg.appWorkerId, rpc.flowType, rpc.rpcName);
      }
      return;
    }
    const held = this.heldBy(slot, msg.task_token ?? '');
    if (!held) {
      // Nothing was returned: a worker that takes the decline as done must not think the task went back.
      this.ack(slot, msg.task_token ?? '', pb.ResultVerdict.REFUSED_STALE, 'decline.task_token: no such attempt on this stream; nothing was returned');
      return;
    }
    const reason = msg.reason === pb.DeclineReason.NO_CAPACITY ? 'legacy_no_capacity' : 'unknown_type';
    this.metrics.returnedAttempts.inc({ reason });
    if (reason === 'unknown_type') {
      const stepType = held.queue.split(':')[2] ?? '';
      const [, flowType = ''] = held.queue.split(':');
      this.declines.add(slot.reg.tenant, flowType, stepType, slot.reg.appWorkerId);
      this.hooks.capacityChanged();
      // Its Steps of the type waiting for it as their sticky worker move on now (DESIGN §4), not
      // only once this slot is idle: a waiting RPC may take the slot next.
      this.hooks.typeDeclined(slot.reg.tenant, flowType, stepType, slot.reg.appWorkerId);
    }
    slot.attempt = undefined;
    const ref = { partition: held.partition, taskId: held.taskId, attempt: held.attempt, nonce: held.nonce };
    // No slot holds the attempt now: a Redis error must not leave the task running.
    await this.settling.settleNowOrLater(`return of attempt ${held.attempt} of ${held.taskId}`, () => this.returnTask(ref, held.queue), held.nonce);
    if (reason === 'legacy_no_capacity') this.freeAfterPause(slot);
    else this.finishAttempt(slot, held.token);
  }

  /** A slot that declined for capacity stays busy, holding nothing, for CAPACITY_DECLINE_PAUSE_MS. */
  private freeAfterPause(slot: Slot): void {
    const timer = setTimeout(() => {
      if (!slot.attempt && !slot.rpc) this.slotFree(slot);
    }, CAPACITY_DECLINE_PAUSE_MS);
    timer.unref();
  }

  async heartbeat(slot: Slot, msg: pb.IHeartbeat): Promise<void> {
    const held = this.heldBy(slot, msg.task_token ?? '');
    if (!held) return;
    let r;
    try {
      r = await this.store.heartbeat({ partition: held.partition, taskId: held.taskId, attempt: held.attempt, nonce: held.nonce }, this.clock.now());
    } catch (err) {
      // One lost heartbeat costs nothing while the next lands within the heartbeat
      // timeout; ending the stream for it would spend the attempt.
      this.log.warn({ taskId: held.taskId, err: (err as Error).message }, 'heartbeat not recorded');
      return;
    }
    if (r.kind === 'extended') this.hooks.attemptStarted(held.partition, r.deadlineAt);
    // The attempt ended without its worker (timed out, cancelled): tell it, in case
    // the owner's Cancel did not reach this slot.
    else if (slot.attempt === held) this.cancelHeld(slot, r.kind === 'ended' && r.status === 'CANCELLED' ? 'the flow was cancelled' : `attempt is no longer held (${r.kind})`);
  }

  /** Cancel to a slot's running attempt, once. */
  private cancelHeld(slot: Slot, reason: string): void {
    const held = slot.attempt;
    if (!held || held.cancelled) return;
    held.cancelled = true;
    slot.send({ cancel: { task_token: held.token, reason } }, this.clock.now());
  }

  /** Sends Cancel to the slots of this node that hold the given attempts. */
  cancelAttempts(attempts: { taskId: string; attempt: number; nonce: string; streamId: string }[], reason: string): void {
    for (const a of attempts) {
      const slot = this.slots.get(a.streamId);
      if (!slot) continue;
      const held = slot.attempt;
      if (held && held.taskId === a.taskId && held.nonce === a.nonce) this.cancelHeld(slot, reason);
      // Bound and not yet holding a task: the start of this very attempt may still be on its way.
      else if (!held && slot.state === 'busy') {
        let early = this.earlyCancels.get(slot);
        if (!early) this.earlyCancels.set(slot, (early = new Map()));
        early.set(a.nonce, reason);
      }
    }
  }

  // ---- RPCs (gateway/rpc-dispatch.ts) ---------------------------------------

  /**
   * Runs an RPC on a slot of this node: the sticky worker first (while it is
   * connected, up to matching.stickyWait), then any worker of the flow type,
   * RPC-only slots before shared ones. Never written to Redis; gives up at
   * `deadline` (UNAVAILABLE), and answers NOT_FOUND once every connected
   * worker of the flow type declined the name.
   */
  invokeRpc(req: RpcInvocation, signal: AbortSignal): Promise<RpcSettlement> {
    return this.rpc.invokeRpc(req, signal);
  }

  /**
   * RPCs of (tenant, flowType) waiting here for a busy slot, oldest first, go to a
   * peer's slot that just went idle, at most `max` of them (RpcDispatch.moveWaitingRpcs).
   */
  moveWaitingRpcs(tenant: string, flowType: string, max: number, run: (call: RpcCall) => boolean): number {
    return this.rpc.moveWaitingRpcs(tenant, flowType, max, run);
  }

  /** RPCs waiting here in their sticky window for `appWorkerId`, which has idle slots at a peer (RpcDispatch.moveStickyRpcs). */
  moveStickyRpcs(tenant: string, appWorkerId: string, max: number, run: (call: RpcCall) => boolean): number {
    return this.rpc.moveStickyRpcs(tenant, appWorkerId, max, run);
  }

  /** A call moved to a peer that did not run it waits here again (RpcDispatch.rpcBack). */
  rpcBack(call: RpcCall): void {
    this.rpc.rpcBack(call);
  }

  rpcResult(slot: Slot, msg: pb.IRpcResult): void {
    if (this.rpc.rpcResult(slot, msg)) this.slotFree(slot);
  }

  /** This node's capacity for peers: idle slots per flow type, app workers, declines. */
  capacitySnapshot(): CapacitySnapshot {
    return capacitySnapshot(this.connected, this.byWorker, this.drainingWorkers, this.idle, this.declines);
  }

  /** Slots by kind and state, for the slots gauge. */
  slotCounts(): { kind: string; state: string; count: number }[] {
    return slotCounts(this.slots.values());
  }

  /** RPCs waiting for a slot on this node. */
  get rpcsWaiting(): number {
    return this.rpc.waiting;
  }

  // ---- drain ----------------------------------------------------------------

  /** Stops taking streams; idle ones get Reconnect and close, busy ones get Reconnect after their task. */
  startDrain(): void {
    this.draining = true;
    for (const slot of this.slots.values()) {
      slot.send({ reconnect: { reason: 'node draining' } }, this.clock.now());
      if (slot.state === 'idle') {
        this.idle.remove(slot);
        slot.state = 'draining';
        slot.close();
      }
    }
  }

  /** Slots running a Step attempt or an RPC: what a drain waits for. */
  busySlots(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.attempt || (s.rpc && !s.rpc.settled)) n++;
    return n;
  }

  /** Whether the node drains: its workers were told to reconnect elsewhere. */
  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * Ends every remaining stream (after the drain deadline), and answers the RPCs
   * still waiting here for a slot: none will come, and their callers may try
   * another node now rather than hold this node's shutdown until dispatchWait.
   */
  closeAll(): void {
    this.rpc.close();
    for (const slot of this.slots.values()) slot.close();
    this.sweep.stop();
  }

  stop(): void {
    this.settling.stop();
    this.sweep.stop();
  }

  /** A result or decline frame the node could not read as sent: refused, naming why; nothing changes. */
  refuseInvalid(slot: Slot, token: string, error: string): void {
    this.ack(slot, token, pb.ResultVerdict.REFUSED_INVALID, error);
  }

  // ---- attempts no slot holds (owner/unheld-attempts.ts) -------------------

  /** The start nonces of the attempts this node's slots hold now, or whose start or end is on its way. */
  heldNonces(): Set<string> {
    const held = new Set(this.settling.nonces());
    for (const slot of this.slots.values()) if (slot.attempt) held.add(slot.attempt.nonce);
    return held;
  }

  /** Whether this node's slots hold each of these attempts (heldNonces), in order: an owner's attempt audit asks. */
  heldAmong(nonces: string[]): boolean[] {
    const held = this.heldNonces();
    return nonces.map((n) => held.has(n));
  }

  /**
   * Sends Cancel to the slots holding an attempt that no longer runs in Redis (its flow was
   * cancelled, it timed out): the Cancel its owner or canceller sent is a one-way message,
   * and one lost on its way here (a peer link that broke) left the handler running to its
   * end, its slot busy, unless it sent heartbeats. Also run when this node comes back
   * from a silence peers took for its death (Membership 'returned'): they failed the
   * attempts its slots run and retried them elsewhere. Returns how many it cancelled.
   *
   * Each partition is read on its own: on a Redis Cluster they spread over the primaries,
   * and one that stopped answering (frozen, cut off) held the Cancels of every partition, or
   * failed them all. A read that fails fails the call, once the others are done.
   */
  async cancelEnded(reason = 'the attempt ended without its worker (its flow was cancelled, or it timed out)'): Promise<number> {
    // Held before the read: each of these attempts' start had committed, so "not running" is an end.
    const byPartition = new Map<number, { slot: Slot; a: HeldAttempt }[]>();
    for (const slot of this.slots.values()) {
      const a = slot.attempt;
      if (!a || !a.delivered || a.recording || a.cancelled) continue;
      const list = byPartition.get(a.partition);
      if (list) list.push({ slot, a });
      else byPartition.set(a.partition, [{ slot, a }]);
    }
    let cancelled = 0;
    const reads = await Promise.allSettled([...byPartition.values()].map(async (held) => {
      const running = await this.store.stillRunning(held.map(({ a }) => a));
      held.forEach(({ slot, a }, i) => {
        // Its result or the stream's end came meanwhile: that ends it, not a Cancel.
        if (running[i] || slot.attempt !== a || a.recording) return;
        this.cancelHeld(slot, reason);
        cancelled++;
      });
    }));
    const failed = reads.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return cancelled;
  }

  // ---- internals ------------------------------------------------------------

  private heldBy(slot: Slot, token: string) {
    const held = slot.attempt;
    if (!held || held.token !== token || !decodeToken(token)) return undefined;
    return held;
  }

  private ack(slot: Slot, token: string, verdict: pb.ResultVerdict, error = ''): void {
    slot.send({ result_ack: { task_token: token, verdict, error } }, this.clock.now());
  }

  private ackRefusal(slot: Slot, token: string, r: Refusal): void {
    if (r.kind === 'ended' && r.status === 'CANCELLED') this.ack(slot, token, pb.ResultVerdict.REFUSED_CANCELLED, 'the flow was cancelled');
    else this.ack(slot, token, pb.ResultVerdict.REFUSED_STALE, `attempt is no longer held (${r.kind})`);
  }

  private afterFail(r: Awaited<ReturnType<TaskStore['fail']>>, partition: number, taskId: string, queue: string): void {
    if (r.kind === 'retry') this.hooks.taskReady(partition, queue, taskId, r.readyAt, r.flowDeadline, r.sticky);
    else if (r.kind === 'terminal') this.hooks.outcomeWritten(partition, taskId, r.status);
  }

  private async returnTask(ref: { partition: number; taskId: string; attempt: number; nonce: string }, queue: string): Promise<void> {
    const r = await this.store.release(ref);
    if (r.kind === 'released') this.hooks.taskReady(ref.partition, queue, ref.taskId, r.readyAt, r.flowDeadline);
  }

  private finishAttempt(slot: Slot, token: string): void {
    if (slot.attempt?.token === token) slot.attempt = undefined;
    if (slot.state === 'busy') this.slotFree(slot);
  }

  private slotFree(slot: Slot): void {
    slot.attempt = undefined;
    if (slot.state !== 'busy') return;
    if (this.draining) {
      slot.state = 'draining';
      slot.close();
      return;
    }
    this.becomeIdle(slot);
  }

  /** A freed slot serves, in order: RPCs waiting at this node, then Steps (the owners' waiters and heads). */
  private becomeIdle(slot: Slot): void {
    const call = this.rpc.waiters.takeFor(slot.reg.tenant, slot.reg.flowTypes, (c) => this.rpc.eligibleForRpc(slot, c));
    if (call) {
      slot.state = 'idle';
      this.rpc.runRpc(slot, call);
      return;
    }
    slot.state = 'idle';
    const stopping = this.drainingWorkers.has(workerKey(slot.reg.tenant, slot.reg.appWorkerId));
    if (!stopping) this.idle.add(slot);
    this.hooks.capacityChanged();
    if (stopping || slot.reg.kind !== 'STEP_AND_RPC') return;
    for (const ft of slot.reg.flowTypes) {
      if (slot.state !== 'idle') return;
      this.hooks.capacityAvailable(slot.reg.tenant, ft, slot.reg.appWorkerId);
    }
  }

  /**
   * Types evicted from the decline cache may go to the worker again: peers hear of it, and
   * the owners of its idle slots here. A slot freed before its result was recorded
   * (Slot.awaitAck) was announced while those types still counted as declined, and
   * nothing else would offer them to it while it stayed idle.
   */
  private declinesLifted(tenant: string, appWorkerId: string): void {
    this.hooks.capacityChanged();
    const wk = workerKey(tenant, appWorkerId);
    if (this.drainingWorkers.has(wk)) return; // it takes no new work
    const flowTypes = new Set<string>();
    for (const s of this.byWorker.get(wk) ?? []) {
      if (s.state === 'idle' && s.reg.kind === 'STEP_AND_RPC') for (const ft of s.reg.flowTypes) flowTypes.add(ft);
    }
    for (const ft of flowTypes) this.hooks.capacityAvailable(tenant, ft, appWorkerId);
  }

  /** A frame came in on the stream: the worker behind it is alive. */
  heardFrom(slot: Slot): void {
    slot.lastHeardAt = this.clock.now();
  }
}

/** The attempt an enqueue script may have started in a bound slot: always attempt 1, under the binding's nonce. */
const bindingRef = (b: EnqueueBinding, t: NewTask) => ({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: b.start.nonce });
