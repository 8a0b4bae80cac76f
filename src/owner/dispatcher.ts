/**
 * Where the owner sends offers: the capacity view of the cluster and the
 * channel to each node's gateway. A single node implements it with local
 * calls; the peer mesh implements it across nodes.
 */
export type OfferResult = 'taken' | 'no-slot' | 'gone';

/** Which matching phase placed the task (DESIGN §4); it labels dispatch latency. */
export type DispatchPath = 'sticky' | 'sync' | 'queued';

export interface OfferRef {
  partition: number;
  taskId: string;
  /** 0 = whichever attempt is queued. */
  attempt: number;
  tenant: string;
  flowType: string;
  stepType: string;
  readyAt: number;
  path: DispatchPath;
  /** Only a slot of this app worker may take it (sticky phase). */
  appWorkerId?: string;
}

/** How an app worker stands for a Step type: an idle slot, only busy slots, or none usable. */
export type Presence = 'idle' | 'busy' | 'absent';

export interface Dispatcher {
  /**
   * A node that (as far as this owner knows) has an idle Step slot for the
   * type — of `appWorkerId` when given — with that slot counted as promised;
   * undefined when none.
   */
  reserveSlot(tenant: string, flowType: string, stepType: string, appWorkerId?: string): string | undefined;
  /** Whether an app worker is connected for the type: absent when it has no stream, drains, or declined the type. */
  presence(tenant: string, appWorkerId: string, flowType: string, stepType: string): Presence;
  /** Whether some connected worker (idle or busy) can run the type. */
  canServe(tenant: string, flowType: string, stepType: string): boolean;
  /** Whether fetch-and-lock workers asked for the queue's topic lately, here or at a peer. */
  fetchServes(tenant: string, flowType: string, stepType: string): boolean;
  /** Whether any worker of the flow type that takes new work (not stopping) is connected anywhere, even one that declined the type. */
  hasWorker(tenant: string, flowType: string): boolean;
  /** Offers a task to that node's gateway. */
  offer(nodeId: string, ref: OfferRef, epoch: number): Promise<OfferResult>;
}
