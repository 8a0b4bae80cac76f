/**
 * The outcome consumer groups as operators see them: registered in
 * `zd:groups`, made on every partition's outcome stream. Trimming waits for
 * every group (outcomes.ts trim), so a group nobody reads any more keeps the
 * streams growing until an operator drops it (docs/operations.md).
 */
import type { Keys } from './keys';
import type { RedisClient } from './redis';
import { streamGroups } from './outcomes';
import { sendToKey } from './keyed-command';

/**
 * The Redis consumer group of a (tenant, group) pair: a tenant's groups live
 * in their own namespace (":" never occurs in names), so two tenants never
 * share a group and an all-tenants group never shares one with a tenant.
 */
export function outcomeGroupKey(tenant: string, group: string): string {
  return tenant ? `t:${tenant}:${group}` : group;
}

/** The (tenant, group) pair of a Redis consumer group; tenant "" for a group over every tenant. */
export function splitOutcomeGroupKey(name: string): { tenant: string; group: string } {
  const m = /^t:([^:]+):(.*)$/.exec(name);
  return m ? { tenant: m[1]!, group: m[2]! } : { tenant: '', group: name };
}

export interface OutcomeGroupInfo {
  /** The Redis consumer group (`t:<tenant>:<group>` for a tenant's own). */
  name: string;
  /** Outcomes not yet delivered to the group, summed over partitions; undefined when Redis could not tell for some partition. */
  lag: number | undefined;
  /** Delivered to a consumer, not acked. */
  pending: number;
  /** Distinct consumer names over all partitions. */
  consumers: number;
  /** Since a consumer last read or claimed from the group on any partition, ms; undefined when it never had one. */
  idleMs: number | undefined;
  /** Partitions whose stream has the group. */
  partitions: number;
  /** In the registry (a group on the streams but not in it was made by hand, or by a version before the registry). */
  registered: boolean;
}

export interface DroppedGroup {
  /** Partitions whose stream held the group. */
  partitions: number;
  /** Outcomes it had delivered and not acked: nobody redelivers them now. */
  pending: number;
  /** It was in the registry. */
  registered: boolean;
}

interface PartitionGroup {
  lag: number | undefined;
  pending: number;
  consumers: { name: string; idle: number }[];
}

/** What each partition's stream holds of each group (streams with no outcome yet have none). */
async function partitionGroups(redis: RedisClient, keys: Keys, partitions: number): Promise<Map<string, PartitionGroup[]>> {
  const byGroup = new Map<string, PartitionGroup[]>();
  await Promise.all(Array.from({ length: partitions }, async (_, p) => {
    const key = keys.out(p);
    // A read that fails is no "no consumers": a group read a moment ago would look idle, and
    // DropOutcomeGroup without force would drop it. Only a group or stream gone meanwhile is empty.
    for (const info of (await streamGroups(redis, key, true)) ?? []) {
      const name = String(info.name);
      const lag = info.lag === null || info.lag === undefined ? undefined : Number(info.lag);
      const consumers = ((await sendToKey(redis, 'xinfo', 'CONSUMERS', key, name).catch((err: Error) => {
        if (/NOGROUP|no such key/i.test(err.message)) return [];
        throw err;
      })) as unknown[][]).map((c) => {
        const f: Record<string, unknown> = {};
        for (let i = 0; i + 1 < c.length; i += 2) f[String(c[i])] = c[i + 1];
        return { name: String(f.name), idle: Number(f.idle ?? 0) };
      });
      const list = byGroup.get(name) ?? [];
      list.push({ lag, pending: Number(info.pending ?? 0), consumers });
      byGroup.set(name, list);
    }
  }));
  return byGroup;
}

/** Every group in the registry or on some partition's stream, by name. */
export async function describeOutcomeGroups(redis: RedisClient, keys: Keys, partitions: number, now = Date.now()): Promise<OutcomeGroupInfo[]> {
  const [registry, byGroup, seen] = await Promise.all([
    redis.smembers(keys.groups()), partitionGroups(redis, keys, partitions), redis.hgetall(keys.groupsSeen()),
  ]);
  const registered = new Set(registry);
  const names = [...new Set([...registry, ...byGroup.keys()])].sort();
  return names.map((name) => {
    const parts = byGroup.get(name) ?? [];
    const consumers = new Set<string>();
    let idleMs: number | undefined;
    let lag: number | undefined = 0;
    let pending = 0;
    for (const g of parts) {
      lag = lag === undefined || g.lag === undefined ? undefined : lag + g.lag;
      pending += g.pending;
      for (const c of g.consumers) {
        consumers.add(c.name);
        idleMs = idleMs === undefined ? c.idle : Math.min(idleMs, c.idle);
      }
    }
    // The node's own note of the last read, which an empty read moves too (OutcomeStore.noteRead).
    const seenAt = Number(seen[name]);
    if (Number.isFinite(seenAt) && seenAt > 0) idleMs = Math.min(idleMs ?? Infinity, Math.max(0, now - seenAt));
    return { name, lag, pending, consumers: consumers.size, idleMs, partitions: parts.length, registered: registered.has(name) };
  });
}

/**
 * Destroys the group `info` describes (describeOutcomeGroups) on every
 * partition's stream, takes it out of the registry and notes it dropped; undefined when neither
 * held it any more (another drop came first). A consumer still reading it
 * makes it again on its next read (outcomes.ts inGroup).
 */
export async function dropOutcomeGroup(redis: RedisClient, keys: Keys, partitions: number, info: OutcomeGroupInfo): Promise<DroppedGroup | undefined> {
  const destroyed = await Promise.all(Array.from({ length: partitions }, (_, p) =>
    sendToKey(redis, 'xgroup', 'DESTROY', keys.out(p), info.name).catch((err: Error) => {
      // no stream there yet: nothing to destroy
      if (/no such key|requires the key to exist/i.test(err.message)) return 0;
      throw err;
    })));
  const streams = destroyed.reduce<number>((a, b) => a + Number(b), 0);
  const removed = await redis.srem(keys.groups(), info.name);
  await redis.hdel(keys.groupsSeen(), info.name);
  if (streams === 0 && removed === 0) return undefined;
  // A consumer that still reads it acks what it was handed before: those acks are no typo (ConsumeOutcomes).
  await redis.sadd(keys.groupsDropped(), info.name);
  return { partitions: streams, pending: info.pending, registered: removed > 0 };
}
