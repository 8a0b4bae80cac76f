/**
 * The dispatcher of a clustered node: this node's own gateway first (no
 * hop), then the peers' advertised capacity, offers over the mesh.
 */
import type { FetchBell } from '../gateway/fetch-bell';
import type { Gateway } from '../gateway/gateway';
import type { Metrics } from '../metrics/registry';
import type { Dispatcher, OfferRef, OfferResult, Presence } from '../owner/dispatcher';
import type { CapacityView } from './capacity-view';
import type { Mesh } from './mesh';
import { queueName } from '../store/keys';

export class ClusterDispatcher implements Dispatcher {
  constructor(
    private readonly nodeId: string,
    private readonly gateway: Gateway,
    private readonly view: CapacityView,
    private readonly mesh: Mesh,
    private readonly fetchBell: FetchBell,
    private readonly metrics?: Metrics,
  ) {}

  reserveSlot(tenant: string, flowType: string, stepType: string, appWorkerId?: string): string | undefined {
    if (this.gateway.hasIdleStepSlot(tenant, flowType, stepType, appWorkerId)) return this.nodeId;
    return this.view.reserve(tenant, flowType, stepType, appWorkerId);
  }

  presence(tenant: string, appWorkerId: string, flowType: string, stepType: string): Presence {
    const local = this.gateway.presence(tenant, appWorkerId, flowType, stepType);
    const remote = this.view.presence(tenant, appWorkerId, flowType, stepType);
    if (local === 'idle' || remote === 'idle') return 'idle';
    return local === 'busy' || remote === 'busy' ? 'busy' : 'absent';
  }

  canServe(tenant: string, flowType: string, stepType: string): boolean {
    return this.gateway.canServe(tenant, flowType, stepType) || this.view.canServe(tenant, flowType, stepType);
  }

  fetchServes(tenant: string, flowType: string, stepType: string): boolean {
    const topic = queueName(tenant, flowType, stepType);
    return this.fetchBell.fetchedLately(topic) || this.view.fetchedAnywhere(topic);
  }

  hasWorker(tenant: string, flowType: string): boolean {
    return this.gateway.hasAvailable(tenant, flowType) || this.view.availableFor(tenant, flowType);
  }

  offer(nodeId: string, ref: OfferRef, epoch: number): Promise<OfferResult> {
    const sent = nodeId === this.nodeId ? this.gateway.offer(ref) : this.mesh.offer(nodeId, ref, epoch);
    return sent.then(
      (r) => {
        this.metrics?.offers.inc({ result: r });
        return r;
      },
      (err: unknown) => {
        this.metrics?.offers.inc({ result: 'error' });
        throw err;
      },
    );
  }
}
