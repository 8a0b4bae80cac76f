/**
 * The periodic heads resync (matching.headsResyncInterval): compares each
 * owned queue's ready entries in Redis with what the owner holds in memory
 * and restores any the owner lost. It only catches bugs: every restore is
 * counted (dexzd_matching_heads_restored_refs_total) and logged at WARN, also
 * when the 5-s backlog count (backlog.ts) finds the loss first and calls
 * restoreQueue: it used to refill the queue silently, and the resync then
 * found nothing to count.
 */
import type { Keys } from '../store/keys';
import type { RedisClient } from '../store/redis';
import type { Clock } from '../util/clock';
import { eachApart } from '../util/each-apart';
import type { Logger } from '../util/logger';
import type { PartitionOwner } from './partition';

export interface ResyncHooks {
  restored(n: number): void;
  incomplete(): void;
}

/** Entries per queue one scan reads; a queue with more ready entries is an incomplete scan. */
const SCAN_LIMIT = 5000;

export class HeadsResync {
  private timer: NodeJS.Timeout | undefined;
  /** Partitions whose last scan has not settled. */
  private readonly scanning = new Set<number>();

  constructor(
    private readonly owned: () => PartitionOwner[],
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly hooks: ResyncHooks,
    private readonly intervalMs: number,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * One pass over every owned partition, each on its own (eachApart: on a Redis
   * Cluster, a partition on a primary that stopped answering holds no other, and
   * is not scanned again while its last scan is out); returns how many refs were
   * restored.
   */
  async runOnce(): Promise<number> {
    let restored = 0;
    const active = new Map(this.owned().filter((p) => p.active).map((p) => [p.partition, p]));
    await eachApart(active.keys(), this.scanning, async (partition) => {
      const p = active.get(partition)!;
      try {
        const names = await this.redis.smembers(this.keys.queues(partition));
        for (const name of names) restored += await this.scanQueue(p, name);
      } catch (err) {
        this.hooks.incomplete();
        this.log.warn({ partition, err: (err as Error).message }, 'heads resync scan did not finish');
      }
    });
    return restored;
  }

  /**
   * Restores the ready entries of one queue that the owner does not hold (counted, logged);
   * returns how many. For the backlog count, which found ready entries behind empty heads.
   */
  async restoreQueue(p: PartitionOwner, name: string): Promise<number> {
    try {
      return await this.scanQueue(p, name);
    } catch (err) {
      this.hooks.incomplete();
      this.log.warn({ partition: p.partition, queue: name, err: (err as Error).message }, 'heads resync scan did not finish');
      return 0;
    }
  }

  private async scanQueue(p: PartitionOwner, name: string): Promise<number> {
    const q = p.queueFor(name);
    if (q.more || q.loading) return 0; // a refill will read Redis anyway
    // Entries younger than this may still be on their way in (a doorbell in flight).
    const grace = Math.min(2000, Math.max(50, Math.floor(this.intervalMs / 2)));
    const ids = await this.redis.zrangebyscore(this.keys.queue(p.partition, name), '-inf', this.clock.now() - grace, 'WITHSCORES', 'LIMIT', 0, SCAN_LIMIT);
    if (ids.length / 2 >= SCAN_LIMIT) this.hooks.incomplete();
    const unheld: string[] = [];
    for (let i = 0; i + 1 < ids.length; i += 2) if (!q.has(ids[i]!)) unheld.push(ids[i]!);
    if (unheld.length === 0) return 0;
    // A task a peer's slot gave back (a decline, a stop without output) is back in its queue at its
    // old ready time, and the peer's notice of it may still be on its way: counted at once, it rang
    // the "should stay 0" alert with nothing lost. Looked at again after the grace, it is held by then.
    await new Promise((resolve) => setTimeout(resolve, grace).unref());
    if (q.more || q.loading) return 0;
    const scores = await this.redis.zmscore(this.keys.queue(p.partition, name), ...unheld);
    let restored = 0;
    for (const [i, taskId] of unheld.entries()) {
      const score = scores[i];
      if (score === null || score === undefined || q.has(taskId) || !p.active) continue;
      this.log.warn({ partition: p.partition, queue: name, taskId }, 'periodic Heads restored a queued task that matching had lost');
      restored++;
      p.taskReady(name, taskId, Number(score));
    }
    if (restored > 0) this.hooks.restored(restored);
    return restored;
  }
}
