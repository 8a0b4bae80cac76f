/**
 * The cluster capacity view an owner matches against: the newest snapshot
 * each peer gateway advertised (idle slots per flow type, app workers and
 * their declines). Reserving a slot decrements the count optimistically; the
 * peer's next snapshot corrects it, and a wrong guess only costs a no-slot.
 */
import type { Presence } from '../owner/dispatcher';
import { rpcDeclineType, type pb } from '../wire';

interface NodeCapacity {
  seq: number;
  idleStep: Map<string, number>;
  connected: Set<string>;
  workers: Map<string, pb.IWorkerPresence>;
  declined: Set<string>;
  /** 0: a build that does not advertise outcome waiters. */
  outcomeGen: number;
  outcomeWaiters: number;
  /** Topics long-polling fetches wait on at the peer. */
  fetchTopics: Set<string>;
  /** Topics fetches asked for at the peer lately, waiting or not. */
  fetchedTopics: Set<string>;
  /** The peer's backlog as an owner; undefined: a build that does not advertise it. */
  backlog: { busyQueues: Set<string>; waitingFlows: Set<string>; loading: boolean } | undefined;
  /** Its workers say which flow types their Step slots run (false: an older build). */
  stepFlowTypes: boolean;
}

const flowKey = (tenant: string, flowType: string) => `${tenant}\0${flowType}`;
const declineKey = (tenant: string, flowType: string, type: string, app: string) => `${tenant}\0${flowType}\0${type}\0${app}`;

/** Whether the worker's Step slots run the flow type (an older peer says only that some slot registers it). */
const runsSteps = (c: NodeCapacity, w: pb.IWorkerPresence, flowType: string): boolean =>
  (c.stepFlowTypes ? w.step_flow_types : w.flow_types)?.includes(flowType) ?? false;

/** One of the worker's idle slots counts as busy until its node's next snapshot (so its worker still counts as present). */
function takeIdleSlot(w: pb.IWorkerPresence, kind: 'idle_step_slots' | 'idle_rpc_slots'): void {
  w[kind] = (w[kind] ?? 1) - 1;
  w.busy_slots = (w.busy_slots ?? 0) + 1;
}

export class CapacityView {
  private readonly nodes = new Map<string, NodeCapacity>();

  /** Applies a snapshot; false when it is older than the one held. */
  apply(u: pb.ICapacityUpdate): boolean {
    const node = u.node_id ?? '';
    const seq = Number(u.seq ?? 0);
    const cur = this.nodes.get(node);
    if (cur && cur.seq >= seq) return false;
    const next: NodeCapacity = {
      seq, idleStep: new Map(), connected: new Set(), workers: new Map(), declined: new Set(),
      outcomeGen: Number(u.outcome_waiter_gen ?? 0), outcomeWaiters: u.outcome_waiters ?? 0,
      fetchTopics: new Set(u.fetch_topics ?? []), fetchedTopics: new Set(u.fetched_topics ?? []), stepFlowTypes: u.step_flow_types_advertised === true,
      backlog: u.backlog_advertised
        ? { busyQueues: new Set(u.busy_queues ?? []), waitingFlows: new Set(u.waiting_flows ?? []), loading: u.backlog_loading === true }
        : undefined,
    };
    for (const e of u.entries ?? []) {
      const key = flowKey(e.tenant ?? '', e.flow_type ?? '');
      next.connected.add(key);
      if ((e.idle_step_slots ?? 0) > 0) next.idleStep.set(key, e.idle_step_slots ?? 0);
    }
    for (const w of u.workers ?? []) next.workers.set(`${w.tenant}\0${w.app_worker_id}`, w);
    for (const d of u.declined ?? []) next.declined.add(declineKey(d.tenant ?? '', d.flow_type ?? '', d.type ?? '', d.app_worker_id ?? ''));
    this.nodes.set(node, next);
    return true;
  }

  /** Whether a snapshot of the node is held. */
  has(nodeId: string): boolean {
    return this.nodes.has(nodeId);
  }

  /** Whether fetches at some peer asked for `topic` lately (its queue has a taker). */
  fetchedAnywhere(topic: string): boolean {
    for (const c of this.nodes.values()) if (c.fetchedTopics.has(topic) || c.fetchTopics.has(topic)) return true;
    return false;
  }

  /** The topics long-polling fetches wait on at `nodeId`, as its snapshot held says. */
  fetchTopicsOf(nodeId: string): string[] {
    return [...(this.nodes.get(nodeId)?.fetchTopics ?? [])];
  }

  /** The peers whose long-polling fetches wait on `topic`. */
  fetchWaiters(topic: string): string[] {
    const out: string[] = [];
    for (const [node, c] of this.nodes) if (c.fetchTopics.has(topic)) out.push(node);
    return out;
  }

  /**
   * The topics `u` names as waited on by fetches that the held snapshot of its
   * node did not (all of them for a node not heard from yet). Ask before `apply`;
   * empty for an update `apply` would ignore.
   */
  newFetchTopics(u: pb.ICapacityUpdate): string[] {
    const cur = this.nodes.get(u.node_id ?? '');
    if (cur && cur.seq >= Number(u.seq ?? 0)) return [];
    return (u.fetch_topics ?? []).filter((t) => !cur?.fetchTopics.has(t));
  }

  /**
   * The Step types `u` names as declined by an app worker that the held snapshot of its
   * node did not (all of them for a node not heard from yet). Ask before `apply`; empty
   * for an update `apply` would ignore.
   */
  newStepDeclines(u: pb.ICapacityUpdate): { tenant: string; flowType: string; stepType: string; appWorkerId: string }[] {
    const cur = this.nodes.get(u.node_id ?? '');
    if (cur && cur.seq >= Number(u.seq ?? 0)) return [];
    const out: { tenant: string; flowType: string; stepType: string; appWorkerId: string }[] = [];
    for (const d of u.declined ?? []) {
      const [tenant, flowType, stepType, appWorkerId] = [d.tenant ?? '', d.flow_type ?? '', d.type ?? '', d.app_worker_id ?? ''];
      if (stepType.startsWith(rpcDeclineType('')) || cur?.declined.has(declineKey(tenant, flowType, stepType, appWorkerId))) continue;
      out.push({ tenant, flowType, stepType, appWorkerId });
    }
    return out;
  }

  /**
   * The app workers the node of `u` advertised in its held snapshot as
   * available (connected, not draining) that `u` no longer does: gone from
   * that node, or draining there. Ask before `apply`; empty for an update
   * `apply` would ignore.
   */
  leaving(u: pb.ICapacityUpdate): { tenant: string; appWorkerId: string }[] {
    const cur = this.nodes.get(u.node_id ?? '');
    if (!cur || cur.seq >= Number(u.seq ?? 0)) return [];
    const still = new Set<string>();
    for (const w of u.workers ?? []) if (!w.draining) still.add(`${w.tenant}\0${w.app_worker_id}`);
    const out: { tenant: string; appWorkerId: string }[] = [];
    for (const [key, w] of cur.workers) {
      if (!w.draining && !still.has(key)) out.push({ tenant: w.tenant ?? '', appWorkerId: w.app_worker_id ?? '' });
    }
    return out;
  }

  /**
   * Whether the peers' backlogs let a new Step of `queue` start at enqueue in
   * a slot of this node: no peer owner names the queue or its flow type, and
   * none is still loading a partition. With `everyPeer` (the Step's partition
   * is not ours) each of `peers` must have advertised its backlog: a peer not
   * heard from yet, or of a build that does not say, may hold a backlog.
   */
  peersAllowStartAtEnqueue(queue: string, tenant: string, flowType: string, peers: string[], everyPeer: boolean): boolean {
    const flow = `${tenant}:${flowType}`;
    for (const id of peers) {
      const b = this.nodes.get(id)?.backlog;
      if (!b) {
        if (everyPeer) return false;
        continue;
      }
      if (b.loading || b.busyQueues.has(queue) || b.waitingFlows.has(flow)) return false;
    }
    return true;
  }

  /** Whether some peer owner (the view holds live peers only) advertised ready Steps of `queue` in its partitions. */
  peerHasBacklog(queue: string): boolean {
    for (const c of this.nodes.values()) if (c.backlog?.busyQueues.has(queue)) return true;
    return false;
  }

  /** Whether a peer should get OUTCOME doorbells: it has waiters, or it has not said (no snapshot yet, older build). */
  wantsOutcomes(nodeId: string): boolean {
    const c = this.nodes.get(nodeId);
    return !c || c.outcomeGen === 0 || c.outcomeWaiters > 0;
  }

  /** The peer's outcome-waiter generation in the snapshot held (0 when none). */
  outcomeGen(nodeId: string): number {
    return this.nodes.get(nodeId)?.outcomeGen ?? 0;
  }

  remove(nodeId: string): void {
    this.nodes.delete(nodeId);
  }

  /** Drops the snapshots of nodes that left; returns the app workers they advertised as available (connected, not draining). */
  retainOnly(nodeIds: Set<string>): { tenant: string; appWorkerId: string }[] {
    const gone: { tenant: string; appWorkerId: string }[] = [];
    for (const [id, c] of [...this.nodes]) {
      if (nodeIds.has(id)) continue;
      this.nodes.delete(id);
      for (const w of c.workers.values()) if (!w.draining) gone.push({ tenant: w.tenant ?? '', appWorkerId: w.app_worker_id ?? '' });
    }
    return gone;
  }

  /** A peer with an idle Step slot for the type (of `appWorkerId` when given), counted as promised. */
  reserve(tenant: string, flowType: string, stepType: string, appWorkerId?: string): string | undefined {
    const key = flowKey(tenant, flowType);
    for (const [node, c] of this.nodes) {
      const idle = c.idleStep.get(key) ?? 0;
      if (idle <= 0) continue;
      if (appWorkerId !== undefined) {
        const w = c.workers.get(`${tenant}\0${appWorkerId}`);
        if (!w || w.draining || (w.idle_step_slots ?? 0) <= 0 || !runsSteps(c, w, flowType)) continue;
        if (c.declined.has(declineKey(tenant, flowType, stepType, appWorkerId))) continue;
        takeIdleSlot(w, 'idle_step_slots');
      } else if (this.allDeclinedOn(c, tenant, flowType, stepType)) {
        continue;
      } else {
        // One of its workers' slots, whichever the peer binds: RPCs are routed by the workers' idle slots.
        for (const w of c.workers.values()) {
          if (w.tenant !== tenant || w.draining || (w.idle_step_slots ?? 0) <= 0 || !runsSteps(c, w, flowType)) continue;
          if (c.declined.has(declineKey(tenant, flowType, stepType, w.app_worker_id ?? ''))) continue;
          takeIdleSlot(w, 'idle_step_slots');
          break;
        }
      }
      c.idleStep.set(key, idle - 1);
      return node;
    }
    return undefined;
  }

  presence(tenant: string, appWorkerId: string, flowType: string, stepType: string): Presence {
    let busy = false;
    for (const c of this.nodes.values()) {
      const w = c.workers.get(`${tenant}\0${appWorkerId}`);
      if (!w || w.draining || !runsSteps(c, w, flowType)) continue;
      if (c.declined.has(declineKey(tenant, flowType, stepType, appWorkerId))) continue;
      if ((w.idle_step_slots ?? 0) > 0) return 'idle';
      if ((w.busy_slots ?? 0) > 0) busy = true;
    }
    return busy ? 'busy' : 'absent';
  }

  /**
   * Whether a peer has a worker that can run this Step type: connected, not stopping,
   * with Step slots of the flow type (an RPC-only worker runs none: counted, queued Steps
   * no worker can run showed as served), and not declining it.
   */
  canServe(tenant: string, flowType: string, stepType: string): boolean {
    for (const c of this.nodes.values()) {
      if (!c.connected.has(flowKey(tenant, flowType))) continue;
      if (!c.stepFlowTypes) {
        if (!this.allDeclinedOn(c, tenant, flowType, stepType)) return true;
        continue;
      }
      for (const w of c.workers.values()) {
        if (w.tenant !== tenant || w.draining || !runsSteps(c, w, flowType)) continue;
        if (!c.declined.has(declineKey(tenant, flowType, stepType, w.app_worker_id ?? ''))) return true;
      }
    }
    return false;
  }

  /**
   * The node holding streams of an app worker, if any. With `rpc`, only a node where
   * that worker can run the call: it registers the flow type and has not declined the
   * name there (a sticky RPC sent to any other would wait out matching.stickyWait).
   */
  nodeOfWorker(tenant: string, appWorkerId: string, rpc?: { flowType: string; rpcName: string }): string | undefined {
    for (const [node, c] of this.nodes) {
      const w = c.workers.get(`${tenant}\0${appWorkerId}`);
      if (!w || w.draining) continue;
      if (rpc && (!(w.flow_types ?? []).includes(rpc.flowType)
        || c.declined.has(declineKey(tenant, rpc.flowType, rpcDeclineType(rpc.rpcName), appWorkerId)))) continue;
      return node;
    }
    return undefined;
  }

  /** A peer where this app worker has an idle slot (RPC-only or shared) for the RPC, and has not declined it. */
  idleNodeOfWorker(tenant: string, appWorkerId: string, flowType: string, rpcName: string): string | undefined {
    for (const node of this.nodes.keys()) if (this.workerIdleAt(node, tenant, appWorkerId, flowType, rpcName)) return node;
    return undefined;
  }

  /** Whether this app worker has an idle slot for the RPC at `node`, and has not declined it there. */
  workerIdleAt(node: string, tenant: string, appWorkerId: string, flowType: string, rpcName: string): boolean {
    const c = this.nodes.get(node);
    const w = c?.workers.get(`${tenant}\0${appWorkerId}`);
    if (!c || !w || w.draining || !(w.flow_types ?? []).includes(flowType)) return false;
    if (c.declined.has(declineKey(tenant, flowType, rpcDeclineType(rpcName), appWorkerId))) return false;
    return (w.idle_rpc_slots ?? 0) + (w.idle_step_slots ?? 0) > 0;
  }

  /**
   * An RPC goes to `node` for an idle slot its snapshot named (of `appWorkerId` when given):
   * that slot counts as taken until the node's next snapshot, as `reserve` does for Steps.
   * The calls of a burst went to the one idle slot until then, and those past it waited
   * there, pinned, for that slot alone.
   */
  reserveRpc(node: string, tenant: string, flowType: string, rpcName: string, appWorkerId?: string): void {
    const c = this.nodes.get(node);
    if (!c) return;
    for (const w of c.workers.values()) {
      if (w.tenant !== tenant || w.draining || !(w.flow_types ?? []).includes(flowType)) continue;
      if (appWorkerId !== undefined && w.app_worker_id !== appWorkerId) continue;
      if (c.declined.has(declineKey(tenant, flowType, rpcDeclineType(rpcName), w.app_worker_id ?? ''))) continue;
      // The gateway gives an RPC an RPC-only slot before a shared one.
      if ((w.idle_rpc_slots ?? 0) > 0) {
        takeIdleSlot(w, 'idle_rpc_slots');
        return;
      }
      if ((w.idle_step_slots ?? 0) > 0) {
        takeIdleSlot(w, 'idle_step_slots');
        const key = flowKey(tenant, flowType);
        const idle = c.idleStep.get(key) ?? 0;
        if (idle > 0) c.idleStep.set(key, idle - 1);
        return;
      }
    }
  }

  /**
   * A peer with an idle slot (RPC-only or shared) of a worker of the flow type, if any;
   * with `rpcName`, of a worker that has not declined it.
   */
  idleNodeFor(tenant: string, flowType: string, rpcName?: string, skip?: ReadonlySet<string>): string | undefined {
    for (const [node, c] of this.nodes) {
      if (skip?.has(node)) continue;
      for (const w of c.workers.values()) {
        if (w.tenant !== tenant || w.draining || !(w.flow_types ?? []).includes(flowType)) continue;
        if (rpcName !== undefined && c.declined.has(declineKey(tenant, flowType, rpcDeclineType(rpcName), w.app_worker_id ?? ''))) continue;
        if ((w.idle_rpc_slots ?? 0) + (w.idle_step_slots ?? 0) > 0) return node;
      }
    }
    return undefined;
  }

  /**
   * Peers with a connected worker of the flow type, those with idle slots first; with
   * `rpcName`, only peers where some worker of it has not declined that name.
   */
  nodesFor(tenant: string, flowType: string, rpcName?: string): string[] {
    const key = flowKey(tenant, flowType);
    const withIdle: string[] = [];
    const rest: string[] = [];
    for (const [node, c] of this.nodes) {
      let idle = 0;
      let any = false;
      for (const w of c.workers.values()) {
        if (w.tenant !== tenant || !(w.flow_types ?? []).includes(flowType)) continue;
        any = true;
        idle += (w.idle_rpc_slots ?? 0) + (w.idle_step_slots ?? 0);
      }
      if (!any && !c.connected.has(key)) continue;
      if (rpcName !== undefined && this.allDeclinedOn(c, tenant, flowType, rpcDeclineType(rpcName))) continue;
      (idle > 0 ? withIdle : rest).push(node);
    }
    return [...withIdle, ...rest];
  }

  /**
   * Whether a peer has a worker of the flow type that takes new work (any slot kind, even
   * one that declined a type): not stopping. A peer of an older build that names no
   * workers counts by its connected flow types.
   */
  availableFor(tenant: string, flowType: string): boolean {
    for (const c of this.nodes.values()) {
      if (c.workers.size === 0) {
        if (c.connected.has(flowKey(tenant, flowType))) return true;
        continue;
      }
      for (const w of c.workers.values()) {
        if (w.tenant === tenant && !w.draining && (w.flow_types ?? []).includes(flowType)) return true;
      }
    }
    return false;
  }

  /** `type`: a Step type, or rpcDeclineType(name). */
  private allDeclinedOn(c: NodeCapacity, tenant: string, flowType: string, type: string): boolean {
    let any = false;
    for (const w of c.workers.values()) {
      if (w.tenant !== tenant || !(w.flow_types ?? []).includes(flowType)) continue;
      any = true;
      if (!c.declined.has(declineKey(tenant, flowType, type, w.app_worker_id ?? ''))) return false;
    }
    return any;
  }
}
