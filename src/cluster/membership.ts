/**
 * Membership: each node heartbeats `zd:members` (score = last heartbeat) and
 * keeps its address, boot id and the newest task layout it reads
 * (store/layout.ts) in `zd:node:<id>`. A node is live while its score is
 * younger than cluster.nodeTtl. Listeners hear when the live set changes.
 *
 * Scores are written and judged by Redis's clock (TIME), not by each node's:
 * one node's score read against another's clock moved its liveness by the skew
 * between them, so a node whose clock ran behind by nodeTtl was dead to its
 * peers while it heartbeat, and one whose clock ran ahead outlived its death.
 */
import { EventEmitter } from 'node:events';
import { connectionEpoch, type RedisClient } from '../store/redis';
import type { Keys } from '../store/keys';
import type { Clock } from '../util/clock';
import { within } from '../util/within';
import type { Logger } from '../util/logger';
import { OLDEST_TASK_LAYOUT, TASK_LAYOUT } from '../store/layout';

export interface MemberInfo {
  nodeId: string;
  bootId: string;
  address: string;
  lastHeartbeat: number;
  /** The newest task layout the member reads; OLDEST_TASK_LAYOUT for a node that does not say. */
  taskLayout: number;
}

export interface MembershipOptions {
  nodeId: string;
  bootId: string;
  /** Peer-mesh address others dial. */
  address: string;
  heartbeatMs: number;
  nodeTtlMs: number;
  /** The newest task layout this node reads. @default TASK_LAYOUT (a test seam: an older node says less) */
  taskLayout?: number;
}

/** A TIME reading whose round trip took longer is read again (readRedisTime). */
const TIME_READ_SLOW_MS = 100;
/** How long a leaving node waits for Redis to take its entry out (leave). */
const LEAVE_WITHIN_MS = 1000;

export class Membership extends EventEmitter {
  private members = new Map<string, MemberInfo>();
  private ids: readonly string[] = [];
  private layout = OLDEST_TASK_LAYOUT;
  private timer: NodeJS.Timeout | undefined;
  /** Reads the members again when the oldest score among them turns nodeTtl old (armExpiry). */
  private expiryTimer: NodeJS.Timeout | undefined;
  /** Refreshes started, and the newest one applied: an older read that answers later is not applied. */
  private refreshes = 0;
  private applied = 0;
  private stopped = false;
  /** leave() ran: this node writes no heartbeat again. */
  private left = false;
  /** This boot has written its heartbeat: the member entry is its own to remove. */
  private joined = false;
  /** The newest score this boot has sent: leave() removes the entry only while it is no newer (a later boot's is). */
  private sentScore: number | undefined;
  /** Redis's clock less this node's (ms), as the last TIME read said (readRedisTime). */
  private offset = 0;
  /** Redis time of this node's last heartbeat that landed. */
  private lastBeatAt: number | undefined;
  /** The connection that heartbeat went over (connectionEpoch): another one since means Redis was lost (cutSince). */
  private beatConnection = '';
  /** A heartbeat failed since the last one that landed. */
  private beatFailed = false;
  /** The node key's write in flight (writeNodeInfo). */
  private infoWrite: Promise<string | null> | undefined;
  /**
   * This node's own silence (Redis out of its reach: restarted, failing over, cut off, however
   * briefly; or this process frozen for about nodeTtl), from its last heartbeat before it (Redis
   * time), kept for nodeTtl after its first heartbeat after it. Peers were as silent as it for all
   * it knows (isGone).
   */
  private silence: { from: number } | undefined;
  private silenceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly opts: MembershipOptions,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    super();
  }

  /** The peer-mesh address, once the internal listener knows its port. */
  setAddress(address: string): void {
    this.opts.address = address;
  }

  async start(): Promise<void> {
    this.offset = (await this.readRedisTime()).offset;
    await this.claimId();
    await this.beat();
    this.schedule();
  }

  /**
   * Refuses a node id that another running process heartbeats: two nodes under one
   * id would each fail the other's running attempts as a dead boot's, and take the
   * same leases as "still ours". Another boot of this id that beat within nodeTtl is
   * either this id's crashed predecessor or such a process; a live one beats again
   * within a heartbeat, so its score is watched a little longer than that.
   */
  private async claimId(): Promise<void> {
    const { nodeId, bootId, heartbeatMs, nodeTtlMs } = this.opts;
    const read = async (): Promise<[string | null, string | null]> => {
      const [score, boot] = await Promise.all([this.redis.zscore(this.keys.members(), nodeId), this.redis.hget(this.keys.node(nodeId), 'boot')]);
      return [score, boot];
    };
    const [score, boot] = await read();
    if (score === null || !boot || boot === bootId || Number(score) < this.now() - nodeTtlMs) return;
    const until = Date.now() + heartbeatMs + Math.min(heartbeatMs, 1000);
    while (Date.now() < until && !this.stopped) {
      await new Promise((r) => setTimeout(r, Math.max(10, Math.min(100, heartbeatMs / 4))));
      const [now, other] = await read();
      if (now !== null && now !== score && other && other !== bootId) throw new NodeIdInUseError(nodeId, other);
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.beat()
        .catch((err: Error) => this.log.warn({ err: err.message }, 'membership heartbeat failed'))
        .finally(() => this.schedule());
    }, this.opts.heartbeatMs);
    this.timer.unref();
  }

  /**
   * Now by Redis's clock, read with TIME, and the offset to this node's clock
   * that now() adds until the next read. A reading is dated halfway through its
   * round trip, so it is off by up to half of it: one that took longer than
   * TIME_READ_SLOW_MS (held by a reconnect, a primary that froze and failed
   * over, a busy Redis; a reading held through a failover was 5 s off) is read
   * again, twice at most, and the quickest taken. TIME is read on the member
   * set's primary: the clocks of a few Redis servers, not of every zdmatch
   * node, have to agree.
   */
  private async readRedisTime(): Promise<{ now: number; offset: number }> {
    let best: { rtt: number; offset: number } | undefined;
    for (let i = 0; i < 3 && !(best && best.rtt <= TIME_READ_SLOW_MS); i++) {
      const sent = this.clock.now();
      // Not a keyless TIME: on a Redis Cluster that goes to any primary, and one that stopped
      // answering held the heartbeat while the member set was served.
      const [sec, usec] = await this.redis.zdReadTime(this.keys.members());
      const got = this.clock.now();
      const offset = Number(sec) * 1000 + Math.floor(Number(usec) / 1000) - Math.round((sent + got) / 2);
      if (!best || got - sent < best.rtt) best = { rtt: got - sent, offset };
    }
    return { now: this.clock.now() + best!.offset, offset: best!.offset };
  }

  /** Now by Redis's clock, as this node's clock and the last TIME read say. */
  private now(): number {
    return this.clock.now() + this.offset;
  }

  /**
   * One heartbeat: announce ourselves, then read who is live. Nothing once the node
   * has left: the reads of the members other parts ask for (an offer or an RPC to a
   * peer not read yet, a link that ended) would otherwise write this node back into
   * the members while it shuts down, live to its peers for nodeTtl.
   */
  async beat(): Promise<void> {
    if (this.left) return;
    const { now, offset } = await this.failing(this.readRedisTime());
    // leave() may have sent its removal while TIME was on the wire: writes sent now would land after it.
    if (this.left) return;
    this.offset = offset;
    const { nodeId, bootId, nodeTtlMs } = this.opts;
    const rejoined = this.joined;
    this.sentScore = Math.max(this.sentScore ?? now, now);
    // The node key is written alongside. On a Redis Cluster it may live on another primary than
    // the member set: one that stopped answering must not stop the score (writeNodeInfo).
    const info = this.writeNodeInfo(rejoined);
    const [scoreBefore] = await this.failing(Promise.all([
      // The score this beat replaces: peers judge liveness by it (isGone).
      rejoined ? this.redis.zscore(this.keys.members(), nodeId) : Promise.resolve(null),
      this.redis.zadd(this.keys.members(), now, nodeId),
      // forget members long dead so the set stays small
      this.redis.zremrangebyscore(this.keys.members(), '-inf', now - nodeTtlMs * 6),
    ]));
    // The first one is awaited in full: until it lands, peers cannot tell this boot's attempts from a dead one's.
    const bootBefore = rejoined ? await within(info, this.opts.heartbeatMs).catch(() => undefined) : await this.failing(info);
    this.joined = true;
    // Silent: Redis was lost since the last heartbeat (cutSince), or this node was quiet long enough
    // for peers as silent to look gone (a frozen process). Not by time alone under that: peers come
    // back from one Redis restart up to a reconnect backoff apart, and a process stalled a few
    // heartbeats while connected would open windows for nothing. Quiet is how late this beat came
    // after its schedule, not the gap itself: a beat on time comes a heartbeat and its own calls
    // after the last, and with nodeTtl under two heartbeats that opened a window at nearly every
    // beat, holding a dead peer's attempts back from failing for a heartbeat and more.
    const gap = this.lastBeatAt === undefined ? 0 : now - this.lastBeatAt;
    const late = gap - this.opts.heartbeatMs;
    if (this.cutSince() !== undefined || late >= Math.max(nodeTtlMs - 2 * this.opts.heartbeatMs, nodeTtlMs / 4)) {
      this.silent(this.lastBeatAt!);
    }
    this.lastBeatAt = now;
    this.beatConnection = connectionEpoch(this.redis, [this.keys.members()]);
    this.beatFailed = false;
    if (bootBefore && bootBefore !== bootId) {
      this.log.error({ nodeId, otherBoot: bootBefore }, 'another running node heartbeats this node id: give every node its own cluster.nodeId');
    }
    // The last beat was (nearly) nodeTtl old, or gone: peers may have taken this node for gone
    // meanwhile and failed the attempts its slots run. Near the edge counts too: a peer may have
    // read the score a moment before this beat replaced it.
    const age = scoreBefore === null ? Infinity : now - Number(scoreBefore);
    if (rejoined && (!bootBefore || bootBefore === bootId) && age >= Math.max(nodeTtlMs - this.opts.heartbeatMs, nodeTtlMs / 2)) {
      this.log.warn({ nodeId, lastBeatAgeMs: Number.isFinite(age) ? age : null }, 'this node was silent for about cluster.nodeTtl: peers may have failed its attempts');
      this.emit('returned');
    }
    await this.refresh(now);
  }

  /**
   * Writes this boot's address, boot id and task layout to its node key, and answers the boot id
   * the key held before (read ahead of the write on the same connection: another boot's id there
   * means a second process heartbeats this id, started at the same moment, so claimId could not
   * see it). One write at a time: while one is unanswered (its primary frozen or cut off), the
   * key keeps what it has for nodeTtl × 6, and beats send none.
   */
  private writeNodeInfo(rejoined: boolean): Promise<string | null | undefined> {
    if (this.infoWrite) return Promise.resolve(undefined);
    const { nodeId, bootId, address, nodeTtlMs } = this.opts;
    const nodeKey = this.keys.node(nodeId);
    const write = Promise.all([
      rejoined ? this.redis.hget(nodeKey, 'boot') : Promise.resolve(bootId),
      // The layout is said for this boot: a node id restarted on an older version keeps the
      // field (it never writes it) but not the boot id.
      this.redis.hset(nodeKey, 'address', address, 'boot', bootId, 'taskLayout', `${this.opts.taskLayout ?? TASK_LAYOUT}:${bootId}`),
      this.redis.pexpire(nodeKey, nodeTtlMs * 6),
    ]).then(([boot]) => boot);
    this.infoWrite = write;
    const done = () => {
      if (this.infoWrite === write) this.infoWrite = undefined;
    };
    write.then(done, done);
    return write;
  }

  /** A heartbeat's Redis calls: one that fails marks Redis as lost until the next lands (cutSince). */
  private async failing<T>(calls: Promise<T>): Promise<T> {
    try {
      return await calls;
    } catch (err) {
      this.beatFailed = true;
      throw err;
    }
  }

  /**
   * The Redis time of this node's last heartbeat that landed, if Redis was lost since: the
   * connection it went over closed (or, on a Cluster, the members' primary changed), or a
   * heartbeat failed. A stalled process that stayed connected is never so.
   */
  private cutSince(): number | undefined {
    if (this.lastBeatAt === undefined) return undefined;
    const lost = this.beatFailed || connectionEpoch(this.redis, [this.keys.members()]) !== this.beatConnection;
    return lost ? this.lastBeatAt : undefined;
  }

  private async refresh(now: number): Promise<void> {
    const seq = ++this.refreshes;
    const raw = await this.redis.zrangebyscore(this.keys.members(), now - this.opts.nodeTtlMs, '+inf', 'WITHSCORES');
    const next = new Map<string, MemberInfo>();
    const ids: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) ids.push(raw[i]!);
    const infos = await Promise.all(ids.map((id) => this.readNodeInfo(id)));
    ids.forEach((id, i) => next.set(id, { ...infos[i]!, lastHeartbeat: Number(raw[i * 2 + 1]) }));
    // A heartbeat's read and an expiry check's may overlap: the newer one's members stand.
    if (seq < this.applied) return;
    this.applied = seq;
    const changed = next.size !== this.members.size || [...next.keys()].some((id) => {
      const old = this.members.get(id);
      return !old || old.bootId !== next.get(id)!.bootId;
    });
    this.members = next;
    // Until this node has seen itself, it cannot know that every member reads the newest layout.
    const own = Math.min(this.opts.taskLayout ?? TASK_LAYOUT, TASK_LAYOUT);
    this.layout = next.has(this.opts.nodeId) ? Math.min(own, ...[...next.values()].map((m) => m.taskLayout)) : OLDEST_TASK_LAYOUT;
    const sorted = [...next.keys()].sort();
    // Kept while the members stay the same: routing memoizes partition owners by its identity.
    if (sorted.join('\0') !== this.ids.join('\0')) this.ids = Object.freeze(sorted);
    this.armExpiry();
    if (changed) this.emit('change', this.liveIds());
  }

  /**
   * A member's node key, read within a heartbeat. On a Redis Cluster node keys are spread over
   * the primaries: one that stopped answering held every read of the members, and with it the
   * beat. Unanswered (or failed), the member keeps what was last read of it, or nothing yet.
   */
  private async readNodeInfo(id: string): Promise<Omit<MemberInfo, 'lastHeartbeat'>> {
    const read = this.redis.hmget(this.keys.node(id), 'address', 'boot', 'taskLayout');
    const got = await within(read, this.opts.heartbeatMs).catch(() => undefined);
    if (!got) {
      const known = this.members.get(id);
      return known ?? { nodeId: id, address: '', bootId: '', taskLayout: OLDEST_TASK_LAYOUT };
    }
    const [address, boot, layout] = got;
    return { nodeId: id, address: address ?? '', bootId: boot ?? '', taskLayout: layoutSaid(layout, boot) };
  }

  /**
   * A member is live while its score is younger than nodeTtl (DESIGN §3), and the
   * attempts of a dead one fail within nodeTtl (§6): its death is read when its
   * score turns that old, not at this node's next heartbeat after that (up to
   * cluster.heartbeat later). A live member's next heartbeat, read by our next
   * beat, moves the check on before it fires, unless nodeTtl is close to the
   * heartbeat.
   */
  private armExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    if (this.stopped) return;
    let first = Infinity;
    for (const m of this.members.values()) {
      // Past its score + nodeTtl it no longer matches the live read (score >= now - nodeTtl).
      if (m.nodeId !== this.opts.nodeId) first = Math.min(first, m.lastHeartbeat + this.opts.nodeTtlMs + 1);
    }
    if (!Number.isFinite(first)) return;
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = undefined;
      if (this.stopped) return;
      this.refresh(this.now()).catch((err: Error) => this.log.warn({ err: err.message }, 'membership read failed'));
    }, Math.max(1, first - this.now()));
    this.expiryTimer.unref();
  }

  /**
   * The newest task layout every live member reads (store/layout.ts): what this
   * node writes. OLDEST_TASK_LAYOUT until its first heartbeat has read the
   * members, and while any member is of a version that does not say.
   */
  taskLayout(): number {
    return this.layout;
  }

  /** The live members' ids, sorted; the same array until they change. */
  liveIds(): readonly string[] {
    return this.ids;
  }

  live(): MemberInfo[] {
    return [...this.members.values()];
  }

  /**
   * Whether the node instance that started an attempt is gone, by Redis now and
   * not by the members last read: a node that joined (or restarted) since this
   * node's last heartbeat is live there and not yet here, and may already run
   * attempts. Only a score older than nodeTtl, or another boot, says gone.
   * The boot is read from the node key, which on a Redis Cluster may live on a
   * primary that stopped answering: it is waited for a heartbeat at most, and
   * only where the score does not already tell (a dead node's attempts must not
   * wait for that primary's failover).
   */
  async isGone(nodeId: string, bootId: string): Promise<boolean> {
    if (this.isLive(nodeId, bootId)) return false;
    const bootRead = this.redis.hget(this.keys.node(nodeId), 'boot');
    bootRead.catch(() => undefined);
    const score = await this.redis.zscore(this.keys.members(), nodeId);
    if (score === null) return true;
    const last = Number(score);
    if (!this.givenTime(last)) return true;
    // Live, or given time to beat again: only another boot of the id says gone. Unanswered, the
    // instance is not known gone, and the next check asks again.
    const boot = await within(bootRead, this.opts.heartbeatMs).catch(() => undefined);
    return boot !== undefined && boot !== bootId;
  }

  /** Whether a member whose score is `last` may still beat: it is younger than nodeTtl, or this node's own silence gives it time. */
  private givenTime(last: number): boolean {
    const { nodeTtlMs } = this.opts;
    if (last >= this.now() - nodeTtlMs) return true;
    // A peer live when this node's own silence began was silent no longer than this node: Redis out
    // of every node's reach (a restart, a failover) says nothing of its death. It has nodeTtl from the
    // silence's end to beat again; before, the node that reconnected first failed the attempts its
    // peers' workers still ran, as worker_lost.
    if (this.silence && last >= this.silence.from - nodeTtlMs) return true;
    // Redis lost, and this node's heartbeat not back yet: a read of the members held across the
    // reconnect (the expiry check's) may land first and drop peers as silent as this node.
    const cut = this.cutSince();
    return cut !== undefined && last >= cut - nodeTtlMs;
  }

  /**
   * This node's heartbeats reached Redis again after a silence: every peer's score is as old as its
   * own, and a peer that was live when the silence began is not taken for gone until nodeTtl after
   * it ended (isGone). Then the attempts of those that did not come back are swept ('silenceOver').
   */
  private silent(from: number): void {
    this.silence = { from };
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => {
      this.silenceTimer = undefined;
      this.silence = undefined;
      if (!this.stopped) this.emit('silenceOver');
    }, this.opts.nodeTtlMs + 1);
    this.silenceTimer.unref();
  }

  /** Whether the node instance (id + boot) that started an attempt still runs, by the members last read. */
  isLive(nodeId: string, bootId: string): boolean {
    const m = this.members.get(nodeId);
    return m !== undefined && m.bootId === bootId;
  }

  get(nodeId: string): MemberInfo | undefined {
    return this.members.get(nodeId);
  }

  /**
   * Leaves the member set at once (graceful stop), so peers reassign without waiting nodeTtl.
   * Waits for Redis at most LEAVE_WITHIN_MS: one that stopped answering (frozen, its network
   * black-holing) held the stop here for good, and a CLI node was forced out past drain.timeout
   * with its servers never shut. Unanswered, the entry goes at nodeTtl; the removal sent still lands
   * if Redis reads it, and then takes nothing a later boot of this node id has written meanwhile.
   */
  async leave(): Promise<void> {
    this.stopped = true;
    this.left = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    // A boot refused its id (claimId) leaves the entry of the process that holds it alone.
    if (!this.joined || this.sentScore === undefined) return;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      this.redis.zdRemoveMember(this.keys.members(), this.opts.nodeId, this.sentScore).catch(() => undefined),
      new Promise<void>((resolve) => {
        bound = setTimeout(resolve, LEAVE_WITHIN_MS);
        bound.unref();
      }),
    ]);
    clearTimeout(bound);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
  }
}

/** The layout a member's `taskLayout` field ("<layout>:<boot id>") says for its current boot. */
function layoutSaid(field: string | null | undefined, boot: string | null | undefined): number {
  const m = field ? /^(\d{1,4}):(.*)$/.exec(field) : null;
  if (!m || !boot || m[2] !== boot) return OLDEST_TASK_LAYOUT;
  return Math.max(OLDEST_TASK_LAYOUT, Number(m[1]));
}

/** Another running node heartbeats under this node id (cluster.nodeId). */
export class NodeIdInUseError extends Error {
  constructor(readonly nodeId: string, readonly otherBoot: string) {
    super(`config cluster.nodeId: ${nodeId} is in use by another running node (boot ${otherBoot}): give every node its own id, or leave cluster.nodeId empty`);
    this.name = 'NodeIdInUseError';
  }
}
