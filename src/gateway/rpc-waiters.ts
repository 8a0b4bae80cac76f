/**
 * RPCs waiting at this node for a slot, FIFO per (tenant, flowType). A freed
 * slot takes the oldest waiter it is eligible for, before any Step.
 */
import type { RpcCall } from './slot';

export class RpcWaiters {
  private readonly byFlow = new Map<string, Set<RpcCall>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(key: string, call: RpcCall): void {
    let set = this.byFlow.get(key);
    if (!set) this.byFlow.set(key, (set = new Set()));
    if (!set.has(call)) {
      set.add(call);
      this.count++;
    }
  }

  has(call: RpcCall): boolean {
    return this.byFlow.get(`${call.tenant}\0${call.flowType}`)?.has(call) ?? false;
  }

  remove(call: RpcCall): void {
    const key = `${call.tenant}\0${call.flowType}`;
    const set = this.byFlow.get(key);
    if (!set?.delete(call)) return;
    this.count--;
    if (set.size === 0) this.byFlow.delete(key);
  }

  /**
   * Offers the waiters of one flow type to `move`, oldest first, until it has taken
   * `max` of them or declines one (it takes a call by running it elsewhere); the
   * taken ones leave. Returns how many it took.
   */
  moveOut(key: string, max: number, eligible: (c: RpcCall) => boolean, move: (c: RpcCall) => boolean): number {
    let moved = 0;
    for (const call of this.byFlow.get(key) ?? []) {
      if (moved >= max) break;
      if (call.settled || !eligible(call)) continue;
      if (!move(call)) break;
      this.remove(call);
      moved++;
    }
    return moved;
  }

  /** Removes and returns every waiter. */
  drain(): RpcCall[] {
    const out: RpcCall[] = [];
    for (const set of this.byFlow.values()) out.push(...set);
    this.byFlow.clear();
    this.count = 0;
    return out;
  }

  /** The waiters of `tenant` whose sticky worker is `appWorkerId`, oldest first per flow type. */
  stickyTo(tenant: string, appWorkerId: string): RpcCall[] {
    const out: RpcCall[] = [];
    if (this.count === 0) return out;
    for (const set of this.byFlow.values()) {
      for (const call of set) if (!call.settled && call.tenant === tenant && call.sticky === appWorkerId) out.push(call);
    }
    return out;
  }

  /** Removes and returns the oldest waiter of these flow types that `eligible` accepts. */
  takeFor(tenant: string, flowTypes: readonly string[], eligible: (c: RpcCall) => boolean): RpcCall | undefined {
    if (this.count === 0) return undefined;
    for (const ft of flowTypes) {
      for (const call of this.byFlow.get(`${tenant}\0${ft}`) ?? []) {
        if (call.settled || !eligible(call)) continue;
        this.remove(call);
        return call;
      }
    }
    return undefined;
  }
}
