/**
 * Backlog gauges of the partitions this node owns (DESIGN §10): queued Steps
 * per queue, the age of the oldest, and queues no connected worker can serve.
 * A partition joins the entries gauge only once its background count has
 * finished (so it reads low right after a failover); the oldest age comes from
 * the in-memory heads first, which a new owner loads oldest-first, so it is
 * accurate from the first queued task.
 *
 * The same pass looks again for what a lost notice hid: ready entries the
 * heads do not expect, and attempts or flow deadlines the owner's timers were
 * never told of (PartitionOwner.rearmTimers).
 */
import { parseQueueName, type Keys } from '../store/keys';
import { streamGroups } from '../store/outcomes';
import type { RedisClient } from '../store/redis';
import type { Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import type { Dispatcher } from './dispatcher';
import type { PartitionOwner } from './partition';
import { eachApart } from '../util/each-apart';

export interface QueueBacklog {
  tenant: string;
  flowType: string;
  stepType: string;
  entries: number;
  oldestAgeSeconds: number;
}

export interface BacklogSnapshot {
  queues: QueueBacklog[];
  unserved: { no_worker: number; no_supporting_worker: number };
}

interface Counted {
  /** queue name → ready entries and the oldest readyAt ("0" when empty). */
  queues: Map<string, { entries: number; oldest: number }>;
  /** consumer group → outcomes of this partition's stream it has not read yet. */
  lag: Map<string, number>;
}

export class BacklogCounter {
  private readonly counted = new Map<PartitionOwner, Counted>();
  /** The partitions a periodic count is under way for (countAll). */
  private readonly counting = new Set<PartitionOwner>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly owned: () => PartitionOwner[],
    private readonly dispatcher: () => Dispatcher | undefined,
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly everyMs: number,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** The heads resync's restore of one queue: counts and logs refs the owner lost. */
    private readonly restoreQueue: (p: PartitionOwner, name: string) => Promise<number>,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.countAll(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Counts one partition in the background (after it is loaded, and periodically). */
  async count(p: PartitionOwner): Promise<void> {
    try {
      const now = this.clock.now();
      const names = await this.redis.smembers(this.keys.queues(p.partition));
      const rows = await Promise.all(names.map(async (name) => {
        const key = this.keys.queue(p.partition, name);
        const [entries, first] = await Promise.all([
          this.redis.zcount(key, '-inf', now),
          this.redis.zrangebyscore(key, '-inf', now, 'WITHSCORES', 'LIMIT', 0, 1),
        ]);
        return [name, { entries, oldest: first.length === 2 ? Number(first[1]) : 0, oldestId: first[0] }] as const;
      }));
      const lag = await this.groupLag(p.partition);
      await p.rearmTimers();
      // Queues with nothing ready may hold nothing at all: those leave the set of queues.
      const pruned = new Set<string>();
      for (const [name, row] of rows) {
        if (row.entries > 0) continue;
        const dropped = await this.redis.zdPruneQueue(this.keys.queues(p.partition), this.keys.queue(p.partition, name), name);
        if (Number(dropped) === 1 && p.forgetQueue(name)) pruned.add(name);
      }
      if (!p.active) return;
      // The heads hold the queue's oldest ready task (they load oldest first): they say its age from
      // now on, and their next head once it starts. Kept, the oldest counted here read that task's
      // age, still growing, until the next count: a backlog that drained kept showing for 5 s.
      const kept = rows.filter(([name]) => !pruned.has(name)).map(([name, row]) => {
        const inHeads = row.oldestId !== undefined && p.queues.get(name)?.peek()?.taskId === row.oldestId;
        return [name, { entries: row.entries, oldest: inHeads ? 0 : row.oldest }] as const;
      });
      this.counted.set(p, { queues: new Map(kept), lag });
      // Ready entries while the heads hold nothing and expect nothing: a ready
      // notice went missing (its node died right after the enqueue). Look again.
      for (const [name, row] of rows) {
        const q = p.queues.get(name);
        if (row.entries > 0 && (!q || (q.size === 0 && !q.more && !q.loading))) {
          // Entries older than the resync's grace that the owner does not hold were lost: counted and
          // logged as the resync does. The refill below still reads the younger ones, uncounted.
          await this.restoreQueue(p, name);
          if (!p.active) return;
          const heads = q ?? p.queueFor(name);
          heads.more = true;
          p.refillInBackground(heads);
        }
      }
    } catch (err) {
      this.log.warn({ partition: p.partition, err: (err as Error).message }, 'backlog count failed');
    }
  }

  /**
   * Each consumer group's unread entries of the partition's outcome stream (Redis 7 reports `lag`).
   * Redis answers no lag (nil) for a group it cannot count, one set by hand to an id inside the
   * stream, until that group reads to the end; Number(null) read that as 0, caught up, and the lag
   * alert could not fire for it. The stream's length stands in then: past the trim, which keeps what
   * such a group has not read, that is about what it lags by, and never less.
   */
  private async groupLag(partition: number): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const key = this.keys.out(partition);
    let length: number | undefined;
    for (const info of (await streamGroups(this.redis, key)) ?? []) {
      if (info.lag === null || info.lag === undefined) {
        length ??= await this.redis.xlen(key);
        out.set(String(info.name), length);
        continue;
      }
      const lag = Number(info.lag);
      if (Number.isFinite(lag)) out.set(String(info.name), lag);
    }
    return out;
  }

  /** Unread outcomes per consumer group, summed over the partitions this node owns and has counted. */
  consumerLag(): Map<string, number> {
    const total = new Map<string, number>();
    for (const c of this.counted.values()) for (const [g, n] of c.lag) total.set(g, (total.get(g) ?? 0) + n);
    return total;
  }

  /** Counts every owned partition, each on its own (eachApart: one on a primary that stopped answering holds no other). */
  private async countAll(): Promise<void> {
    const owned = new Set(this.owned());
    for (const p of [...this.counted.keys()]) if (!owned.has(p)) this.counted.delete(p);
    await eachApart(owned, this.counting, (p) => this.count(p));
  }

  forget(p: PartitionOwner): void {
    this.counted.delete(p);
  }

  /** The gauges' values now, aggregated over owned partitions. */
  snapshot(): BacklogSnapshot {
    const now = this.clock.now();
    const byQueue = new Map<string, QueueBacklog>();
    for (const p of this.owned()) {
      const counted = this.counted.get(p);
      const names = new Set([...p.queues.keys(), ...(counted?.queues.keys() ?? [])]);
      for (const name of names) {
        const q = p.queues.get(name);
        const c = counted?.queues.get(name);
        const head = q?.peek()?.readyAt ?? 0;
        const oldest = [head, c?.oldest ?? 0].filter((x) => x > 0);
        const { tenant, flowType, stepType } = parseQueueName(name);
        const row = byQueue.get(name) ?? { tenant, flowType, stepType, entries: 0, oldestAgeSeconds: 0 };
        row.entries += c?.entries ?? 0;
        if (oldest.length > 0) row.oldestAgeSeconds = Math.max(row.oldestAgeSeconds, (now - Math.min(...oldest)) / 1000);
        byQueue.set(name, row);
      }
    }
    const unserved = { no_worker: 0, no_supporting_worker: 0 };
    const d = this.dispatcher();
    for (const row of byQueue.values()) {
      if (row.entries === 0 && row.oldestAgeSeconds === 0) continue;
      if (!d || d.canServe(row.tenant, row.flowType, row.stepType) || d.fetchServes(row.tenant, row.flowType, row.stepType)) continue;
      if (d.hasWorker(row.tenant, row.flowType)) unserved.no_supporting_worker++;
      else unserved.no_worker++;
    }
    return { queues: [...byQueue.values()], unserved };
  }
}
