/**
 * RPCs on this node's slots (DESIGN §4): the sticky worker's first (while it is
 * connected, up to matching.stickyWait), then any worker's of the flow type,
 * RPC-only slots before shared ones; a call no slot here takes waits for one,
 * or moves to a peer's idle slot. Never written to Redis.
 */
import type { Metrics } from '../metrics/registry';
import type { Presence } from '../owner/dispatcher';
import type { Clock } from '../util/clock';
import { pb, rpcDeclineType as rpcType } from '../wire';
import type { Declines } from './declines';
import type { IdleSlots } from './idle-slots';
import { resultProblem } from './result-problem';
import { RpcWaiters } from './rpc-waiters';
import type { RpcCall, RpcSettlement, Slot } from './slot';
import { flowKey, workerKey } from './slot-maps';

/**
 * A call to run here: `deadline` bounds finding a slot, `runDeadline` the worker's run, both counted
 * from `arrivedAt` (now, unless the call spent time on this node before); `pinned`: a peer sent it.
 */
export interface RpcInvocation {
  tenant: string; flowId: string; flowType: string; rpcName: string; input: Buffer; sticky: string; deadline: number; runDeadline: number;
  arrivedAt?: number;
  pinned?: boolean;
}

export interface RpcDispatchOptions {
  stickyWaitMs: number;
  maxPayloadBytes: number;
  /** Starts every call token: the gateway's start nonce prefix, random per process. */
  tokenPrefix: string;
}

/** The gateway hooks RPC dispatch calls (GatewayHooks). */
export interface RpcDispatchHooks {
  capacityChanged(): void;
  rpcToIdlePeer?(call: RpcCall): boolean;
}

/** How an app worker stands on this node (Gateway.presence): a sticky call waits only for a present one. */
export interface WorkerPresence {
  presence(tenant: string, appWorkerId: string, flowType: string, type: string, rpc?: boolean): Presence;
}

export class RpcDispatch {
  /**
   * Calls waiting here for a slot. The gateway takes from it directly when a slot
   * is freed (Gateway.becomeIdle): a waiting RPC goes before any Step.
   */
  readonly waiters = new RpcWaiters();
  /** Counts call and run tokens. */
  private seq = 0;
  /** close() ran: no slot will take an RPC here again. */
  private closed = false;

  constructor(
    private readonly opts: RpcDispatchOptions,
    private readonly idle: IdleSlots,
    private readonly declines: Declines,
    /** The gateway's open slots by (tenant, flowType). */
    private readonly connected: ReadonlyMap<string, ReadonlySet<Slot>>,
    /** The gateway's app workers (tenant\0id) that are stopping: they take no new work. */
    private readonly drainingWorkers: ReadonlySet<string>,
    private readonly workers: WorkerPresence,
    private readonly hooks: RpcDispatchHooks,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {}

  /** RPCs waiting for a slot on this node. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** The node is stopping: the calls still waiting here are answered now, and no new one waits. */
  close(): void {
    this.closed = true;
    for (const call of this.waiters.drain()) call.settle({ kind: 'unavailable', reason: 'this node is stopping' });
  }

  /** The worker declined the RPC name: its calls waiting for it as their sticky worker skip the rest of the sticky phase. */
  declinedBy(tenant: string, appWorkerId: string, flowType: string, rpcName: string): void {
    for (const call of this.waiters.stickyTo(tenant, appWorkerId)) {
      if (call.flowType === flowType && call.rpcName === rpcName) this.endStickyWindow(call);
    }
  }

  /**
   * Runs an RPC on a slot of this node: the sticky worker first (while it is
   * connected, up to matching.stickyWait), then any worker of the flow type,
   * RPC-only slots before shared ones. Never written to Redis; gives up at
   * `deadline` (UNAVAILABLE), and answers NOT_FOUND once every connected
   * worker of the flow type declined the name.
   */
  invokeRpc(req: RpcInvocation, signal: AbortSignal): Promise<RpcSettlement> {
    return new Promise<RpcSettlement>((resolve) => {
      const now = this.clock.now();
      const call: RpcCall = {
        ...req, token: `rpc.${this.opts.tokenPrefix}${(++this.seq).toString(16)}`, arrivedAt: req.arrivedAt ?? now,
        stickyUntil: req.sticky ? Math.min(req.deadline, now + this.opts.stickyWaitMs) : 0,
        settled: false, signal,
        settle: (r) => {
          if (call.settled) return;
          call.settled = true;
          this.waiters.remove(call);
          clearTimeout(call.timer);
          clearTimeout(stickyTimer);
          signal.removeEventListener('abort', onAbort);
          if (r.kind === 'unavailable') call.abandoned?.(r.reason);
          resolve(r);
        },
      };
      const onAbort = () => call.settle({ kind: 'unavailable', reason: 'the caller went away' });
      this.armDispatchDeadline(call);
      // When the sticky window closes, any other idle slot may take it. Closed by the
      // timer, not by reading the clock: a timer may fire a little before the clock
      // shows its time, and the call would then be held again with nothing to wake it.
      const stickyTimer = setTimeout(() => this.endStickyWindow(call), Math.max(0, call.stickyUntil - now));
      // A caller gone before it got here (while its sticky worker was looked up): nothing runs.
      if (signal.aborted) {
        clearTimeout(stickyTimer);
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.placeRpc(call);
    });
  }

  /**
   * RPCs of (tenant, flowType) waiting here for a busy slot, oldest first, go to a
   * peer's slot that just went idle (DESIGN §4: a node with an idle slot), at most
   * `max` of them: `run` starts one there and says whether it did. A call still
   * in its sticky window waits for its sticky worker here.
   */
  moveWaitingRpcs(tenant: string, flowType: string, max: number, run: (call: RpcCall) => boolean): number {
    if (this.waiters.size === 0 || max <= 0) return 0;
    const now = this.clock.now();
    return this.waiters.moveOut(flowKey(tenant, flowType), max, (c) => !c.pinned && c.stickyUntil <= now, (call) => {
      if (!run(call)) return false;
      clearTimeout(call.timer); // the peer bounds it now (its dispatch wait is the call's remaining one)
      return true;
    });
  }

  /**
   * RPCs waiting here in their sticky window for `appWorkerId`, which has idle slots
   * at a peer: at most `max` go there (`run` starts one there and says whether it did).
   */
  moveStickyRpcs(tenant: string, appWorkerId: string, max: number, run: (call: RpcCall) => boolean): number {
    if (this.waiters.size === 0 || max <= 0 || !appWorkerId) return 0;
    const now = this.clock.now();
    let moved = 0;
    for (const call of this.waiters.stickyTo(tenant, appWorkerId)) {
      if (moved >= max) break;
      if (call.pinned || call.stickyUntil <= now || !run(call)) continue;
      this.waiters.remove(call);
      clearTimeout(call.timer); // the peer bounds it now
      moved++;
    }
    return moved;
  }

  /**
   * A call moved to a peer that did not run it (unreachable, or its workers lack
   * the name): it waits here again, under its own dispatch deadline, as if it
   * had not moved.
   */
  rpcBack(call: RpcCall): void {
    if (call.settled) return;
    this.armDispatchDeadline(call);
    this.placeRpc(call);
  }

  /** The sticky phase of a call is over (its window closed, or its sticky worker left): any worker may take it. */
  endStickyWindow(call: RpcCall): void {
    call.stickyUntil = 0;
    if (call.settled || !this.waiters.has(call)) return;
    this.waiters.remove(call);
    // Nothing here is free: any worker of the flow type may take it now (DESIGN §4),
    // and a peer's idle one should, not the dispatch window's end.
    if (call.sticky && !this.pickRpcSlot(call) && this.hooks.rpcToIdlePeer?.(call)) {
      clearTimeout(call.timer);
      return;
    }
    this.placeRpc(call);
  }

  /**
   * The app worker left (no stream here) or began stopping: RPCs held for it as
   * their sticky worker skip the rest of the sticky phase at once (DESIGN §4), as
   * its sticky Steps do; an idle slot here would else sit by until the window closed.
   */
  stickyRpcsMoveOn(tenant: string, appWorkerId: string): void {
    for (const call of this.waiters.stickyTo(tenant, appWorkerId)) this.endStickyWindow(call);
  }

  /** Puts an RPC on an eligible idle slot, or makes it wait for one. */
  private placeRpc(call: RpcCall): void {
    if (call.settled) return;
    if (this.closed) {
      call.settle({ kind: 'unavailable', reason: 'this node is stopping' });
      return;
    }
    if (this.allDeclined(call)) {
      call.settle({ kind: 'not-found' });
      return;
    }
    const slot = this.pickRpcSlot(call);
    if (slot) this.runRpc(slot, call);
    else this.waiters.add(flowKey(call.tenant, call.flowType), call);
  }

  /** An RPC a slot gave back unrun: another slot may take it, until the call's dispatch deadline again. */
  returnRpc(call: RpcCall): void {
    if (this.clock.now() >= call.deadline) {
      call.settle(noTaker(call));
      return;
    }
    this.armDispatchDeadline(call);
    this.placeRpc(call);
  }

  /** matching.dispatchWait (or the caller's deadline) bounds finding a worker: UNAVAILABLE past it. */
  private armDispatchDeadline(call: RpcCall): void {
    clearTimeout(call.timer);
    call.timer = setTimeout(() => call.settle(noTaker(call)), Math.max(0, call.deadline - this.clock.now()));
  }

  private stickyHolds(call: RpcCall, appWorkerId: string): boolean {
    if (!call.sticky || call.sticky === appWorkerId || this.clock.now() >= call.stickyUntil) return false;
    return this.workers.presence(call.tenant, call.sticky, call.flowType, call.rpcName, true) !== 'absent';
  }

  eligibleForRpc(slot: Slot, call: RpcCall): boolean {
    // A stopping worker's streams refuse new work: a call given back by one must not go to the next.
    if (this.drainingWorkers.has(workerKey(call.tenant, slot.reg.appWorkerId))) return false;
    return !this.declines.has(call.tenant, call.flowType, rpcType(call.rpcName), slot.reg.appWorkerId) && !this.stickyHolds(call, slot.reg.appWorkerId);
  }

  private pickRpcSlot(call: RpcCall): Slot | undefined {
    const key = flowKey(call.tenant, call.flowType);
    for (const set of [this.idle.rpc.get(key), this.idle.step.get(key)]) {
      for (const slot of set ?? []) if (this.eligibleForRpc(slot, call)) return slot;
    }
    return undefined;
  }

  /** Every connected worker of the flow type declined the name (and at least one is connected). */
  private allDeclined(call: RpcCall): boolean {
    const slots = this.connected.get(flowKey(call.tenant, call.flowType));
    if (!slots || slots.size === 0) return false;
    for (const slot of slots) if (!this.declines.has(call.tenant, call.flowType, rpcType(call.rpcName), slot.reg.appWorkerId)) return false;
    return true;
  }

  runRpc(slot: Slot, call: RpcCall): void {
    this.idle.remove(slot);
    slot.state = 'busy';
    this.hooks.capacityChanged();
    slot.rpc = call;
    const token = slot.rpcToken = `${call.token}.${(++this.seq).toString(16)}`;
    const now = this.clock.now();
    const sent = slot.send({
      rpc_task: {
        task_token: token, tenant: call.tenant, flow_id: call.flowId, flow_type: call.flowType,
        rpc_name: call.rpcName, input: call.input, deadline_ms: call.runDeadline,
      },
    }, now);
    if (!sent) {
      slot.rpc = slot.rpcToken = undefined;
      this.placeRpc(call);
      return;
    }
    // Nobody waits for its result any more: the handler hears so (its context's signal)
    // and may stop, rather than hold the slot to the end of a run no caller reads.
    call.abandoned = (reason) => {
      if (slot.rpc === call && slot.rpcToken === token) slot.send({ cancel: { task_token: token, reason } }, this.clock.now());
    };
    // An RPC's wait for a slot (DESIGN §10 "RPC waits"), from its arrival at this node.
    this.metrics.dispatchLatency.observe({ path: 'rpc' }, Math.max(0, now - call.arrivedAt) / 1000);
    // Taken: matching.dispatchWait bounds finding a worker, not the worker's run, which
    // may take until the call's own deadline (DESIGN §4; the reference's "total time to
    // find a Worker").
    clearTimeout(call.timer);
    call.timer = setTimeout(
      () => call.settle({
        kind: 'unavailable',
        reason: `worker ${slot.reg.appWorkerId} took it but did not answer in time (within ${Math.max(0, call.runDeadline - call.arrivedAt)} ms of its arrival)`,
      }),
      Math.max(0, call.runDeadline - this.clock.now()),
    );
  }

  /** The worker's answer to the RPC its slot runs; true when it ends the run, and the gateway frees the slot. */
  rpcResult(slot: Slot, msg: pb.IRpcResult): boolean {
    const call = slot.rpc;
    const token = slot.rpcToken;
    if (!call || token === undefined || token !== msg.task_token) {
      this.ack(slot, msg.task_token ?? '', pb.ResultVerdict.REFUSED_STALE, 'rpc_result.task_token: no such rpc on this stream; nothing was recorded');
      return false;
    }
    const problem = resultProblem('rpc_result', msg);
    if (problem) {
      this.ack(slot, token, pb.ResultVerdict.REFUSED_INVALID, problem);
      return false;
    }
    slot.rpc = slot.rpcToken = undefined;
    const output = msg.output != null && msg.failure == null ? Buffer.from(msg.output) : undefined;
    if (output && output.length > this.opts.maxPayloadBytes) {
      this.ack(slot, token, pb.ResultVerdict.REFUSED_INVALID, `rpc_result.output: exceeds limits.maxPayloadBytes (${this.opts.maxPayloadBytes})`);
      call.settle({ kind: 'result', failure: { message: 'rpc output exceeds limits.maxPayloadBytes', type: 'invalid_result', nonRetryable: true }, appWorkerId: slot.reg.appWorkerId });
    } else {
      this.ack(slot, token, call.settled ? pb.ResultVerdict.REFUSED_STALE : pb.ResultVerdict.ACCEPTED, call.settled ? 'the caller is gone' : '');
      const f = msg.failure;
      call.settle(output
        ? { kind: 'result', output, appWorkerId: slot.reg.appWorkerId }
        : { kind: 'result', failure: { message: f?.message ?? '', type: f?.type ?? '', nonRetryable: f?.non_retryable ?? false }, appWorkerId: slot.reg.appWorkerId });
    }
    return true;
  }


  private ack(slot: Slot, token: string, verdict: pb.ResultVerdict, error = ''): void {
    slot.send({ result_ack: { task_token: token, verdict, error } }, this.clock.now());
  }
}

/** How a call that no slot took within its dispatch window ends. */
export function noTaker(call: RpcCall): RpcSettlement {
  return { kind: 'unavailable', reason: `no worker took it within ${Math.max(0, call.deadline - call.arrivedAt)} ms` };
}
