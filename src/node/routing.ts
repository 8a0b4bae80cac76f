/**
 * Where each notice goes in a cluster: ready tasks, attempt deadlines and
 * flow deadlines to the partition's owner (a local call when that is us, a
 * doorbell otherwise); outcomes to every node's waiters; cancels to the node
 * holding the slot; RPCs to the node with the sticky worker or capacity.
 */
import { ClientError, Status } from 'nice-grpc';
import type { CapacityView } from '../cluster/capacity-view';
import type { LeaseManager } from '../cluster/leases';
import type { Membership } from '../cluster/membership';
import { PeerUnreachableError, type Mesh } from '../cluster/mesh';
import { ownerOf } from '../cluster/rendezvous';
import { zdError } from '../errors';
import type { FetchBell } from '../gateway/fetch-bell';
import type { Gateway } from '../gateway/gateway';
import type { OutcomeBell } from '../gateway/outcome-bell';
import { noTaker } from '../gateway/rpc-dispatch';
import type { RpcCall, RpcSettlement } from '../gateway/slot';
import type { OwnerRegistry } from '../owner/registry';
import type { CancelledAttempt } from '../store/task-store';
import type { Keys } from '../store/keys';
import type { RedisClient } from '../store/redis';
import type { Clock } from '../util/clock';
import { pb } from '../wire';

export interface RpcRequest {
  tenant: string;
  flowId: string;
  flowType: string;
  rpcName: string;
  input: Buffer;
  sticky: string;
  /** How long to look for a worker (matching.dispatchWait, never past the caller's timeout). */
  waitMs: number;
  /** How long the whole call may take, the worker's run included: the caller's timeout, else limits.maxWait. */
  runMs: number;
  /** When the call reached this node, when it spent time here before it was routed: both windows count from then. */
  arrivedAt?: number;
}

export interface RpcLimits {
  dispatchWaitMs: number;
  maxRunMs: number;
}

const Kind = pb.DoorbellEvent.Kind;

/** A hop to a peer the call never reached (PeerUnreachableError): nothing ran there. */
type Unreachable = { kind: 'unreachable'; reason: string };

export class Routing {
  constructor(
    private readonly nodeId: string,
    private readonly partitions: number,
    private readonly leases: LeaseManager,
    private readonly membership: Membership,
    private readonly owner: OwnerRegistry,
    private readonly gateway: Gateway,
    private readonly mesh: Mesh,
    private readonly view: CapacityView,
    private readonly bell: OutcomeBell,
    private readonly fetchBell: FetchBell,
    private readonly clock: Clock,
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly rpcLimits: RpcLimits = { dispatchWaitMs: 10_000, maxRunMs: 60_000 },
  ) {}

  /** Rendezvous owners of partitions we do not hold, for the member list `ownersOf`. */
  private readonly owners = new Map<number, string>();
  private ownersOf: readonly string[] | undefined;

  /** The node that owns (or is about to own) a partition: ours, else the rendezvous target of the live members. */
  ownerNodeOf(p: number): string {
    if (this.leases.holds(p)) return this.nodeId;
    const ids = this.membership.liveIds();
    // Rendezvous costs a sha1 per member; the answer holds until the member list changes.
    if (ids !== this.ownersOf) {
      this.ownersOf = ids;
      this.owners.clear();
    }
    let owner = this.owners.get(p);
    if (owner === undefined) {
      // Not holding it, we are not its owner even if the member list still says so (we may be draining).
      owner = ownerOf(p, ids.filter((id) => id !== this.nodeId)) ?? this.nodeId;
      this.owners.set(p, owner);
    }
    return owner;
  }

  /**
   * A notice for the owner (READY, ATTEMPT, FLOW_DEADLINE) reached a node that does
   * not own the partition (the lease moved under it, or the sender's member list is
   * behind): hand it to the lease holder Redis names, unless that is the sender or
   * nobody (the next owner reads Redis when it loads). Dropped, an attempt deadline
   * or a flow deadline fired only when the owner's 5-s backlog count re-armed it.
   */
  private forwardToOwner(p: number, event: pb.IDoorbellEvent, from: string): void {
    this.redis.get(this.keys.lease(p)).then((lease) => {
      const holder = lease ? lease.slice(0, lease.lastIndexOf(':')) : '';
      if (holder && holder !== this.nodeId && holder !== from) this.mesh.ring(holder, event);
    }, () => undefined);
  }

  taskEnqueued(p: number, queue: string, taskId: string, readyAt: number, sticky: string, flowDeadline: number): void {
    const owner = this.ownerNodeOf(p);
    const event = { kind: Kind.READY, partition: p, task_id: taskId, queue, at_ms: readyAt, sticky_worker_id: sticky, fresh: true };
    if (owner !== this.nodeId) this.mesh.ring(owner, event);
    else if (!this.owner.taskEnqueued(p, queue, taskId, readyAt, sticky)) this.forwardToOwner(p, event, this.nodeId);
    if (flowDeadline > 0) this.flowDeadlineSet(p, taskId, flowDeadline);
  }

  /** A flow deadline was set on a Step of partition p: its owner arms the timer. */
  flowDeadlineSet(p: number, taskId: string, deadline: number): void {
    const owner = this.ownerNodeOf(p);
    const event = { kind: Kind.FLOW_DEADLINE, partition: p, task_id: taskId, at_ms: deadline };
    if (owner !== this.nodeId) this.mesh.ring(owner, event);
    else if (!this.owner.flowDeadlineSet(p, deadline)) this.forwardToOwner(p, event, this.nodeId);
  }

  /** `sticky`: the worker a retry's sticky phase offers it to once ready ('' = none). */
  taskReady(p: number, queue: string, taskId: string, readyAt: number, sticky = ''): void {
    const owner = this.ownerNodeOf(p);
    const event = { kind: Kind.READY, partition: p, task_id: taskId, queue, at_ms: readyAt, sticky_worker_id: sticky };
    if (owner !== this.nodeId) this.mesh.ring(owner, event);
    else if (!this.owner.taskReady(p, queue, taskId, readyAt, sticky)) this.forwardToOwner(p, event, this.nodeId);
  }

  attemptStarted(p: number, deadlineAt: number): void {
    // No method or heartbeat timeout: the owner has nothing to arm.
    if (deadlineAt >= Number.MAX_SAFE_INTEGER) return;
    const owner = this.ownerNodeOf(p);
    const event = { kind: Kind.ATTEMPT, partition: p, at_ms: deadlineAt };
    if (owner !== this.nodeId) this.mesh.ring(owner, event);
    else if (!this.owner.attemptStarted(p, deadlineAt)) this.forwardToOwner(p, event, this.nodeId);
  }

  /** Our waiters, and the peers that have waiters (most outcomes have none elsewhere). */
  outcomeWritten(p: number, taskId: string): void {
    this.bell.ring(p, taskId);
    const event = { kind: Kind.OUTCOME, partition: p, task_id: taskId };
    for (const id of this.membership.liveIds()) {
      if (id !== this.nodeId && this.view.wantsOutcomes(id)) this.mesh.ring(id, event);
    }
  }

  /** A task of `queue` is fetchable at `readyAt`: ring the fetches waiting on it here, and at every peer that waits on it. */
  taskFetchable(queue: string, readyAt: number, partition?: number): void {
    this.fetchBell.ringAt(queue, readyAt, partition);
    for (const id of this.view.fetchWaiters(queue)) {
      if (id !== this.nodeId) this.mesh.ring(id, { kind: Kind.FETCH, partition: 0, queue, at_ms: readyAt });
    }
  }

  /**
   * Notices we sent a peer may be lost: our link to it is back after it broke, or the peer
   * read it so slowly that notices queued for it were dropped. Owners find theirs in their
   * backlog count; the peer's waiting fetches and outcome waiters have nothing of the kind,
   * and would sleep through a task made fetchable, or an outcome written, meanwhile: they
   * look again (DESIGN §7, §8).
   */
  noticesLost(node: string): void {
    for (const queue of this.view.fetchTopicsOf(node)) this.mesh.ring(node, { kind: Kind.FETCH, partition: 0, queue });
    if (this.view.wantsOutcomes(node)) this.mesh.ring(node, { kind: Kind.OUTCOME, partition: 0, task_id: '' });
  }

  /**
   * We gave up partition `p` because the members changed: its new owner hears at once,
   * so the partition's heads wait for no lease retry (DESIGN §3: acquire on notice).
   */
  leaseReleased(p: number): void {
    const owner = this.ownerNodeOf(p);
    if (owner !== this.nodeId) this.mesh.ring(owner, { kind: Kind.LEASE_RELEASED, partition: p });
  }

  /** Doorbells from peers; a READY, ATTEMPT or FLOW_DEADLINE for a partition we do not own goes on to its lease holder. */
  onDoorbell(events: pb.IDoorbellEvent[], from: string): void {
    for (const e of events) {
      const p = e.partition ?? 0;
      if (p >= this.partitions) continue;
      const at = Number(e.at_ms ?? 0);
      switch (e.kind) {
        case Kind.READY: {
          const taken = e.fresh
            ? this.owner.taskEnqueued(p, e.queue ?? '', e.task_id ?? '', at, e.sticky_worker_id ?? '')
            : this.owner.taskReady(p, e.queue ?? '', e.task_id ?? '', at, e.sticky_worker_id ?? '');
          if (!taken) this.forwardToOwner(p, e, from);
          break;
        }
        case Kind.ATTEMPT:
          if (!this.owner.attemptStarted(p, at)) this.forwardToOwner(p, e, from);
          break;
        case Kind.FLOW_DEADLINE:
          if (!this.owner.flowDeadlineSet(p, at)) this.forwardToOwner(p, e, from);
          break;
        case Kind.OUTCOME:
          if (e.task_id) this.bell.ring(p, e.task_id);
          else this.bell.wakeAll();
          break;
        case Kind.FETCH:
          this.fetchBell.ringAt(e.queue ?? '', at);
          break;
        case Kind.LEASE_RELEASED:
          this.leases.acquireNow(p);
          break;
        default:
          break;
      }
    }
  }

  /** A peer's capacity snapshot: idle slots there may take heads of our partitions. */
  /**
   * An app worker's last stream here ended, or it began to stop: its sticky Steps move on
   * at once (DESIGN §4), unless a peer still holds a stream of it that is not draining —
   * then they wait for it there, and that peer's CapacityUpdate says when it goes (onCapacity).
   */
  workerGoneHere(tenant: string, appWorkerId: string): void {
    if (this.view.nodeOfWorker(tenant, appWorkerId) === undefined) this.owner.workerUnavailable(tenant, appWorkerId);
  }

  /**
   * App workers a peer no longer offers (gone from it, draining there, or the peer itself left
   * the members): those with no stream here or at another peer are unavailable, and Steps
   * waiting for them as their sticky worker move on at once (DESIGN §4).
   */
  workersLeft(workers: { tenant: string; appWorkerId: string }[]): void {
    for (const w of workers) {
      if (!this.gateway.hasWorker(w.tenant, w.appWorkerId) && this.view.nodeOfWorker(w.tenant, w.appWorkerId) === undefined) {
        this.owner.workerUnavailable(w.tenant, w.appWorkerId);
      }
    }
  }

  onCapacity(update: pb.ICapacityUpdate): void {
    const node = update.node_id ?? '';
    const gen = this.view.outcomeGen(node);
    const leaving = this.view.leaving(update);
    const fetchTopics = this.view.newFetchTopics(update);
    const declines = this.view.newStepDeclines(update);
    const first = !this.view.has(node);
    if (!this.view.apply(update)) return;
    // A node we held no snapshot of: it joined, or came back. It gets ours now, not once
    // our next heartbeat reads it among the members (DESIGN §3, §4).
    if (first) this.mesh.sendSnapshotTo(node);
    // Fetches there began to wait on these topics: a task made fetchable here before
    // we knew was not rung there. One "look again" each (a spare one costs a claim).
    for (const queue of fetchTopics) this.mesh.ring(node, { kind: Kind.FETCH, partition: 0, queue });
    // A worker that went away or began draining there, with no stream here or at another
    // peer: Steps waiting for it as their sticky worker move on at once (DESIGN §4).
    this.workersLeft(leaving);
    // A worker there declined a Step type: Steps waiting for it as their sticky worker move on
    // at once unless it can run the type elsewhere (DESIGN §4), whether or not its slot is idle now.
    for (const d of declines) this.owner.typeDeclined(d.tenant, d.flowType, d.stepType, d.appWorkerId);
    // Its first outcome waiter arrived: outcomes we wrote before we knew were not rung there.
    const nextGen = Number(update.outcome_waiter_gen ?? 0);
    if (nextGen > 0 && nextGen !== gen && (update.outcome_waiters ?? 0) > 0) {
      this.mesh.ring(node, { kind: Kind.OUTCOME, partition: 0, task_id: '' });
    }
    for (const w of update.workers ?? []) {
      if (w.draining) continue;
      // RPCs waiting here for a busy slot take the peer's idle ones first, as a slot freed here would
      let idle = (w.idle_step_slots ?? 0) + (w.idle_rpc_slots ?? 0);
      // Those waiting here for this very worker, in their sticky window, first of all.
      if (idle > 0) idle -= this.gateway.moveStickyRpcs(w.tenant ?? '', w.app_worker_id ?? '', idle, (call) => this.rpcToStickyPeer(call, node));
      for (const ft of w.flow_types ?? []) {
        if (idle > 0) idle -= this.gateway.moveWaitingRpcs(w.tenant ?? '', ft, idle, (call) => this.rpcToIdlePeer(call));
      }
      if ((w.idle_step_slots ?? 0) <= 0) continue;
      for (const ft of w.flow_types ?? []) this.owner.capacityAvailable(w.tenant ?? '', ft, w.app_worker_id ?? '');
    }
  }

  cancelAttempts(attempts: CancelledAttempt[], reason: string): void {
    const byNode = new Map<string, CancelledAttempt[]>();
    for (const a of attempts) byNode.set(a.nodeId, [...(byNode.get(a.nodeId) ?? []), a]);
    for (const [node, list] of byNode) {
      if (node === this.nodeId) this.gateway.cancelAttempts(list, reason);
      else this.mesh.cancelAttempts(node, list.map((a) => ({ task_id: a.taskId, attempt: a.attempt, nonce: a.nonce, stream_id: a.streamId })), reason);
    }
  }

  /**
   * Picks the node to run an RPC on (DESIGN §4: sticky first, then a node with an idle
   * slot of the flow type): the sticky worker's; else ours when a slot here is idle;
   * else a peer that advertises an idle slot; else ours when a worker of the flow type
   * is connected here, busy (the call waits for it); else any peer with such workers.
   */
  private rpcNode(r: RpcRequest): string {
    if (r.sticky) {
      const here = this.gateway.presence(r.tenant, r.sticky, r.flowType, r.rpcName, true);
      if (here === 'idle') return this.nodeId;
      // The sticky phase waits only while the worker is busy (DESIGN §4): its streams
      // may be spread over nodes, and an idle one at a peer runs the call now.
      const idleThere = this.view.idleNodeOfWorker(r.tenant, r.sticky, r.flowType, r.rpcName);
      if (idleThere) {
        this.view.reserveRpc(idleThere, r.tenant, r.flowType, r.rpcName, r.sticky);
        return idleThere;
      }
      if (here === 'busy') return this.nodeId;
      // Only where the sticky worker can run it: one that lacks it there is skipped at once (DESIGN §4).
      const node = this.view.nodeOfWorker(r.tenant, r.sticky, { flowType: r.flowType, rpcName: r.rpcName });
      if (node) return node;
    }
    if (this.gateway.hasIdleRpcSlot(r.tenant, r.flowType, r.rpcName)) return this.nodeId;
    const idlePeer = this.view.idleNodeFor(r.tenant, r.flowType, r.rpcName);
    if (idlePeer) {
      this.view.reserveRpc(idlePeer, r.tenant, r.flowType, r.rpcName);
      return idlePeer;
    }
    if (this.waitsHere(r)) return this.nodeId;
    return this.view.nodesFor(r.tenant, r.flowType, r.rpcName)[0] ?? this.nodeId;
  }

  /**
   * Whether an RPC may wait here for a busy slot of its flow type: a worker of it is
   * connected, and this node is not draining (its workers are leaving: a call waiting
   * for them would wait for nothing while a peer's workers could run it).
   */
  private waitsHere(r: RpcRequest): boolean {
    return this.gateway.hasConnected(r.tenant, r.flowType) && !this.gateway.isDraining;
  }

  async invokeRpc(r: RpcRequest, signal: AbortSignal): Promise<RpcSettlement> {
    let node = this.rpcNode(r);
    // No worker of the flow type here, and every one the peers advertise declined the
    // name: the named error at once (DESIGN §4), not UNAVAILABLE after waiting here for
    // a worker that is not coming.
    if (node === this.nodeId && !this.waitsHere(r)
      && this.view.nodesFor(r.tenant, r.flowType).length > 0 && this.view.nodesFor(r.tenant, r.flowType, r.rpcName).length === 0) {
      return { kind: 'not-found' };
    }
    // NOT_FOUND from a node means its workers lack the name (answered at once, and what
    // the view said of declines may be behind): another node's may have it. The call
    // may have waited at that node first: each next node gets only what is left of
    // both windows, so dispatchWait bounds the whole search (DESIGN §4), not each hop.
    const start = r.arrivedAt ?? this.clock.now();
    const tried = new Set<string>();
    let hop = r;
    // A peer the call never reached (gone, or no connection to it) ran nothing: the
    // next node is tried the same way, and the search ends UNAVAILABLE only when none is left.
    for (;;) {
      const s: RpcSettlement | Unreachable = node === this.nodeId ? await this.runLocal(hop, signal) : await this.runOn(node, hop, signal);
      if (s.kind !== 'not-found' && s.kind !== 'unreachable') return s;
      const ended: RpcSettlement = s.kind === 'not-found' ? s : { kind: 'unavailable', reason: signal.aborted ? 'the caller went away' : s.reason };
      if (signal.aborted) return ended;
      tried.add(node);
      const here = this.waitsHere(r) ? [this.nodeId] : [];
      const next = [...here, ...this.view.nodesFor(r.tenant, r.flowType, r.rpcName)].find((n) => !tried.has(n));
      if (!next) return ended;
      const elapsed = this.clock.now() - start;
      // The caller's budget is spent: nothing is left to run it in.
      if (r.runMs - elapsed <= 0) return { kind: 'unavailable', reason: `no worker took it within the caller's ${r.runMs} ms` };
      // A window spent already still lets an idle slot there take it at once (wait 0).
      hop = { ...r, waitMs: Math.max(0, r.waitMs - elapsed), runMs: r.runMs - elapsed, arrivedAt: undefined };
      node = next;
    }
  }

  /** A call waiting here runs on a peer that advertises an idle slot for it, if any (Gateway's hook). */
  rpcToIdlePeer(call: RpcCall): boolean {
    const peer = this.view.idleNodeFor(call.tenant, call.flowType, call.rpcName, call.skipPeers);
    if (!peer || peer === this.nodeId) return false;
    this.view.reserveRpc(peer, call.tenant, call.flowType, call.rpcName);
    this.runWaitingOn(peer, call, '');
    return true;
  }

  /** A call waiting here for its sticky worker runs on `peer` when that worker has an idle slot for it there. */
  private rpcToStickyPeer(call: RpcCall, peer: string): boolean {
    if (peer === this.nodeId || call.skipPeers?.has(peer) || !this.view.workerIdleAt(peer, call.tenant, call.sticky, call.flowType, call.rpcName)) return false;
    this.view.reserveRpc(peer, call.tenant, call.flowType, call.rpcName, call.sticky);
    this.runWaitingOn(peer, call, call.sticky);
    return true;
  }

  private runWaitingOn(peer: string, call: RpcCall, sticky: string): void {
    const now = this.clock.now();
    // Its time ran out before the move (a late timer, a busy loop): 0 would reach the peer as
    // "no budget given", and its worker could run up to limits.maxWait. It ends here instead.
    if (call.deadline <= now || call.runDeadline <= now) {
      call.settle(noTaker(call));
      return;
    }
    void this.runOn(peer, {
      tenant: call.tenant, flowId: call.flowId, flowType: call.flowType, rpcName: call.rpcName, input: call.input,
      sticky, waitMs: Math.max(0, call.deadline - now), runMs: Math.max(0, call.runDeadline - now),
    }, call.signal).then((s) => {
      // NOT_FOUND there says only that the peer's workers lack the name (the view may not
      // have known): this node's busy workers may have it, and the call came here for them.
      if (s.kind !== 'unreachable' && s.kind !== 'not-found') return call.settle(s);
      // It did not run there: it waits here again, and that peer is not picked for it again.
      (call.skipPeers ??= new Set()).add(peer);
      this.gateway.rpcBack(call);
    });
  }

  private async runOn(node: string, r: RpcRequest, signal: AbortSignal): Promise<RpcSettlement | Unreachable> {
    // What is left of the windows since the call arrived here: the peer gets no more.
    const spent = r.arrivedAt === undefined ? 0 : Math.max(0, this.clock.now() - r.arrivedAt);
    if (spent > 0) r = { ...r, waitMs: Math.max(0, r.waitMs - spent), runMs: Math.max(1, r.runMs - spent) };
    try {
      const res = await this.mesh.invokeRpc(node, {
        tenant: r.tenant, flow_id: r.flowId, flow_type: r.flowType, rpc_name: r.rpcName, input: r.input,
        // the whole call's budget; the header what is left of the dispatch window, which the
        // peer looks for a worker for at most (an older peer: its own dispatchWait)
        sticky_worker_id: r.sticky, timeout_ms: r.runMs,
      }, signal, r.waitMs);
      return res.output != null && res.failure == null
        ? { kind: 'result', output: Buffer.from(res.output), appWorkerId: res.app_worker_id ?? '' }
        : {
          kind: 'result', appWorkerId: res.app_worker_id ?? '',
          failure: { message: res.failure?.message ?? '', type: res.failure?.type ?? '', nonRetryable: res.failure?.non_retryable ?? false },
        };
    } catch (err) {
      if (err instanceof PeerUnreachableError) return { kind: 'unreachable', reason: err.message };
      if (err instanceof ClientError && err.code === Status.NOT_FOUND) return { kind: 'not-found' };
      return { kind: 'unavailable', reason: err instanceof Error ? err.message : String(err) };
    }
  }

  /** `pinned`: a peer sent the call here; it waits for our slots, not a third node's. */
  private runLocal(r: RpcRequest, signal: AbortSignal, pinned = false): Promise<RpcSettlement> {
    const from = r.arrivedAt ?? this.clock.now();
    return this.gateway.invokeRpc(
      {
        tenant: r.tenant, flowId: r.flowId, flowType: r.flowType, rpcName: r.rpcName, input: r.input, sticky: r.sticky,
        deadline: from + r.waitMs, runDeadline: from + r.runMs, arrivedAt: from, pinned,
      },
      signal,
    );
  }

  /**
   * A peer routed an RPC here: run it on our slots. `leftMs`: what the sender left of
   * the call's dispatch window (it may have waited elsewhere first); undefined from an
   * older peer, which gets our whole dispatchWait as before.
   */
  async serveRpc(req: pb.InvokeRpcRequest, signal: AbortSignal, leftMs?: number): Promise<pb.IInvokeRpcResponse> {
    const runMs = Number(req.timeout_ms ?? 0) || this.rpcLimits.maxRunMs;
    const waitMs = Math.min(runMs, this.rpcLimits.dispatchWaitMs, leftMs ?? Infinity);
    const r = await this.runLocal({
      tenant: req.tenant, flowId: req.flow_id, flowType: req.flow_type, rpcName: req.rpc_name,
      input: Buffer.from(req.input ?? []), sticky: req.sticky_worker_id, waitMs, runMs,
    }, signal, true);
    if (r.kind === 'not-found') throw zdError('ZD_RPC_NOT_FOUND', { rpcName: req.rpc_name, flowType: req.flow_type });
    if (r.kind === 'unavailable') throw zdError('ZD_RPC_UNAVAILABLE', { rpcName: req.rpc_name, reason: r.reason });
    return r.output
      ? { output: r.output, app_worker_id: r.appWorkerId }
      : { failure: { message: r.failure?.message ?? '', type: r.failure?.type ?? '', non_retryable: r.failure?.nonRetryable ?? false }, app_worker_id: r.appWorkerId };
  }
}
