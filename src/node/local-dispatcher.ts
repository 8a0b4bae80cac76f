/**
 * The dispatcher of a node for its own gateway: a local call, so a single
 * node runs the same matching code as a cluster without a network hop.
 */
import type { Gateway } from '../gateway/gateway';
import type { Dispatcher, OfferRef, OfferResult } from '../owner/dispatcher';

export class LocalDispatcher implements Dispatcher {
  constructor(
    private readonly nodeId: string,
    private readonly gateway: Gateway,
  ) {}

  reserveSlot(tenant: string, flowType: string, stepType: string): string | undefined {
    return this.gateway.hasIdleStepSlot(tenant, flowType, stepType) ? this.nodeId : undefined;
  }

  offer(_nodeId: string, ref: OfferRef): Promise<OfferResult> {
    return this.gateway.offer(ref);
  }
}
