/**
 * What this node tells of its slots: the capacity its peers match against
 * (DESIGN §4) and the counts of the slots gauge.
 */
import type { pb } from '../wire';
import type { Declines } from './declines';
import type { IdleSlots } from './idle-slots';
import type { Slot } from './slot';
import { workerKey } from './slot-maps';

export interface CapacitySnapshot {
  entries: pb.ICapacityEntry[];
  workers: pb.IWorkerPresence[];
  declined: pb.IDeclinedType[];
}

/** This node's capacity for peers: idle slots per flow type, app workers, declines. */
export function capacitySnapshot(
  /** Every open slot by (tenant, flowType). */
  connected: ReadonlyMap<string, ReadonlySet<Slot>>,
  /** Streams by (tenant, app worker id). */
  byWorker: ReadonlyMap<string, ReadonlySet<Slot>>,
  /** App workers (tenant\0id) that are stopping. */
  drainingWorkers: ReadonlySet<string>,
  idle: IdleSlots,
  declines: Declines,
): CapacitySnapshot {
  const entries: pb.ICapacityEntry[] = [];
  for (const [key, slots] of connected) {
    if (slots.size === 0) continue;
    const [tenant = '', flowType = ''] = key.split('\0');
    entries.push({
      tenant, flow_type: flowType,
      idle_step_slots: idle.step.get(key)?.size ?? 0, idle_rpc_slots: idle.rpc.get(key)?.size ?? 0,
    });
  }
  const workers: pb.IWorkerPresence[] = [];
  for (const slots of byWorker.values()) {
    const first = slots.values().next().value as Slot | undefined;
    if (!first) continue;
    const app = first.reg.appWorkerId;
    let idleStep = 0;
    let idleRpc = 0;
    let busy = 0;
    const flowTypes = new Set<string>();
    const stepFlowTypes = new Set<string>();
    for (const slot of slots) {
      for (const ft of slot.reg.flowTypes) flowTypes.add(ft);
      // as Gateway.canServe counts them: an RPC-only slot, or one of a draining node, runs no new Step
      if (slot.reg.kind === 'STEP_AND_RPC' && (slot.state === 'idle' || slot.state === 'busy')) {
        for (const ft of slot.reg.flowTypes) stepFlowTypes.add(ft);
      }
      if (slot.state === 'idle') {
        if (slot.reg.kind === 'STEP_AND_RPC') idleStep++;
        else idleRpc++;
      } else if (slot.state === 'busy') {
        busy++;
      }
    }
    workers.push({
      tenant: first.reg.tenant, app_worker_id: app, flow_types: [...flowTypes], idle_step_slots: idleStep,
      idle_rpc_slots: idleRpc, busy_slots: busy, draining: drainingWorkers.has(workerKey(first.reg.tenant, app)),
      step_flow_types: [...stepFlowTypes],
    });
  }
  const declined: pb.IDeclinedType[] = [];
  // An RPC name goes out as rpcDeclineType(name), as the cache holds it: peers tell the kinds apart.
  for (const k of declines.keys()) {
    const [tenant = '', flowType = '', type = '', appWorkerId = ''] = k.split('\0');
    declined.push({ tenant, flow_type: flowType, type, app_worker_id: appWorkerId });
  }
  return { entries, workers, declined };
}

/** Slots by kind and state, for the slots gauge. */
export function slotCounts(slots: Iterable<Slot>): { kind: string; state: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const slot of slots) {
    const state = slot.state === 'idle' ? 'idle' : 'busy';
    const key = `${slot.reg.kind}\0${state}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, count]) => {
    const [kind = '', state = ''] = k.split('\0');
    return { kind, state, count };
  });
}
