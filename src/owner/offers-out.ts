/**
 * Offers out per partition, so that a partition being given up lets them
 * settle before its lease goes (DESIGN §3). A new owner loads the heads from
 * Redis: while an offer of one is still out, it would offer that task a
 * second time. The start's compare-and-set keeps that safe, but the loser's
 * slot is bounced, and across the mesh both offers cost a round trip.
 */
export class OffersOut {
  /** By partition: a counter per partition, since this runs for every offer. */
  private readonly out: number[] = [];
  private readonly waiters = new Map<number, (() => void)[]>();

  sent(partition: number): void {
    this.out[partition] = (this.out[partition] ?? 0) + 1;
  }

  settled(partition: number): void {
    const n = (this.out[partition] ?? 1) - 1;
    this.out[partition] = n;
    if (n > 0) return;
    const waiting = this.waiters.get(partition);
    if (!waiting) return;
    this.waiters.delete(partition);
    for (const wake of waiting) wake();
  }

  count(partition: number): number {
    return this.out[partition] ?? 0;
  }

  /**
   * Resolves true once the partition has no offer out, or false after `maxMs`:
   * a peer that does not answer must not hold a hand-over up for long (the
   * mesh's own offer timeout ends such an offer later).
   */
  settledWithin(partition: number, maxMs: number): Promise<boolean> {
    if (this.count(partition) === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const list = this.waiters.get(partition);
        const i = list?.indexOf(wake) ?? -1;
        if (i >= 0) list!.splice(i, 1);
        if (list?.length === 0) this.waiters.delete(partition);
        resolve(false);
      }, maxMs);
      timer.unref();
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const list = this.waiters.get(partition) ?? [];
      list.push(wake);
      this.waiters.set(partition, list);
    });
  }
}
