/**
 * The types app workers declined as unknown (DESIGN §4): a Step type, or
 * rpcDeclineType(name) for an RPC. A declined type is not offered to that
 * worker; the decline drops when every stream of the worker is gone.
 */
import { LRUCache } from 'lru-cache';
import type { SlotRegistration } from './slot';
import { workerKey } from './slot-maps';

export class Declines {
  /** (tenant, flowType, type, appWorkerId) a worker declined as unknown. */
  private readonly declined: LRUCache<string, true>;
  /**
   * Declines the LRU pushed out, by app worker (tenant\0id): still not offered
   * to that worker until it completes a Step (DESIGN §4), so an eviction does
   * not bounce the type straight back to a worker that just said it lacks it.
   */
  private readonly evicted = new Map<string, Set<string>>();

  constructor(entries: number) {
    this.declined = new LRUCache({
      max: entries,
      dispose: (_v, key, reason) => {
        if (reason !== 'evict') return;
        const [tenant = '', , , appWorkerId = ''] = key.split('\0');
        const wk = workerKey(tenant, appWorkerId);
        let set = this.evicted.get(wk);
        if (!set) this.evicted.set(wk, (set = new Set()));
        // Bounded like the cache itself: past it the oldest is offered again.
        if (set.size >= entries) set.delete(set.values().next().value as string);
        set.add(key);
      },
    });
  }

  /** The worker said it lacks the type. */
  add(tenant: string, flowType: string, type: string, appWorkerId: string): void {
    this.declined.set(declineKey(tenant, flowType, type, appWorkerId), true);
  }

  has(tenant: string, flowType: string, type: string, appWorkerId: string): boolean {
    if (this.declined.size === 0 && this.evicted.size === 0) return false;
    const key = declineKey(tenant, flowType, type, appWorkerId);
    return this.declined.has(key) || (this.evicted.get(workerKey(tenant, appWorkerId))?.has(key) ?? false);
  }

  /** The worker completed a Step: types evicted from the cache may go to it again. Whether it had any. */
  liftEvicted(tenant: string, appWorkerId: string): boolean {
    return this.evicted.delete(workerKey(tenant, appWorkerId));
  }

  /** Every stream of the worker is gone: its declines drop (DESIGN §4). */
  forget(reg: SlotRegistration): void {
    this.evicted.delete(workerKey(reg.tenant, reg.appWorkerId));
    if (this.declined.size === 0) return;
    const suffix = `\0${reg.appWorkerId}`;
    for (const k of this.declined.keys()) if (k.startsWith(`${reg.tenant}\0`) && k.endsWith(suffix)) this.declined.delete(k);
  }

  /** Every decline in force, once (a type declined again after its eviction is in both), as declineKey. */
  keys(): Set<string> {
    const keys = new Set(this.declined.keys());
    for (const set of this.evicted.values()) for (const k of set) keys.add(k);
    return keys;
  }
}

/** A decline key: (tenant, flowType, type, appWorkerId) joined by \0. */
function declineKey(tenant: string, flowType: string, type: string, appWorkerId: string): string {
  return `${tenant}\0${flowType}\0${type}\0${appWorkerId}`;
}
