/**
 * Runs `work` for every item at once, each on its own, skipping an item whose
 * last run has not settled (`inFlight` holds those). For the periodic passes over
 * a node's partitions: on a Redis Cluster they spread over the primaries, and a
 * pass that went one after the other stopped at the first partition of a primary
 * that stopped answering (frozen, cut off), for every partition after it; asked
 * again each pass, such a partition would pile up calls that never answer.
 */
export async function eachApart<T>(items: Iterable<T>, inFlight: Set<T>, work: (item: T) => Promise<void>): Promise<void> {
  const runs: Promise<void>[] = [];
  for (const item of items) {
    if (inFlight.has(item)) continue;
    inFlight.add(item);
    runs.push(work(item).finally(() => inFlight.delete(item)));
  }
  await Promise.all(runs);
}
