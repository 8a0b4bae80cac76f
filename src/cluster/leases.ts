/**
 * Partition leases (DESIGN §3): `SET zd:{p}:lease <node>:<epoch> NX PX ttl`,
 * renewed every third of the TTL by compare-and-set; the epoch grows on every
 * acquire. The manager works toward a target set: it acquires targets, renews
 * what it holds, and gives up partitions that left the target set.
 * Safety never depends on the lease; it only decides who serves the heads.
 */
import { EventEmitter } from 'node:events';
import type { RedisClient } from '../store/redis';
import type { Keys } from '../store/keys';
import type { Logger } from '../util/logger';
import { monotonicNow } from '../util/clock';

/** How soon a target held by another node is tried again, at the latest. */
const RETRY_MS = 500;

export type UnloadCause = 'lease-lost' | 'membership' | 'shutdown';

export interface HeldLease {
  partition: number;
  epoch: number;
  token: string;
}

export interface LeaseEvents {
  acquired: (lease: HeldLease) => void;
  /** Emitted before the lease is deleted (membership/shutdown) or after it was found lost. */
  unload: (lease: HeldLease, cause: UnloadCause) => void | Promise<void>;
  /** The lease was deleted (membership/shutdown): another node may take it now. */
  released: (lease: HeldLease, cause: UnloadCause) => void;
}

export class LeaseManager extends EventEmitter {
  private readonly held = new Map<number, HeldLease>();
  /** When the lease that refused a target's acquire runs out (monotonicNow() ms), unless its holder renews it. */
  private readonly freeAt = new Map<number, number>();
  private targets = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** stop() or releaseAll() ran: nothing acquired from now on is kept. */
  private stopped = false;
  /** The pass queued behind the running one (tick). */
  private nextTick: Promise<void> | undefined;
  private ticking: Promise<void> | undefined;
  /**
   * Partitions being given up (unload, then the lease deleted), with the release's
   * promise. A release waits up to OFFER_SETTLE_MS for the partition's offers out:
   * the renewal pass must not wait with it, or the gap between renewals grows by
   * that much (at a TTL of 1.5 s, past the whole TTL, and every other lease lapses).
   * A partition in here is not acquired until its release has finished.
   */
  private readonly releasing = new Map<number, Promise<void>>();
  /**
   * Partitions with an acquire or a renewal in flight. On a Redis Cluster a call to a
   * primary that stopped answering may never come back: a pass waits for it at most a
   * renewal period, and sends that partition no second call meanwhile, so the leases
   * on the other primaries are still renewed every third of the TTL.
   */
  private readonly calls = new Map<number, Promise<void>>();
  /**
   * When the last acquire or renewal of each held lease that Redis confirmed was
   * sent (monotonicNow() ms). Redis set the lease's TTL after that, so it lapses no
   * sooner than this + leaseTtl: past that with no renewal answered (Redis down,
   * a primary frozen), the lease may be another node's, and this node stops
   * serving the partition and counting it as owned.
   */
  private readonly confirmedAt = new Map<number, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly nodeId: string,
    private readonly leaseTtlMs: number,
    private readonly log: Logger,
  ) {
    super();
  }

  start(): void {
    this.running = true;
    this.loop();
  }

  /**
   * Arms the next pass: every tick re-arms it when it ends, so a tick run
   * out of turn (setTargets, leaseMoved) moves the next renewal on and, with a target
   * it could not acquire, brings the retry forward. Left to the timer armed before
   * (TTL/3 away when nothing was missing then), a partition whose dead holder's
   * lease ran out meanwhile stayed unowned for up to a third of the TTL more.
   */
  private loop(passStarted = monotonicNow()): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.running) return;
    // Renew every third of the TTL, counted from the start of the pass that just
    // ended (it may have waited a whole period for a call that did not answer);
    // retry missing targets sooner: when the lease that holds one off runs out
    // (its PTTL, as the refused acquire read it), at the latest after RETRY_MS. A lease
    // that ran out while the pass waited for another call (a slow primary) is free now.
    const now = monotonicNow();
    let delay = Math.max(0, this.renewEveryMs - (now - passStarted));
    for (const p of this.targets) {
      if (this.held.has(p)) continue;
      delay = Math.min(delay, RETRY_MS);
      const freeAt = this.freeAt.get(p);
      if (freeAt !== undefined) delay = Math.min(delay, Math.max(0, freeAt - now + 1));
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, delay);
    this.timer.unref();
  }

  private get renewEveryMs(): number {
    return Math.max(5, Math.floor(this.leaseTtlMs / 3));
  }

  /** Sets the partitions this node should own; acts at once. */
  setTargets(targets: Set<number>): Promise<void> {
    this.targets = targets;
    return this.tick();
  }

  /**
   * A peer released partition `p` for us: acquire it now when it is one of our
   * targets, instead of at the next retry (up to 500 ms later). False when it
   * is not a target (our member list may be behind the sender's).
   */
  acquireNow(p: number): boolean {
    if (!this.running || this.stopped || !this.targets.has(p)) return false;
    if (!this.held.has(p) && !this.releasing.has(p)) void this.call(p, () => this.acquire(p));
    return true;
  }

  /**
   * One pass: release what left the targets, renew what is held, acquire what is
   * missing. The next pass waits for this one's renewals and acquires, not for its
   * releases; the promise returned resolves once those releases have finished too.
   */
  tick(): Promise<void> {
    // Stopped (releaseAll, stop): a late caller (a fenced script refused after the give-back,
    // a membership read that answered after leaving) must not take every lease back.
    if (this.stopped) return Promise.resolve();
    // Asked during a pass: one more pass after it, however many ask (a batch of refused
    // scripts asked once each, and each got a full pass of its own).
    if (this.ticking) return (this.nextTick ??= this.ticking.catch(() => undefined).then(() => {
      this.nextTick = undefined;
      return this.tick();
    }));
    const releases: Promise<void>[] = [];
    const started = monotonicNow();
    this.ticking = this.doTick(releases).finally(() => {
      this.ticking = undefined;
      this.loop(started);
    });
    return this.ticking.then(() => Promise.all(releases)).then(() => undefined);
  }

  private async doTick(releases: Promise<void>[]): Promise<void> {
    const work: Promise<void>[] = [];
    for (const lease of [...this.held.values()]) {
      if (!this.targets.has(lease.partition)) releases.push(this.releaseApart(lease, 'membership'));
      // A renewal still unanswered a whole TTL after the last confirmed one: lapsed. A renewal
      // merely sent late (a busy event loop) is not: its answer says whether the lease is still ours.
      else if (this.calls.has(lease.partition) && this.hasLapsed(lease)) work.push(this.lapse(lease));
      else work.push(this.call(lease.partition, () => this.renew(lease)));
    }
    for (const p of this.targets) if (!this.held.has(p) && !this.releasing.has(p)) work.push(this.call(p, () => this.acquire(p)));
    // Bounded: one call that never answers must not hold up the next renewal of the rest.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(work),
      new Promise<void>((resolve) => {
        bound = setTimeout(resolve, this.renewEveryMs);
        bound.unref();
      }),
    ]);
    clearTimeout(bound);
  }

  /** Runs `fn` for partition `p` unless a call for it is still in flight; either way, the call's promise. */
  private call(p: number, fn: () => Promise<void>): Promise<void> {
    const out = this.calls.get(p);
    if (out) return out;
    const done = fn().finally(() => {
      if (this.calls.get(p) === done) this.calls.delete(p);
    });
    this.calls.set(p, done);
    return done;
  }

  /**
   * Releases a lease outside the renewal pass (see `releasing`). Once it has
   * finished, a partition that became a target again meanwhile is acquired at once.
   */
  private releaseApart(lease: HeldLease, cause: UnloadCause): Promise<void> {
    const p = lease.partition;
    const done = this.release(lease, cause).finally(() => {
      if (this.releasing.get(p) === done) this.releasing.delete(p);
      if (this.running && !this.stopped && this.targets.has(p) && !this.held.has(p) && !this.releasing.has(p)) void this.call(p, () => this.acquire(p));
    });
    this.releasing.set(p, done);
    return done;
  }

  private async acquire(p: number): Promise<void> {
    this.freeAt.delete(p);
    const sentAt = monotonicNow();
    try {
      const r = (await this.redis.zdAcquireLease(this.keys.lease(p), this.keys.epoch(p), this.nodeId, this.leaseTtlMs)) as [number, string, number?];
      if (Number(r[0]) !== 1) {
        // Held by another node: its lease runs out within PTTL ms of Redis reading it, so
        // by PTTL ms from the answer at the latest (unless its holder renews it).
        const pttl = Number(r[2] ?? -1);
        if (pttl >= 0) this.freeAt.set(p, monotonicNow() + pttl);
        return;
      }
      if (this.held.has(p)) return;
      const epoch = Number(r[1]);
      const lease = { partition: p, epoch, token: `${this.nodeId}:${epoch}` };
      if (!this.targets.has(p) || this.stopped) {
        // The targets moved on (or the node stopped) while Redis answered: the
        // partition's new owner must not wait out the TTL for a lease nobody serves.
        await this.redis.zdReleaseLease(this.keys.lease(p), lease.token);
        return;
      }
      this.held.set(p, lease);
      this.confirmedAt.set(p, sentAt);
      this.emit('acquired', lease);
    } catch (err) {
      this.log.warn({ partition: p, err: (err as Error).message }, 'lease acquire failed');
    }
  }

  private async renew(lease: HeldLease): Promise<void> {
    const sentAt = monotonicNow();
    try {
      const ok = await this.redis.zdRenewLease(this.keys.lease(lease.partition), lease.token, this.leaseTtlMs);
      if (this.held.get(lease.partition) !== lease) return;
      if (Number(ok) === 1) {
        this.confirmedAt.set(lease.partition, Math.max(sentAt, this.confirmedAt.get(lease.partition) ?? 0));
        return;
      }
      this.forget(lease);
      this.log.warn({ partition: lease.partition, epoch: lease.epoch }, 'partition lease lost');
      await this.emitUnload(lease, 'lease-lost');
    } catch (err) {
      this.log.warn({ partition: lease.partition, err: (err as Error).message }, 'lease renew failed');
      if (this.held.get(lease.partition) === lease && this.hasLapsed(lease)) await this.lapse(lease);
    }
  }

  private hasLapsed(lease: HeldLease): boolean {
    return monotonicNow() - (this.confirmedAt.get(lease.partition) ?? Infinity) >= this.leaseTtlMs;
  }

  /** No renewal answered within leaseTtl: unloaded as lost. A renewal that answers later finds it gone; the next acquire takes it back, under a new epoch, if it is still ours. */
  private async lapse(lease: HeldLease): Promise<void> {
    this.forget(lease);
    this.log.warn({ partition: lease.partition, epoch: lease.epoch, leaseTtlMs: this.leaseTtlMs }, 'partition lease lapsed: no renewal answered within leaseTtl');
    await this.emitUnload(lease, 'lease-lost');
  }

  private forget(lease: HeldLease): void {
    this.held.delete(lease.partition);
    this.confirmedAt.delete(lease.partition);
  }

  private async release(lease: HeldLease, cause: UnloadCause): Promise<void> {
    if (this.held.get(lease.partition) !== lease) return;
    this.forget(lease);
    await this.emitUnload(lease, cause);
    try {
      await this.redis.zdReleaseLease(this.keys.lease(lease.partition), lease.token);
    } catch {
      return; // it lapses at its TTL instead
    }
    this.emit('released', lease, cause);
  }

  private async emitUnload(lease: HeldLease, cause: UnloadCause): Promise<void> {
    await Promise.all(this.listeners('unload').map((l) => (l as LeaseEvents['unload'])(lease, cause)));
  }

  /**
   * Releases every lease (graceful stop). Waits at most leaseTtl: a primary that stopped
   * answering may never answer the give-back, and by then every lease this node held
   * there has run out anyway; the node must still leave.
   */
  async releaseAll(): Promise<void> {
    this.running = false;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    let bound: NodeJS.Timeout | undefined;
    const timeUp = new Promise<void>((resolve) => {
      bound = setTimeout(resolve, this.leaseTtlMs);
      bound.unref();
    });
    const releases = (async () => {
      if (this.ticking) await this.ticking.catch(() => undefined);
      await Promise.all([
        ...[...this.held.values()].map((l) => this.release(l, 'shutdown')),
        // membership releases still waiting for their offers: the node must not go before they end
        ...this.releasing.values(),
        // an acquire still in flight (on a peer's notice, say) gives its lease back once it answers
        // (stopped): the node closes its Redis connection next, and the lease would outlive it
        ...this.calls.values(),
      ]);
    })();
    await Promise.race([releases, timeUp]);
    clearTimeout(bound);
  }

  stop(): void {
    this.running = false;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  holds(p: number): HeldLease | undefined {
    return this.held.get(p);
  }

  heldPartitions(): HeldLease[] {
    return [...this.held.values()];
  }
}
