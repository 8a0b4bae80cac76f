/**
 * Outcome streams (DESIGN §8): one `zd:{p}:out` stream per partition, read by
 * consumer groups. Reads and acks go out as one auto-pipelined batch over the
 * partitions; unacked entries idle past `redeliverAfter` are claimed again.
 */
import { Cluster } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { storeUnavailable } from '../errors/store-unavailable';
import { monotonicNow } from '../util/clock';
import { connectionEpoch, waitForReplicas, type RedisClient } from './redis';
import type { Keys } from './keys';
import { sendToKey } from './keyed-command';

/** An outcome as stored (stream entry fields or the done record). */
export interface StoredOutcome {
  outcomeId: string;
  taskId: string;
  tenant: string;
  flowId: string;
  flowType: string;
  stepType: string;
  stepExecutionId: string;
  status: string;
  attempt: number;
  appWorkerId: string;
  output: Buffer;
  error: { message: string; type: string; nonRetryable: boolean } | null;
  finishedAt: number;
  enqueuedAt: number;
}

/** Outcome ids on the wire are "<partition>-<stream id>". */
export function formatOutcomeId(partition: number, streamId: string): string {
  return `${partition}-${streamId}`;
}

/** The largest part of a stream id Redis reads. */
const STREAM_ID_PART_MAX = BigInt('18446744073709551615');

export function parseOutcomeId(id: string, partitions: number): { partition: number; streamId: string } | undefined {
  const m = /^(\d{1,6})-((\d{1,20})-(\d{1,20}))$/.exec(id);
  if (!m) return undefined;
  // Redis refuses a larger part ("Invalid stream ID") in one partition's XACK after the others' have acked.
  if (BigInt(m[3]!) > STREAM_ID_PART_MAX || BigInt(m[4]!) > STREAM_ID_PART_MAX) return undefined;
  const partition = Number(m[1]);
  return partition < partitions ? { partition, streamId: m[2]! } : undefined;
}

/**
 * The consumer groups of an outcome stream, each as XINFO GROUPS reports it
 * (name, pending, last-delivered-id, lag, …); undefined when the stream does
 * not exist. XINFO on a missing key is an error reply, which Redis counts (INFO
 * errorstats) and operators alert on, and a partition has no stream until its
 * first outcome: the periodic trim and backlog count ask only once it exists.
 * `strict`: any other failure of XINFO is thrown, not read as "no groups" (the
 * trim would take that for "nobody needs these" and cut unacked entries).
 */
export async function streamGroups(redis: RedisClient, key: string, strict = false): Promise<Record<string, unknown>[] | undefined> {
  if ((await redis.exists(key)) === 0) return undefined;
  // the stream may go between the two calls (a FLUSHDB, a test's cleanup)
  const groups = (await sendToKey(redis, 'xinfo', 'GROUPS', key).catch((err: Error) => {
    if (strict && !/no such key/i.test(err.message)) throw err;
    return [];
  })) as unknown[][];
  return groups.map((g) => {
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < g.length; i += 2) info[String(g[i])] = g[i + 1];
    return info;
  });
}

export function outcomeFromFields(partition: number, streamId: string, f: Record<string, Buffer>): StoredOutcome {
  const s = (k: string) => f[k]?.toString() ?? '';
  const errMsg = s('errMsg');
  const errType = s('errType');
  return {
    outcomeId: formatOutcomeId(partition, streamId),
    taskId: s('taskId'), tenant: s('tenant'), flowId: s('flowId'), flowType: s('flowType'),
    stepType: s('stepType'), stepExecutionId: s('seid'), status: s('status'), attempt: Number(s('attempt')),
    appWorkerId: s('worker'), output: f.output ?? Buffer.alloc(0),
    error: errMsg || errType ? { message: errMsg, type: errType, nonRetryable: s('errNR') === '1' } : null,
    finishedAt: Number(s('finishedAt')), enqueuedAt: Number(s('enqueuedAt')),
  };
}

/**
 * The fields of a done record before its output, in order (store/lua/includes/outcome.lua).
 * `fetchIdem` is the fetch surface's idempotency key, or for a worker stream's
 * attempt its start nonce behind a \x01 byte (startMark): what lets the same
 * completion, run again, answer as it did the first time.
 */
const DONE_FIELDS = [
  'status', 'outcomeId', 'fetchIdem', 'tenant', 'flowId', 'flowType', 'stepType', 'seid', 'attempt', 'worker',
  'errMsg', 'errType', 'errNR', 'finishedAt', 'enqueuedAt',
] as const;

/** The fields packed in a stream entry's `o` before its output: the done record's but outcomeId and fetchIdem. */
const ENTRY_FIELDS = DONE_FIELDS.filter((f) => f !== 'outcomeId' && f !== 'fetchIdem');

/**
 * Splits a packed record into `out`: each of `names` ends with a 0xff byte
 * (never part of UTF-8); the output is the rest.
 */
function unpack(what: string, b: Buffer, names: readonly string[], out: Record<string, Buffer>): Record<string, Buffer> {
  let o = 0;
  for (const name of names) {
    const end = b.indexOf(0xff, o);
    if (end < 0) throw new Error(`${what}: ends before ${name}`);
    out[name] = b.subarray(o, end);
    o = end + 1;
  }
  out.output = b.subarray(o);
  return out;
}

/**
 * A done record as outcome fields, `taskId` included: the fields of its
 * stream entry plus `outcomeId` (the stream id) and `fetchIdem`.
 */
export function decodeDone(taskId: string, b: Buffer): Record<string, Buffer> {
  return unpack(`done record of ${taskId}`, b, DONE_FIELDS, { taskId: Buffer.from(taskId) });
}

/**
 * An outcome stream entry's fields as outcome fields. The entry holds taskId
 * and `o` (the outcome packed as in the done record); an entry written before
 * it was packed has each field of its own and is read as it is.
 */
export function decodeEntry(fields: Record<string, Buffer>): Record<string, Buffer> {
  const packed = fields.o;
  if (!packed) return fields;
  return unpack(`outcome entry of ${fields.taskId?.toString() ?? '?'}`, packed, ENTRY_FIELDS, { taskId: fields.taskId ?? Buffer.alloc(0) });
}

/**
 * The outcome fields of a task that ended within outcomes.retention, null
 * when there is none. A done hash (the format before the record was one
 * string) is read as it is.
 */
export async function readDone(redis: RedisClient, keys: Keys, partition: number, taskId: string): Promise<Record<string, Buffer> | null> {
  const key = keys.done(partition, taskId);
  let b: Buffer | null;
  try {
    b = await redis.getBuffer(key);
  } catch (err) {
    if (!/^WRONGTYPE/.test((err as Error).message)) throw err;
    const h = await redis.hgetallBuffer(key);
    return Object.keys(h).length === 0 ? null : h;
  }
  return b ? decodeDone(taskId, b) : null;
}

function pairs(list: Buffer[]): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]!.toString()] = list[i + 1]!;
  return out;
}

type Entry = [Buffer, Buffer[] | null];

/**
 * ioredis generates a binary-safe `<command>Buffer` for every command but does
 * not type these two (and `callBuffer` breaks under auto-pipelining).
 */
interface BufferCommands {
  xreadgroupBuffer(...args: (string | number)[]): Promise<unknown>;
  xautoclaimBuffer(...args: (string | number)[]): Promise<unknown>;
}

/** How long a read mark stays: only its write counts, so one key per partition, gone when unused. */
const READ_MARK_TTL_MS = 60_000;

/** XAUTOCLAIM calls one claim of stale outcomes makes per partition, each scanning up to 10× its COUNT. */
const CLAIM_SCANS = 4;
function streamIdsByPartition(ids: { partition: number; streamId: string }[]): Map<number, string[]> {
  const byPartition = new Map<number, string[]>();
  for (const { partition, streamId } of ids) {
    const list = byPartition.get(partition) ?? [];
    list.push(streamId);
    byPartition.set(partition, list);
  }
  return byPartition;
}

/**
 * Idle time that makes an entry stale to any claim: past the longest redeliver_after_ms
 * a call may ask (366 days, api/validation.ts), ten years (XCLAIM IDLE counts back from now).
 */
const LONG_IDLE_MS = 10 * 365 * 24 * 3600 * 1000;
/** (group, partition) pairs whose claim cursor a node remembers. */
const CLAIM_CURSORS = 10_000;
/** How often a node notes a group's reads in Redis (noteRead): far below the 10-minute "active" window. */
const SEEN_EVERY_MS = 10_000;

/** Groups a node remembers having made (ensureGroup); one forgotten is made again, idempotently. */
const GROUPS_READY = 10_000;
/**
 * A consumer that holds no unacked outcome and has not been handed one for this long goes
 * from its group (store/lua/pruneConsumers-1.lua); a read makes it again.
 */
export const CONSUMER_IDLE_MS = 24 * 3600_000;
/** How often the trim of a partition also prunes its groups' consumers. */
const CONSUMER_PRUNE_EVERY_MS = 10 * 60_000;
/**
 * How long a partition whose outcome read found Redis out of reach (on a Redis Cluster, its
 * primary down with no replica taken over yet) is left out of the reads: its outcomes cannot
 * be read meanwhile, and a read asked again next time.
 */
const OUT_OF_REACH_SKIP_MS = 5000;

export class OutcomeStore {
  // Bounded: group names come from clients, and each new one was kept for good.
  private readonly groupsReady = new LRUCache<string, true>({ max: GROUPS_READY });
  /** When this node last noted each group's read in Redis (noteRead). */
  private readonly seenNoted = new LRUCache<string, number>({ max: GROUPS_READY });
  private rotation = 0;
  /**
   * The largest entry the latest read that found any held: how many entries the first
   * round of the next read may ask for within its byte budget (inRounds). 0 until a read
   * has found one: that first round asks for the count (an idle consumer's reads of empty
   * streams stay one command, not one per few partitions).
   */
  private entryBytesHint = 0;
  /**
   * Where each (group, partition)'s last claim stopped in the pending list.
   * XAUTOCLAIM scans a bounded stretch of it per call: started from the head each
   * time, idle entries behind a long run of recently delivered ones were never
   * reached until those were acked.
   */
  private readonly claimCursors = new LRUCache<string, string>({ max: CLAIM_CURSORS });
  /** When the trim last pruned the consumers of each partition's groups. */
  private readonly consumersPrunedAt = new Map<number, number>();
  /** Partitions whose read last failed for Redis out of reach, when and why (a Redis Cluster; acrossPrimaries). */
  private readonly outOfReach = new Map<number, { at: number; err: unknown }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly partitions: number,
  ) {}

  /** Which connections a read of these partitions' streams goes over now (connectionEpoch). */
  connectionEpoch(partitions: readonly number[]): string {
    return connectionEpoch(this.redis, partitions.map((p) => this.keys.out(p)));
  }

  /**
   * WAIT for `replicas` replicas to hold what this store's connection wrote to these
   * partitions' streams: a read's delivery to a consumer (XREADGROUP, XCLAIM), and with
   * it every entry it delivered, written before it on the same primary.
   */
  replicated(partitions: readonly number[], replicas: number, timeoutMs: number): Promise<number> {
    return waitForReplicas(this.redis, partitions.map((p) => this.keys.out(p)), replicas, timeoutMs);
  }

  /**
   * A task's outcome record read on this store's connection, and how many of `replicas` replicas
   * hold it (redis.waitReplicas, for WaitOutcome). The read writes nothing a WAIT counts, so a
   * mark written after it on the same connection, to the same primary (the partition's slot), is
   * waited for: a replica that has the mark has everything the primary wrote before it.
   * `sameConnection` false: the connection changed between the read and the WAIT, and the count
   * says nothing of the read.
   */
  async readDoneConfirmed(partition: number, taskId: string, replicas: number, timeoutMs: number):
  Promise<{ done: Record<string, Buffer> | null; acked: number; sameConnection: boolean }> {
    const mark = this.keys.readMark(partition);
    const keys = [this.keys.done(partition, taskId), mark];
    const was = connectionEpoch(this.redis, keys);
    const done = await readDone(this.redis, this.keys, partition, taskId);
    if (!done) return { done, acked: replicas, sameConnection: true };
    await this.redis.set(mark, '1', 'PX', READ_MARK_TTL_MS);
    const acked = await waitForReplicas(this.redis, [mark], replicas, timeoutMs);
    return { done, acked, sameConnection: connectionEpoch(this.redis, keys) === was };
  }

  /** Registers a group and creates it on every partition stream (from the start of what is kept). */
  async ensureGroup(group: string): Promise<void> {
    if (this.groupsReady.has(group)) return;
    await this.register(group);
    await Promise.all(
      Array.from({ length: this.partitions }, (_, p) =>
        sendToKey(this.redis, 'xgroup', 'CREATE', this.keys.out(p), group, '0', 'MKSTREAM').catch((err: Error) => {
          if (!/BUSYGROUP/.test(err.message)) throw err;
        }),
      ),
    );
    this.groupsReady.set(group, true);
  }

  /** In the registry, and no longer a dropped group. */
  private async register(group: string): Promise<void> {
    // Two commands, not a MULTI: on a Redis Cluster the two keys are in different slots.
    await Promise.all([this.redis.sadd(this.keys.groups(), group), this.redis.srem(this.keys.groupsDropped(), group)]);
  }

  /** Whether an operator dropped the group and no consumer has made it again since. */
  async wasDropped(group: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.groupsDropped(), group)) === 1;
  }

  /**
   * A consumer read the group now: noted in Redis for ListOutcomeGroups and the
   * "active" check of DropOutcomeGroup, at most once per SEEN_EVERY_MS per group and
   * node. Redis 7.0 moves a consumer's idle time only on reads that deliver, so a
   * group long-polled through a quiet spell (or never handed an outcome) looked idle,
   * and a drop without force took it from a live engine, whose acked outcomes came back.
   */
  noteRead(group: string): void {
    const now = Date.now();
    if (now - (this.seenNoted.get(group) ?? -Infinity) < SEEN_EVERY_MS) return;
    this.seenNoted.set(group, now);
    this.redis.hset(this.keys.groupsSeen(), group, String(now)).catch(() => this.seenNoted.delete(group));
  }

  /**
   * Forgets what this node knew of a group an operator dropped (outcome-groups.ts):
   * a consumer that reads it again registers and makes it again.
   */
  forgetGroup(group: string): void {
    this.groupsReady.delete(group);
    this.seenNoted.delete(group);
    for (let p = 0; p < this.partitions; p++) this.claimCursors.delete(`${group}\0${p}`);
  }

  /**
   * New entries for this group, at most `count` in all, across the given
   * partitions. Every entry read is delivered (it enters the group's pending
   * list), so each round asks each partition for its share only, and asks
   * again while some partition filled its share and the budget is not spent.
   */
  readNew(group: string, consumer: string, count: number, partitions: number[], maxBytes = Infinity): Promise<StoredOutcome[]> {
    const one = (p: number, n: number) => this.inGroup(group, p, () =>
      (this.redis as unknown as BufferCommands)
        .xreadgroupBuffer('GROUP', group, consumer, 'COUNT', n, 'STREAMS', this.keys.out(p), '>')
        .then((r) => ((r as [Buffer, Entry[]][] | null) ?? []).flatMap(([, entries]) => entries)));
    // On a Redis Cluster each partition's stream is in a slot of its own: one command per partition.
    if (this.redis instanceof Cluster) return this.acrossPrimaries(true, (failed) => this.inRounds(count, maxBytes, partitions, perPartition(one, failed)));
    return this.inRounds(count, maxBytes, partitions, async (ps, n) => {
      try {
        return await this.readStreams(group, consumer, n, ps);
      } catch (err) {
        // A stream without the group (dropped, or flushed): read alone, each remakes its group.
        if (!/NOGROUP/.test((err as Error).message)) throw err;
        return perPartition(one)(ps, n);
      }
    });
  }

  /**
   * New entries of several partitions' streams in one XREADGROUP (a single Redis
   * holds them all): a waiting engine's read of 64 partitions was 64 commands,
   * several per outcome at a thousand a second. At most `n` from each stream.
   */
  private async readStreams(group: string, consumer: string, n: number, partitions: number[]): Promise<Map<number, Entry[]>> {
    const byKey = new Map(partitions.map((p) => [this.keys.out(p), p]));
    const r = (await (this.redis as unknown as BufferCommands).xreadgroupBuffer(
      'GROUP', group, consumer, 'COUNT', n, 'STREAMS', ...byKey.keys(), ...partitions.map(() => '>'),
    )) as [Buffer, Entry[]][] | null;
    const out = new Map<number, Entry[]>();
    for (const [key, entries] of r ?? []) {
      const p = byKey.get(key.toString());
      if (p !== undefined) out.set(p, entries);
    }
    return out;
  }

  /**
   * Runs a group read of partition `p`'s stream. A group destroyed under this
   * node while a consumer still reads it (an operator dropping what looked like
   * an abandoned group, docs/operations.md) is made again, from the start of
   * what is kept: the consumer is alive, so the group is not abandoned.
   */
  private async inGroup<T>(group: string, p: number, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (!/NOGROUP/.test((err as Error).message)) throw err;
      await this.register(group);
      await sendToKey(this.redis, 'xgroup', 'CREATE', this.keys.out(p), group, '0', 'MKSTREAM').catch((e: Error) => {
        if (!/BUSYGROUP/.test(e.message)) throw e;
      });
      return read();
    }
  }

  /** Entries delivered to the group but unacked for longer than `minIdleMs`, claimed for `consumer`; at most `count`. */
  claimStale(
    group: string, consumer: string, minIdleMs: number, count: number, partitions: number[], maxBytes = Infinity,
  ): Promise<StoredOutcome[]> {
    // Claiming resets an entry's idle time, but to a redeliver_after_ms of a millisecond or two
    // what this call claimed is stale again when its scan wraps to the head or a partition is
    // asked again: each entry goes into the answer once.
    const seen = new Set<string>();
    return this.acrossPrimaries(false, (failed) => this.inRounds(count, maxBytes, partitions, perPartition(async (p, n) => {
      const key = `${group}\0${p}`;
      const claimed: Entry[] = [];
      let cursor = this.claimCursors.get(key) ?? '0-0';
      let fromHead = cursor === '0-0';
      // Across the pending list from where the last claim stopped, a few stretches at most.
      for (let scan = 0; scan < CLAIM_SCANS && claimed.length < n; scan++) {
        const r = (await this.inGroup(group, p, () => (this.redis as unknown as BufferCommands)
          .xautoclaimBuffer(this.keys.out(p), group, consumer, minIdleMs, cursor, 'COUNT', n - claimed.length))) as [Buffer, Entry[]];
        for (const e of r[1] ?? []) {
          const id = `${p}:${e[0].toString()}`;
          if (seen.has(id)) continue;
          seen.add(id);
          claimed.push(e);
        }
        cursor = r[0]?.toString() ?? '0-0';
        if (cursor !== '0-0') continue;
        // The end of the list: once round from its head, or done.
        if (fromHead) break;
        fromHead = true;
      }
      if (cursor === '0-0') this.claimCursors.delete(key);
      else this.claimCursors.set(key, cursor);
      return claimed;
    }, failed)));
  }

  /**
   * A read over the partitions that, on a Redis Cluster, answers what the primaries that
   * answered hold: one that does not (down with no replica taken over yet, a failover under
   * way) failed the read of every other one's outcomes too. With `failEmpty`, nothing found
   * while some partition failed fails the read (new outcomes: the caller must not take the
   * outage for an empty stream); a claim of stale ones answers what it found, and the read
   * of new ones after it says whether the store is there. On one Redis a failure is every
   * partition's: the first fails the read. A partition whose read failed so is left out of
   * the reads for OUT_OF_REACH_SKIP_MS: each read of a primary that is down waits out the
   * client's retries (seconds), and every read of the others waited with it.
   */
  private async acrossPrimaries(
    failEmpty: boolean, read: (failed: PartitionFailures | undefined) => Promise<StoredOutcome[]>,
  ): Promise<StoredOutcome[]> {
    const failed: PartitionFailures | undefined = this.redis instanceof Cluster ? { outOfReach: this.outOfReach } : undefined;
    const out = await read(failed);
    if (failEmpty && out.length === 0 && failed?.first) throw failed.first.err;
    return out;
  }

  /**
   * Reads up to `count` entries, and about `maxBytes` of them, over the partitions in
   * rounds: each round asks every partition it picks for its share, `read(picked, share)`,
   * and the next round asks again those that filled theirs, while the budget is not spent.
   * A read returns whole entries, however large: a round asks for as many as the bytes
   * left hold at the size of the largest seen, in this read or the latest that found any
   * (a call of 1 000 read a thousand 1-MiB outputs to answer four, put the rest back, and
   * read them all again on each call after).
   */
  private async inRounds(
    count: number, maxBytes: number, partitions: number[], read: (picked: number[], share: number) => Promise<Map<number, Entry[]>>,
  ): Promise<StoredOutcome[]> {
    const out: StoredOutcome[] = [];
    let bytes = 0;
    let largest = 0;
    // Start at a different partition each call so a small budget does not always favour the first ones.
    const start = this.rotation++ % Math.max(1, partitions.length);
    // Partitions not read yet this round, and those that filled their share (they may hold more).
    let pending = [...partitions.slice(start), ...partitions.slice(0, start)];
    let full: number[] = [];
    while (out.length < count && bytes < maxBytes && pending.length > 0) {
      const perEntry = largest || this.entryBytesHint;
      const fits = perEntry > 0 ? Math.floor((maxBytes - bytes) / perEntry) : count;
      // One entry at least, however large: else an answer could never carry it.
      if (fits < 1 && out.length > 0) break;
      const budget = Math.min(count - out.length, Math.max(1, fits));
      const share = Math.max(1, Math.floor(budget / pending.length));
      const picked = pending.slice(0, Math.min(pending.length, budget));
      pending = pending.slice(picked.length);
      const replies = await read(picked, share);
      for (const p of picked) {
        const entries = replies.get(p) ?? [];
        for (const [id, fields] of entries) {
          if (!fields) continue;
          let size = 0;
          for (const f of fields) size += f.length;
          bytes += size;
          largest = Math.max(largest, size);
          out.push(outcomeFromFields(p, id.toString(), decodeEntry(pairs(fields))));
        }
        if (entries.length >= share) full.push(p);
      }
      if (pending.length === 0) {
        pending = full;
        full = [];
      }
    }
    if (largest > 0) this.entryBytesHint = largest;
    return out;
  }

  /**
   * Entries read for `consumer` that its answer could not carry: marked idle for
   * long (XCLAIM IDLE, JUSTID so their delivery count stays), so the next claim
   * of stale outcomes takes them, from the head of each list.
   */
  async deliverAgainSoon(group: string, consumer: string, ids: { partition: number; streamId: string }[]): Promise<void> {
    const byPartition = streamIdsByPartition(ids);
    await Promise.all([...byPartition].map(([p, list]) => {
      this.claimCursors.delete(`${group}\0${p}`);
      return this.redis.xclaim(this.keys.out(p), group, consumer, 0, ...list, 'IDLE', LONG_IDLE_MS, 'JUSTID');
    }));
  }

  /**
   * Whether the group exists: in the registry, or on the stream of one of `partitions`
   * (a group made by hand). XACK answers 0 for a group that does not exist, as it does
   * for ids acked already; this tells the two apart.
   */
  async hasGroup(group: string, partitions: number[]): Promise<boolean> {
    if ((await this.redis.sismember(this.keys.groups(), group)) === 1) return true;
    for (const p of new Set(partitions)) {
      if ((await streamGroups(this.redis, this.keys.out(p), true))?.some((g) => String(g.name) === group)) return true;
    }
    return false;
  }

  /** Acks outcome ids (grouped by partition); returns how many were pending and are now acked. */
  async ack(group: string, ids: { partition: number; streamId: string }[]): Promise<number> {
    const byPartition = streamIdsByPartition(ids);
    const counts = await Promise.all(
      [...byPartition].map(([p, list]) => this.redis.xack(this.keys.out(p), group, ...list)),
    );
    return counts.reduce((a, b) => a + Number(b), 0);
  }

  /**
   * Trims a partition's stream below the oldest entry some registered group
   * still needs (its oldest pending entry, else its last delivered one). With
   * no group registered, entries older than `retentionMs` go. Every
   * CONSUMER_PRUNE_EVERY_MS it also deletes the groups' consumers that hold
   * nothing and were handed nothing for `consumerIdleMs`.
   */
  async trim(partition: number, now: number, retentionMs: number, consumerIdleMs = CONSUMER_IDLE_MS): Promise<void> {
    const key = this.keys.out(partition);
    const groups = await streamGroups(this.redis, key, true);
    if (!groups) return; // no outcomes yet: nothing to trim
    let minId: string | undefined;
    if (groups.length === 0) {
      minId = `${Math.max(0, now - retentionMs)}-0`;
    } else {
      for (const info of groups) {
        const name = String(info.name);
        const pending = Number(info.pending ?? 0);
        let need = String(info['last-delivered-id'] ?? '0-0');
        if (pending > 0) {
          const first = (await this.redis.xpending(key, name, '-', '+', 1)) as [string][];
          if (first[0]) need = first[0][0];
        } else {
          need = nextId(need);
        }
        if (minId === undefined || compareIds(need, minId) < 0) minId = need;
      }
    }
    if (minId && minId !== '0-0') await this.redis.xtrim(key, 'MINID', '~', minId);
    if (groups.length > 0 && now - (this.consumersPrunedAt.get(partition) ?? -Infinity) >= CONSUMER_PRUNE_EVERY_MS) {
      this.consumersPrunedAt.set(partition, now);
      for (const info of groups) await this.redis.zdPruneConsumers(key, String(info.name), consumerIdleMs);
    }
  }
}

/** The first error of a read's partitions that failed, and the store's partitions out of reach (acrossPrimaries). */
interface PartitionFailures {
  first?: { err: unknown };
  outOfReach: Map<number, { at: number; err: unknown }>;
}

/**
 * A round that asks each picked partition alone, all at once. With `failed`, a partition
 * whose read fails for Redis being out of reach is left out of the round (and of the rounds
 * after), its error kept there; any other error fails the round.
 */
function perPartition(
  read: (p: number, n: number) => Promise<Entry[]>, failed?: PartitionFailures,
): (picked: number[], share: number) => Promise<Map<number, Entry[]>> {
  if (!failed) return async (picked, share) => new Map(await Promise.all(picked.map(async (p) => [p, await read(p, share)] as const)));
  return async (picked, share) => {
    const now = monotonicNow();
    const asked = picked.filter((p) => {
      const f = failed.outOfReach.get(p);
      if (!f || now - f.at >= OUT_OF_REACH_SKIP_MS) return true;
      failed.first ??= { err: f.err };
      return false;
    });
    const replies = await Promise.allSettled(asked.map((p) => read(p, share)));
    const out = new Map<number, Entry[]>();
    replies.forEach((r, i) => {
      const p = asked[i]!;
      if (r.status === 'fulfilled') {
        out.set(p, r.value);
        failed.outOfReach.delete(p);
      } else if (storeUnavailable(r.reason)) {
        failed.first ??= { err: r.reason };
        failed.outOfReach.set(p, { at: monotonicNow(), err: r.reason });
      } else {
        throw r.reason;
      }
    });
    return out;
  };
}

function nextId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq ?? 0) + 1}`;
}

function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am! - bm! || as! - bs!;
}
