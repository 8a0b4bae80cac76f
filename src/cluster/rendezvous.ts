/**
 * Rendezvous (highest-random-weight) hashing: every node computes the same
 * partition → node map from the same member list, and a join or leave moves
 * only the partitions that must move.
 */
import { createHash } from 'node:crypto';

function weight(partition: number, nodeId: string): number {
  return createHash('sha1').update(`${partition}\0${nodeId}`).digest().readUInt32BE(0);
}

export function ownerOf(partition: number, nodeIds: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const id of nodeIds) {
    const w = weight(partition, id);
    if (w > bestWeight || (w === bestWeight && best !== undefined && id < best)) {
      best = id;
      bestWeight = w;
    }
  }
  return best;
}

/** The partitions `nodeId` should own given the live members. */
export function targetPartitions(nodeId: string, nodeIds: readonly string[], partitions: number): Set<number> {
  const out = new Set<number>();
  for (let p = 0; p < partitions; p++) if (ownerOf(p, nodeIds) === nodeId) out.add(p);
  return out;
}
