/**
 * Freezes of the chaos soak (chaos.test.ts): a process that stops answering for
 * a while and then resumes as if nothing had happened (a long GC pause, a VM
 * stall, a container throttled to zero), sent SIGSTOP and, later, SIGCONT. It
 * runs beside the kills, on its own schedule and its own seeded dice:
 *
 * - a node frozen for 100 ms to twice `cluster.leaseTtl` (half the spans shorter
 *   than the lease, half longer): past the lease its peers take its partitions
 *   and fail its workers' attempts, and it resumes with timers due and writes in
 *   flight, believing it still owns them. DESIGN §3: the lease epoch in the owner's
 *   scripts refuses that work, and the start script lets one offer win;
 * - Redis (the redis-server, or one Cluster primary) frozen for 100 ms to 3 s:
 *   every node's calls stall and its heartbeats lapse, none fails, then all land;
 * - a worker process (stream or fetch) frozen for 100 ms to 3 s: its attempts
 *   fail on their method timeout and run again elsewhere, its fetch locks lapse,
 *   and what it sends once resumed is refused (DESIGN §6), never recorded.
 *
 * A frozen process is always resumed: each freeze sends SIGCONT in a `finally`,
 * `stop()` waits for the one under way, and `halt()` (for afterAll) resumes
 * every process still frozen at once. Freezes draw from dice of their own, not the
 * kills'; SOAK_FREEZES=0 leaves them out.
 */
import type { Outcome } from '../../src';
import { ChaosSchedule } from './chaos-schedule';

type Signal = 'SIGSTOP' | 'SIGCONT';
/** A process that can be frozen: a node, a redis-server or a worker process. */
export interface Freezable {
  kill(signal: Signal): unknown;
}

export interface FreezeTargets {
  /** The node processes now (undefined while one is down). */
  nodes: () => ({ process: Freezable } | undefined)[];
  /** The redis-servers now. */
  redis: () => Freezable[];
  /** The worker processes now, stream and fetch. */
  workers: () => (Freezable | undefined)[];
}

export interface FreezesOptions {
  random: () => number;
  /** The nodes' cluster.leaseTtl. */
  leaseTtlMs: number;
  /** No freeze starts after this (epoch ms). */
  until: number;
}

const MIN_MS = 100;
const MAX_REDIS_MS = 3000;
const MAX_WORKER_MS = 3000;

interface Span { kind: 'node' | 'redis' | 'worker'; index: number; from: number; to: number }

export class Freezes {
  private readonly spans: Span[] = [];
  private readonly frozen = new Set<Freezable>();
  private readonly schedule: ChaosSchedule;

  constructor(private readonly opts: FreezesOptions) {
    this.schedule = new ChaosSchedule(opts.random, opts.until);
  }

  start(targets: FreezeTargets): void {
    const { random } = this.opts;
    this.schedule.start(async () => {
      const dice = random();
      if (dice < 0.5) {
        const nodes = targets.nodes();
        const i = Math.floor(random() * nodes.length);
        const lease = this.opts.leaseTtlMs;
        // Half the spans end within the lease, half past it (up to twice it).
        const ms = random() < 0.5 ? MIN_MS + Math.floor(random() * (lease - MIN_MS)) : lease + Math.floor(random() * lease);
        const node = nodes[i];
        if (node) await this.freeze('node', i, node.process, ms);
      } else if (dice < 0.75) {
        const servers = targets.redis();
        const i = Math.floor(random() * servers.length);
        await this.freeze('redis', i, servers[i]!, MIN_MS + Math.floor(random() * (MAX_REDIS_MS - MIN_MS)));
      } else {
        const workers = targets.workers();
        const i = Math.floor(random() * workers.length);
        const w = workers[i];
        if (w) await this.freeze('worker', i, w, MIN_MS + Math.floor(random() * (MAX_WORKER_MS - MIN_MS)));
      }
    });
  }

  /** Stops the schedule and waits for the freeze under way: nothing is frozen once it resolves. */
  async stop(): Promise<void> {
    await this.schedule.stop();
    this.resumeAll();
  }

  /** Stops the schedule and resumes every frozen process at once (afterAll, a failed run). */
  halt(): void {
    this.schedule.halt();
    this.resumeAll();
  }

  /** Whether node `i` was frozen at some time between `from` and `to` (epoch ms). */
  nodeFrozenDuring(i: number, from: number, to: number): boolean {
    return this.spans.some((s) => s.kind === 'node' && s.index === i && s.from <= to && s.to >= from);
  }

  summary(): string {
    const of = (kind: Span['kind']) => this.spans.filter((s) => s.kind === kind);
    const longest = (l: Span[]) => (l.length ? Math.max(...l.map((s) => s.to - s.from)) : 0);
    const nodes = of('node');
    const pastLease = nodes.filter((s) => s.to - s.from > this.opts.leaseTtlMs).length;
    return `freezes: ${nodes.length} of a node (${pastLease} past the lease, longest ${longest(nodes)} ms), `
      + `${of('redis').length} of Redis (longest ${longest(of('redis'))} ms), ${of('worker').length} of a worker process`;
  }

  private async freeze(kind: Span['kind'], index: number, target: Freezable, ms: number): Promise<void> {
    const span: Span = { kind, index, from: Date.now(), to: Number.POSITIVE_INFINITY };
    this.spans.push(span);
    this.frozen.add(target);
    target.kill('SIGSTOP');
    try {
      await this.schedule.pause(ms);
    } finally {
      this.frozen.delete(target);
      target.kill('SIGCONT');
      span.to = Date.now();
    }
  }

  private resumeAll(): void {
    for (const t of this.frozen) t.kill('SIGCONT');
    this.frozen.clear();
  }
}

/**
 * A late result is refused, never recorded, and an ended task never runs again (DESIGN §6,
 * §11.2, §11.3): once attempt n of a task started, the attempts before it had ended without
 * an outcome, so the task's one outcome is of attempt n or later. A stale owner that resumes
 * and restores or requeues a task that ended meanwhile would start an attempt past its outcome.
 * And the result a COMPLETED outcome holds is from the attempt it names, not a late one.
 * `runs` are the stream workers' attempts started, as `taskId#attempt`.
 */
export function lateResults(runs: Iterable<string>, outcomes: Map<string, Outcome>): string[] {
  const last = new Map<string, number>();
  for (const run of runs) {
    const [taskId, attempt] = run.split('#') as [string, string];
    last.set(taskId, Math.max(last.get(taskId) ?? 0, Number(attempt)));
  }
  const out: string[] = [];
  for (const [taskId, n] of last) {
    const o = outcomes.get(taskId);
    if (o && o.attempt < n) out.push(`task ${taskId} ended ${o.status} with attempt ${o.attempt}, yet attempt ${n} of it started`);
  }
  // A stream worker's result names its attempt (worker-process.js): the outcome is that attempt's.
  for (const o of outcomes.values()) {
    const by = o.status === 'COMPLETED' ? /^done \S+ #(\d+)$/.exec(o.output.toString()) : null;
    if (by && Number(by[1]) !== o.attempt) out.push(`task ${o.taskId}'s outcome is attempt ${o.attempt}'s, but holds the result of attempt ${by[1]}`);
  }
  return out;
}
