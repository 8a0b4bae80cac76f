/**
 * The dispatcher of a node for its own gateway: a local call, so a single
 * node runs the same matching code as a cluster without a network hop.
 */
import type { Gateway } from '../gateway/gateway';
import type { Dispatcher, OfferRef, OfferResult, Presence } from '../owner/dispatcher';

export class LocalDispatcher implements Dispatcher {
  constructor(
    private readonly nodeId: string,
    private readonly gateway: Gateway,
  ) {}

  reserveSlot(tenant: string, flowType: string, stepType: string, appWorkerId?: string): string | undefined {
    return this.gateway.hasIdleStepSlot(tenant, flowType, stepType, appWorkerId) ? this.nodeId : undefined;
  }

  presence(tenant: string, appWorkerId: string, flowType: string, stepType: string): Presence {
    return this.gateway.presence(tenant, appWorkerId, flowType, stepType);
  }

  canServe(tenant: string, flowType: string, stepType: string): boolean {
    return this.gateway.canServe(tenant, flowType, stepType);
  }

  offer(_nodeId: string, ref: OfferRef): Promise<OfferResult> {
    return this.gateway.offer(ref);
  }
}
