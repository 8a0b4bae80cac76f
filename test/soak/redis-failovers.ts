/**
 * Failovers of a replicated Redis Cluster for the chaos soak (chaos.test.ts with
 * SOAK_REDIS=cluster-replicated): three primaries with one replica each, the
 * nodes on `redis.waitReplicas: 1`. A Redis chaos event fails one primary over
 * to its replica, and the old primary comes back as the new one's replica, so
 * every primary has a replica in sync again before the next event.
 *
 * - graceful (always): `CLUSTER FAILOVER` on the replica. The primary stops its
 *   clients and hands over only once the replica has every write it took, so
 *   nothing acknowledged is lost and every invariant of the soak holds.
 * - forced (SOAK_FORCE_FAILOVERS=1: two events in three): `CLUSTER FAILOVER
 *   FORCE` on the replica while the primary still runs, or the primary killed
 *   with SIGKILL, the replica promoted by `CLUSTER FAILOVER FORCE`, and the
 *   primary started again on its data (it rejoins as a replica and resyncs).
 *   Either comes 50 to 300 ms after the primary's link to its replica was
 *   closed, so the replica lacks what the primary answered meanwhile.
 *   Writes the replica had not got are lost. An enqueue is acknowledged only
 *   once the replica has it (WAIT), and ConsumeOutcomes answers outcomes only
 *   once the replica has them, and with one replica per primary that replica is
 *   the one promoted: so every acknowledged enqueue still gets exactly one
 *   outcome the engine sees, every flow still runs to its end, no delayed Step
 *   starts early, the RPC checks hold and nothing is left behind. What is not replicated before it
 *   is answered may be lost: an attempt's start (the attempt, under the same
 *   number, runs again), its end (the owners' once-a-minute look at running
 *   attempts fails it as worker_lost and
 *   it runs again), a CancelFlow (its Step may complete instead, which the
 *   soak accepts for any flow), a fetch worker's claim, lock extension, Complete, Fail or
 *   Unlock (the task is fetched again while the first lock would still hold, or
 *   after a Complete that was answered OK). Those, and only those, are excused,
 *   and only when a forced failover lies between the two runs (`excusesRerun`,
 *   `excusesFetchTask`).
 * Every wait is bounded (REPAIR_MS); a cluster that does not heal in time fails the run.
 */
import { sendCommand, startEmbeddedRedis, startRedisCluster, type EmbeddedRedis } from '../../src/store/embedded-redis';

/** How long a failover, and the old primary's return as a replica in sync, may take. */
const REPAIR_MS = 60_000;
/** How long a manual failover is given before it is asked again (Redis gives one up after 5 s). */
const ACT_AGAIN_MS = 8_000;
/** A run's report reaches the soak after the write that started it: how much later it may be. */
const REPORT_SLACK_MS = 2_000;

export type FailoverKind = 'graceful' | 'force' | 'kill';

interface ClusterNode { id: string; port: number; master: boolean; masterId: string; failed: boolean; slots: boolean }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class RedisFailovers {
  /** Every server, primaries and replicas, by port. */
  private readonly servers = new Map<number, EmbeddedRedis>();
  /** Forced failovers: from just before the replica was told (or the primary killed) to the old primary's demotion or death. */
  private readonly forced: { start: number; end: number }[] = [];
  readonly counts: Record<FailoverKind, number> = { graceful: 0, force: 0, kill: 0 };
  private readonly firstRun = new Map<string, number>();
  /** What a forced failover excused: reruns of an attempt, and fetch tasks' broken claims. */
  private readonly excused: string[] = [];

  private constructor(private readonly args: string[], private readonly force: boolean) {}

  static async start(args: string[], force: boolean): Promise<RedisFailovers> {
    const f = new RedisFailovers(args, force);
    const cluster = await startRedisCluster({ masters: 3, replicaOf: [0, 1, 2], args });
    for (const s of [...cluster.nodes, ...cluster.replicas]) f.servers.set(s.port, s);
    return f;
  }

  /** `127.0.0.1:<port>` of every server, for `redis.clusterNodes`. */
  seeds(): string[] {
    return [...this.servers.keys()].map((p) => `127.0.0.1:${p}`);
  }

  all(): EmbeddedRedis[] {
    return [...this.servers.values()];
  }

  /** The servers that are primaries now. */
  async primaries(): Promise<EmbeddedRedis[]> {
    return (await this.topology()).filter((n) => n.master && n.slots).map((n) => this.servers.get(n.port)!);
  }

  summary(): string {
    return `${this.counts.graceful} graceful failovers, ${this.counts.force} forced, ${this.counts.kill} primaries killed and taken over; `
      + `${this.excused.length} excused across a forced failover (its lost writes)${this.excused.length ? `: ${this.excused.slice(0, 10).join('; ')}` : ''}`;
  }

  /** One chaos event: a primary, picked by `random`, fails over to its replica, which must then have its own in sync; says which. */
  async failover(random: () => number): Promise<string> {
    const shards = await this.healthy();
    const { primary, replica } = shards[Math.floor(random() * shards.length)]!;
    try {
      return await this.failoverOf(primary, replica, random);
    } catch (err) {
      // What each side of the failover saw, for the report.
      const views = await Promise.all([primary, replica].map(async (port) => `${port}: ${await this.info(port)}\n`
        + `${String(await sendCommand(port, ['CLUSTER', 'NODES']).catch((e: Error) => e.message))}\n${this.servers.get(port)!.output()}`));
      throw new Error(`${(err as Error).message}\n${views.join('\n')}`);
    }
  }

  private async failoverOf(primary: number, replica: number, random: () => number): Promise<string> {
    const kind: FailoverKind = !this.force || random() < 1 / 3 ? 'graceful' : random() < 0.5 ? 'force' : 'kill';
    const p = this.servers.get(primary)!;
    const promoted = async () => /role:master/.test(await this.info(replica));
    // A manual failover that wins no election in 5 s is given up by Redis: it is asked again.
    const promote = (force: boolean) => this.until(`${replica} promoted over ${primary}`, promoted,
      () => this.ok(replica, ['CLUSTER', 'FAILOVER', ...(force ? ['FORCE'] : [])]));
    if (kind === 'graceful') {
      await promote(false);
    } else {
      // The replica falls behind first, as one cut off from its primary for a moment does: the
      // primary's link to it is closed (the replica dials again within a second), and writes the
      // primary answers meanwhile never reach it. The failover drops them.
      const event = { start: Date.now(), end: Infinity };
      this.forced.push(event);
      await sendCommand(primary, ['CLIENT', 'KILL', 'TYPE', 'replica']);
      await sleep(50 + Math.floor(random() * 250));
      if (kind === 'force') {
        await promote(true);
        await this.until(`${primary} demoted`, async () => /role:slave/.test(await this.info(primary)));
        event.end = Date.now();
      }
    }
    if (kind === 'kill') {
      const event = this.forced[this.forced.length - 1]!;
      p.kill('SIGKILL');
      await p.exited();
      event.end = Date.now();
      await promote(true);
    }
    if (kind === 'kill') {
      await sleep(100 + Math.floor(random() * 700));
      this.servers.set(primary, await startEmbeddedRedis({
        dataDir: p.dataDir, port: primary,
        args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000', '--repl-diskless-sync-delay', '0', ...this.args],
      }));
    }
    // The old primary replicates the new one, in sync, before the next event.
    await this.until(`${primary} a replica of ${replica} in sync`, async () => {
      const info = await this.info(primary);
      return /role:slave/.test(info) && new RegExp(`master_port:${replica}\\b`).test(info) && /master_link_status:up/.test(info) && !/master_sync_in_progress:1/.test(info);
    });
    await this.healthy();
    this.counts[kind]++;
    return `${kind === 'graceful' ? 'a graceful failover' : kind === 'force' ? 'a forced failover' : 'a primary killed and taken over'} of ${primary} to ${replica}`;
  }

  /**
   * A stream worker started `run` (task id#attempt) at `at`, by its clock; true when this is a
   * second run of the attempt that a forced failover explains: its first run started before the
   * failover ended, this one after it began (the start the first wrote was lost).
   */
  excusesRerun(run: string, at: number): boolean {
    const first = this.firstRun.get(run);
    if (first === undefined) {
      this.firstRun.set(run, at);
      return false;
    }
    const excused = this.forced.some((e) => first <= e.end + REPORT_SLACK_MS && at >= e.start);
    if (excused) this.excused.push(`attempt ${run} ran again`);
    return excused;
  }

  /** A fetch task whose claims (node times) span a forced failover: what its claims broke may be a write that failover lost. */
  excusesFetchTask(claimTimes: number[], found: string[]): boolean {
    // A worker acting on a claim it never told is the soak's own bookkeeping, not a lost write.
    if (claimTimes.length < 2 || found.some((v) => v.includes('never told'))) return false;
    const first = Math.min(...claimTimes);
    const last = Math.max(...claimTimes);
    const excused = this.forced.some((e) => first <= e.end + REPORT_SLACK_MS && last >= e.start);
    if (excused) this.excused.push(...found);
    return excused;
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((s) => s.stop()));
  }

  /** Every primary with slots has exactly one replica, online on it; waits (bounded) until so. */
  private async healthy(): Promise<{ primary: number; replica: number }[]> {
    let shards: { primary: number; replica: number }[] = [];
    await this.until('three primaries, each with a replica in sync', async () => {
      const nodes = await this.topology();
      const masters = nodes.filter((n) => n.master && n.slots && !n.failed);
      if (masters.length !== 3 || nodes.some((n) => n.failed)) return false;
      shards = [];
      for (const m of masters) {
        const replicas = nodes.filter((n) => !n.master && n.masterId === m.id);
        if (replicas.length !== 1) return false;
        const info = await this.info(m.port);
        if (!new RegExp(`slave\\d+:ip=[^,]+,port=${replicas[0]!.port},state=online`).test(info)) return false;
        shards.push({ primary: m.port, replica: replicas[0]!.port });
      }
      // Every server agrees on who the primaries are.
      for (const port of this.servers.keys()) {
        const view = await this.topology(port);
        const seen = view.filter((n) => n.master && n.slots && !n.failed).map((n) => n.port).sort().join();
        if (seen !== masters.map((n) => n.port).sort().join()) return false;
      }
      return true;
    });
    return shards;
  }

  private async topology(port?: number): Promise<ClusterNode[]> {
    const ports = port !== undefined ? [port] : [...this.servers.keys()];
    for (const p of ports) {
      const r = await sendCommand(p, ['CLUSTER', 'NODES']).catch((e: Error) => e);
      if (typeof r !== 'string') continue;
      return r.trim().split('\n').map((line) => {
        const f = line.split(' ');
        const flags = f[2]!.split(',');
        return {
          id: f[0]!, port: Number(f[1]!.split('@')[0]!.split(':')[1]), master: flags.includes('master'),
          masterId: f[3]!, failed: flags.includes('fail') || flags.includes('fail?') || flags.includes('noaddr'), slots: f.length > 8,
        };
      });
    }
    return [];
  }

  private async info(port: number): Promise<string> {
    return String(await sendCommand(port, ['INFO', 'replication']).catch((e: Error) => e.message));
  }

  private async ok(port: number, cmd: string[]): Promise<void> {
    const r = await sendCommand(port, cmd);
    if (r !== 'OK') throw new Error(`${cmd.join(' ')} on ${port}: ${String(r)}`);
  }

  /** Waits (REPAIR_MS at most) until `check` holds, running `act` first and again every ACT_AGAIN_MS until then. */
  private async until(what: string, check: () => Promise<boolean>, act?: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + REPAIR_MS;
    let actAt = Date.now();
    for (;;) {
      if (act && Date.now() >= actAt) {
        await act();
        actAt = Date.now() + ACT_AGAIN_MS;
      }
      if (await check()) return;
      if (Date.now() > deadline) throw new Error(`the Redis Cluster did not heal within ${REPAIR_MS} ms: ${what}`);
      await sleep(100);
    }
  }
}
