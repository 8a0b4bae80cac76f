/**
 * The idle slots of this node by (tenant, flowType): what offers, enqueues and
 * RPCs pick from. A slot is in it while idle and its worker takes new work.
 */
import type { Declines } from './declines';
import type { Slot } from './slot';
import { addTo, flowKey, removeFrom } from './slot-maps';

export class IdleSlots {
  /** Idle Step-and-RPC slots by (tenant, flowType). */
  readonly step = new Map<string, Set<Slot>>();
  /** Idle RPC-only slots by (tenant, flowType). */
  readonly rpc = new Map<string, Set<Slot>>();

  constructor(private readonly declines: Declines) {}

  /** An idle slot becomes one the matching indexes offer work to. */
  add(slot: Slot): void {
    const index = slot.reg.kind === 'STEP_AND_RPC' ? this.step : this.rpc;
    for (const ft of slot.reg.flowTypes) addTo(index, flowKey(slot.reg.tenant, ft), slot);
  }

  remove(slot: Slot): void {
    if (slot.state !== 'idle') return;
    const index = slot.reg.kind === 'STEP_AND_RPC' ? this.step : this.rpc;
    for (const ft of slot.reg.flowTypes) removeFrom(index, flowKey(slot.reg.tenant, ft), slot);
  }

  /** An idle Step slot (of `appWorkerId` when given) whose worker has not declined the type. */
  pick(tenant: string, flowType: string, stepType: string, appWorkerId?: string): Slot | undefined {
    const set = this.step.get(flowKey(tenant, flowType));
    if (!set) return undefined;
    for (const slot of set) {
      if (appWorkerId !== undefined && slot.reg.appWorkerId !== appWorkerId) continue;
      if (this.declines.has(tenant, flowType, stepType, slot.reg.appWorkerId)) continue;
      return slot;
    }
    return undefined;
  }
}
