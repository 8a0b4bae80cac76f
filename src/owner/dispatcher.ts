/**
 * Where the owner sends offers: the capacity view of the cluster and the
 * channel to each node's gateway. A single node implements it with local
 * calls; the peer mesh implements it across nodes.
 */
export type OfferResult = 'taken' | 'no-slot' | 'gone';

export interface OfferRef {
  partition: number;
  taskId: string;
  /** 0 = whichever attempt is queued. */
  attempt: number;
  tenant: string;
  flowType: string;
  stepType: string;
  readyAt: number;
}

export interface Dispatcher {
  /**
   * A node that (as far as this owner knows) has an idle Step slot for the
   * flow type, with that slot counted as promised; undefined when none.
   */
  reserveSlot(tenant: string, flowType: string, stepType: string): string | undefined;
  /** Offers a task to that node's gateway. */
  offer(nodeId: string, ref: OfferRef, epoch: number): Promise<OfferResult>;
}
