/**
 * Mesh handlers of a node that serves nothing: offers find no slot, notices are
 * dropped, and the calls a test does not expect reject. Tests spread them and
 * replace the handlers they watch.
 */
import type { MeshHandlers } from '../../src/cluster/mesh';

type Snapshot = ReturnType<MeshHandlers['capacitySnapshot']>;

export function inertMeshHandlers(snapshot: Snapshot = { entries: [], workers: [], declined: [] }): MeshHandlers {
  return {
    offer: () => Promise.resolve('no-slot'),
    capacity: () => undefined,
    doorbell: () => undefined,
    cancelAttempts: () => undefined,
    heldAttempts: () => ({ bootId: 'not used', held: [] }),
    invokeRpc: () => Promise.reject(new Error('not used')),
    capacitySnapshot: () => snapshot,
  };
}
