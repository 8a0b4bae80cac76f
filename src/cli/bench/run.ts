/**
 * The bench run: forks worker and producer processes (child.ts), warms up,
 * snapshots Redis and CPU counters, runs the measured phase, snapshots again,
 * collects the latency samples and computes the report.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import {
  machineCpu, machineTicks, median as _median, metricsCpuSec, percentiles, procCpuSec, procRunQueueWaitSec, procWakeups, redisDelta, redisSnapshot, sumDeltas, timeline,
  type MachineCpu, type Percentiles,
  type RedisDelta, type RedisSnapshot, type TimelineBucket,
} from './measure';
import { hiNow, type BenchSystem, type ChildConfig, type ChildMessage, type ProducerCommand } from './protocol';
import { decodeEntry } from '../../store/outcomes';

export type BenchMode = 'throughput' | 'rate' | 'latency';

export interface BenchConfig {
  system: BenchSystem;
  mode: BenchMode;
  /** zdmatch gRPC addresses: worker i and producer i use addresses[i mod length]. */
  addresses: string[];
  /** Redis of the system under test (stats, BullMQ store, zdmatch outcome stream). '' = no Redis stats. */
  redisUrl: string;
  /** host:port of every primary of a Redis Cluster (instead of redisUrl): stats per primary and summed. */
  redisPrimaries?: string[];
  /** zdmatch redis.keyPrefix (to read outcome streams). */
  keyPrefix: string;
  /** The node processes (CPU from /proc, summed), or one node's metrics address. */
  nodePids?: number[];
  /** redis-server processes on this machine (one, or each Cluster primary), for their wakeups per Step. */
  redisPids?: number[];
  metricsAddress?: string;
  tasks: number;
  rate: number;
  durationSec: number;
  warmup: number;
  workers: number;
  concurrency: number;
  producers: number;
  batch: number;
  inflight: number;
  flows: number;
  /** Longest the measured phase may take before the run gives up (s). */
  timeoutSec: number;
  /** Write a V8 CPU profile of each worker and producer process here. */
  cpuProfDir?: string;
  onProgress?: (done: number, total: number) => void;
}

export interface BenchResult {
  system: BenchSystem;
  mode: BenchMode;
  config: {
    tasks: number; rate: number | null; durationSec: number | null; workers: number; concurrency: number;
    producers: number; batch: number; flows: number;
    /** Node processes and Redis Cluster primaries; only set for those topologies. */
    nodes?: number; redisPrimaries?: number;
  };
  /** Main-phase tasks started by the workers. */
  completed: number;
  expected: number;
  enqueueErrors: number;
  /** The last enqueue error a producer saw, when any failed. */
  lastEnqueueError?: string;
  elapsedSec: number;
  tasksPerSec: number;
  offeredRate: number | null;
  latencyMs: {
    /** Producer's send (hi-res) → handler start: what a caller sees, same for every system. */
    submitToStart: Percentiles;
    /** Server-stamped enqueuedAt (ms) → handler start (StepContext.enqueuedAt; BullMQ job.timestamp). */
    enqueueToStart: Percentiles;
    /** enqueuedAt → startedAt (server side; BullMQ processedOn). */
    dispatch: Percentiles;
    /** enqueuedAt → outcome written (zdmatch outcome stream; BullMQ finishedOn). */
    enqueueToOutcome: Percentiles;
    /** submit → start per second of the measured phase. */
    submitToStartBySecond: TimelineBucket[];
  };
  redis: null | {
    version: string;
    commands: number;
    commandsPerTask: number;
    scriptCallsPerTask: number;
    cpuUsecPerTask: number;
    cpuUtilization: number;
    /** Redis memory the run left behind, per task (used_memory growth over the phase). */
    memoryBytesPerTask: number;
    topCommands: Record<string, number>;
    /** Redis Cluster only: the same figures for each primary. */
    perPrimary?: RedisPrimaryFigures[];
  };
  /** node: all node processes together; nodes: each one (several nodes only). */
  cpuUsecPerTask: { node: number | null; nodes?: (number | null)[]; workers: number | null; producers: number | null };
  /**
   * Event-loop wakeups per Step (voluntary context switches of each process's
   * main thread, summed per role; procWakeups): near 0 when every wakeup
   * handles a batch, 1 or more when each message wakes its process. Null when
   * the processes are not on this machine.
   */
  wakeupsPerTask: RoleFigures;
  /**
   * Cores' worth of time each role's main threads spent runnable but waiting for a
   * core over the measured phase (procRunQueueWaitSec, summed per role). A role whose
   * CPU and wait come to a whole core per process is what the run waits on. Null when
   * the processes are not on this machine.
   */
  waitingForCore: RoleFigures;
  /**
   * The machine over the measured phase (Linux /proc/stat), in cores: how busy it was,
   * how much of that the run's own processes were, and the rest. On a shared machine
   * `other` says whether a run's figures are the build's or a neighbour's. Null off Linux.
   */
  machineCpu: MachineCpu | null;
  timedOut: boolean;
}

export type RoleFigures = Record<Role, number | null>;

export interface RedisPrimaryFigures {
  address: string;
  commandsPerTask: number;
  scriptCallsPerTask: number;
  cpuUsecPerTask: number;
  cpuUtilization: number;
  memoryBytesPerTask: number;
}

interface Child {
  proc: ChildProcess;
  cfg: ChildConfig;
  count: number;
  errors: number;
}

const CHILD = path.join(__dirname, 'child.js');

function spawnChild(cfg: ChildConfig, onMessage: (c: Child, m: ChildMessage) => void, cpuProfDir?: string): Promise<Child> {
  return new Promise((resolve, reject) => {
    const execArgv = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir, '--cpu-prof-name', `${cfg.role}-${cfg.index}.cpuprofile`] : [];
    const proc = fork(CHILD, [JSON.stringify(cfg)], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'], execArgv });
    const child: Child = { proc, cfg, count: 0, errors: 0 };
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${cfg.role} ${cfg.index} was not ready within 30s`));
    }, 30_000);
    proc.on('message', (m: ChildMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(child);
      } else if (m.type === 'fatal') {
        clearTimeout(timer);
        reject(new Error(`${cfg.role} ${cfg.index}: ${m.message}`));
      }
      onMessage(child, m);
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cfg.role} ${cfg.index} exited (${code}) before it was ready`));
    });
    killOnExit(proc);
  });
}

// One 'exit' listener for all children: one each would trip MaxListenersExceededWarning with many children.
const live = new Set<ChildProcess>();
let exitHook = false;
function killOnExit(proc: ChildProcess): void {
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const p of live) p.kill('SIGKILL');
    });
  }
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function waitFor(cond: () => boolean, timeoutMs: number, tick?: () => void): Promise<boolean> {
  return new Promise((resolve) => {
    const deadline = Date.now() + timeoutMs;
    const check = () => {
      tick?.();
      if (cond()) return resolve(true);
      if (Date.now() > deadline) return resolve(false);
      setTimeout(check, 20);
    };
    check();
  });
}

/** CPU seconds of each node process (one entry per pid, or one from metrics); [] = unknown. */
async function cpuOf(cfg: BenchConfig): Promise<(number | undefined)[]> {
  if (cfg.nodePids?.length) return cfg.nodePids.map((pid) => procCpuSec(pid));
  if (cfg.metricsAddress) return [await metricsCpuSec(cfg.metricsAddress)];
  return [];
}

/**
 * CPU seconds so far of the run's processes on this machine: this one, the workers and
 * producers, and the node and Redis processes named by pid (--local names them all).
 * The workers', producers' and nodes' are the readings just taken for their own figures.
 */
function runCpuSec(cfg: BenchConfig, workersSec: readonly number[], producersSec: readonly number[], nodesSec: readonly (number | undefined)[]): number {
  const self = process.cpuUsage();
  // Nodes read from their metrics (no pid) may be on another machine: not part of this one's load.
  const nodes = cfg.nodePids?.length ? nodesSec.map((x) => x ?? 0) : [];
  const redis = (cfg.redisPids ?? []).map((pid) => procCpuSec(pid) ?? 0);
  return [...workersSec, ...producersSec, ...nodes, ...redis].reduce((sum, x) => sum + x, (self.user + self.system) / 1e6);
}

type Role = 'node' | 'workers' | 'producers' | 'redis';
type RoleReadings = Record<Role, (number | undefined)[]>;
const ROLES: readonly Role[] = ['node', 'workers', 'producers', 'redis'];

/** One /proc reading (procWakeups, procRunQueueWaitSec) of every process of each role, now. */
function readRoles(cfg: BenchConfig, workers: readonly Child[], producers: readonly Child[], read: (pid: number) => number | undefined): RoleReadings {
  return {
    node: (cfg.nodePids ?? []).map(read),
    workers: workers.map((w) => read(w.proc.pid!)),
    producers: producers.map((p) => read(p.proc.pid!)),
    redis: (cfg.redisPids ?? []).map(read),
  };
}

/** Each role's growth over the phase, summed over its processes and scaled; null unless every process was read both times. */
function roleDeltas(a: RoleReadings, b: RoleReadings, scale: (x: number) => number): RoleFigures {
  const delta = (xs: (number | undefined)[], ys: (number | undefined)[]): number | null => {
    if (xs.length === 0 || xs.length !== ys.length || [...xs, ...ys].some((x) => x === undefined)) return null;
    let d = 0;
    for (let i = 0; i < xs.length; i++) d += ys[i]! - xs[i]!;
    return round(scale(d), 2);
  };
  return Object.fromEntries(ROLES.map((r) => [r, delta(a[r], b[r])])) as RoleFigures;
}

/** The Redis servers whose INFO the run reads: every Cluster primary, or the one server. */
function redisServers(cfg: BenchConfig): string[] {
  if (cfg.redisPrimaries?.length) return cfg.redisPrimaries.map((a) => `redis://${a}`);
  return cfg.redisUrl ? [cfg.redisUrl] : [];
}

function snapshots(cfg: BenchConfig): Promise<RedisSnapshot[]> {
  return Promise.all(redisServers(cfg).map((u) => redisSnapshot(u)));
}

/** Outcome latencies of zdmatch: the outcome streams' finishedAt − enqueuedAt, for this run's tenant. */
async function zdOutcomeLatencies(cfg: BenchConfig, tenant: string, sinceMs: number, limit: number): Promise<Float64Array> {
  // Each partition's stream lives on the primary of its hash slot: a Cluster client routes the reads.
  const redis = cfg.redisPrimaries?.length
    ? new Cluster(cfg.redisPrimaries.map((a) => ({ host: a.slice(0, a.lastIndexOf(':')), port: Number(a.slice(a.lastIndexOf(':') + 1)) })), {
      lazyConnect: true, redisOptions: { maxRetriesPerRequest: 2 },
    })
    : new Redis(cfg.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  try {
    await redis.connect();
    const partitions = Number((await redis.hget(`${cfg.keyPrefix}:meta`, 'partitions')) ?? 64);
    const out: number[] = [];
    for (let p = 0; p < partitions && out.length < limit; p++) {
      let start = `${sinceMs}-0`;
      for (let guard = 0; guard < 10_000 && out.length < limit; guard++) {
        const entries = await redis.xrangeBuffer(`${cfg.keyPrefix}:{${p}}:out`, start, '+', 'COUNT', 1000);
        if (entries.length === 0) break;
        for (const [, list] of entries) {
          const fields: Record<string, Buffer> = {};
          for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]!.toString()] = list[i + 1]!;
          const o = decodeEntry(fields);
          const fin = Number(o.finishedAt?.toString());
          const enq = Number(o.enqueuedAt?.toString());
          if (o.tenant?.toString() === tenant && fin > 0 && enq > 0) out.push(fin - enq);
        }
        if (entries.length < 1000) break;
        start = `(${entries[entries.length - 1]![0].toString()}`;
      }
    }
    return Float64Array.from(out);
  } finally {
    redis.disconnect();
  }
}

export async function runBench(cfg: BenchConfig): Promise<BenchResult> {
  const runId = randomBytes(4).toString('hex');
  const tenant = `bench-${runId}`;
  const base = {
    system: cfg.system, redisUrl: cfg.redisUrl, tenant, flowType: 'bench', stepType: 'noop',
    concurrency: cfg.concurrency, runId, flows: cfg.flows,
  };
  // Spreads the load: with N nodes, child i talks to node i mod N.
  const addressOf = (i: number) => cfg.addresses[i % cfg.addresses.length]!;
  const children: Child[] = [];
  const phaseDone: Extract<ChildMessage, { type: 'phaseDone' }>[] = [];
  const samples: Extract<ChildMessage, { type: 'samples' }>[] = [];
  let fatal: string | undefined;
  const onMessage = (c: Child, m: ChildMessage) => {
    if (m.type === 'progress') {
      c.count = m.count;
      c.errors = m.errors;
    } else if (m.type === 'phaseDone') phaseDone.push(m);
    else if (m.type === 'samples') samples.push(m);
    else if (m.type === 'fatal') fatal = m.message;
  };

  try {
    const workers = await Promise.all(
      Array.from({ length: cfg.workers }, (_, i) => spawnChild({ ...base, address: addressOf(i), role: 'worker', index: i }, onMessage, cfg.cpuProfDir)),
    );
    children.push(...workers);
    const producers = await Promise.all(
      Array.from({ length: cfg.producers }, (_, i) => spawnChild({ ...base, address: addressOf(i), role: 'producer', index: i }, onMessage, cfg.cpuProfDir)),
    );
    children.push(...producers);
    const started = () => workers.reduce((s, w) => s + w.count, 0);
    const check = () => {
      if (fatal) throw new Error(fatal);
    };

    // Warm-up: JIT, connections, script cache.
    if (cfg.warmup > 0) {
      const per = Math.ceil(cfg.warmup / cfg.producers);
      for (const p of producers) p.proc.send({ type: 'count', phase: 'warmup', n: per, batch: cfg.batch, inflight: cfg.inflight } satisfies ProducerCommand);
      await waitFor(() => phaseDone.length >= producers.length, 60_000, check);
      const sentWarm = phaseDone.reduce((s, d) => s + d.sent, 0);
      await waitFor(() => started() >= sentWarm, 60_000, check);
      phaseDone.length = 0;
      await sleep(300);
    }
    const warmStarted = started();

    // Measured phase.
    const expected = cfg.mode === 'throughput' ? cfg.tasks : Math.floor(cfg.rate * cfg.durationSec);
    const r0 = await snapshots(cfg);
    const n0 = await cpuOf(cfg);
    const w0 = workers.map((w) => procCpuSec(w.proc.pid!) ?? 0);
    const p0 = producers.map((p) => procCpuSec(p.proc.pid!) ?? 0);
    const wake0 = readRoles(cfg, workers, producers, procWakeups);
    const wait0 = readRoles(cfg, workers, producers, procRunQueueWaitSec);
    const run0 = runCpuSec(cfg, w0, p0, n0);
    const m0 = machineTicks();
    const t0 = hiNow();
    const sinceMs = Math.floor(t0) - 1;
    if (cfg.mode === 'throughput') {
      const per = Math.floor(cfg.tasks / cfg.producers);
      producers.forEach((p, i) => p.proc.send({
        type: 'count', phase: 'main', n: i === 0 ? cfg.tasks - per * (cfg.producers - 1) : per, batch: cfg.batch, inflight: cfg.inflight,
      } satisfies ProducerCommand));
    } else {
      for (const p of producers) {
        p.proc.send({
          type: 'rate', phase: 'main', rate: cfg.rate / cfg.producers, durationMs: cfg.durationSec * 1000, batch: cfg.batch,
          inflight: cfg.inflight,
        } satisfies ProducerCommand);
      }
    }
    const mainStarted = () => started() - warmStarted;
    const done = await waitFor(
      () => phaseDone.length >= producers.length && mainStarted() >= phaseDone.reduce((s, d) => s + d.sent, 0),
      cfg.timeoutSec * 1000,
      () => {
        check();
        cfg.onProgress?.(Math.min(mainStarted(), expected), expected);
      },
    );
    cfg.onProgress?.(Math.min(mainStarted(), expected), expected);
    const t1 = hiNow();
    const r1 = await snapshots(cfg);
    const n1 = await cpuOf(cfg);
    const w1 = workers.map((w) => procCpuSec(w.proc.pid!) ?? 0);
    const p1 = producers.map((p) => procCpuSec(p.proc.pid!) ?? 0);
    const wake1 = readRoles(cfg, workers, producers, procWakeups);
    const wait1 = readRoles(cfg, workers, producers, procRunQueueWaitSec);
    const run1 = runCpuSec(cfg, w1, p1, n1);
    const m1 = machineTicks();

    for (const w of workers) w.proc.send({ type: 'collect' });
    await waitFor(() => samples.length >= workers.length, 30_000, check);

    const completed = samples.reduce((s, x) => s + x.count, 0);
    const enqueueErrors = phaseDone.reduce((s, d) => s + d.errors, 0);
    const firstSend = Math.min(...phaseDone.map((d) => d.firstSendAt), t0);
    const lastStart = Math.max(...samples.map((s) => s.lastStartAt), 0);
    // Up to the last start in every mode: the phase's end (t1) is when the last start was
    // heard of (progress every 100 ms), so a rate run without a backlog read below its rate.
    const elapsedSec = lastStart > 0 ? (lastStart - firstSend) / 1000 : (t1 - t0) / 1000;
    const per = (x: number) => (completed > 0 ? x / completed : 0);
    const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

    let outcome: Float64Array[] = samples.map((s) => s.enqueueToOutcome);
    if (cfg.system === 'zdmatch' && redisServers(cfg).length > 0) outcome = [await zdOutcomeLatencies(cfg, tenant, sinceMs, 2_000_000)];

    let redis: BenchResult['redis'] = null;
    const phaseSec = (t1 - t0) / 1000;
    if (r0.length > 0 && r1.length === r0.length) {
      const deltas: RedisDelta[] = r0.map((a, i) => redisDelta(a, r1[i]!));
      const d = sumDeltas(deltas);
      const top = Object.fromEntries(
        Object.entries(d.byCommand).sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => [k, Math.round(per(v) * 100) / 100]),
      );
      redis = {
        version: d.version,
        commands: d.commands,
        commandsPerTask: round(per(d.commands), 2),
        scriptCallsPerTask: round(per(d.scriptCalls), 2),
        cpuUsecPerTask: round(per(d.cpuSec * 1e6), 1),
        cpuUtilization: round(d.cpuSec / phaseSec, 3),
        memoryBytesPerTask: Math.round(per(d.memoryBytes)),
        topCommands: top,
      };
      if (cfg.redisPrimaries?.length) {
        redis.perPrimary = deltas.map((x, i) => ({
          address: cfg.redisPrimaries![i]!,
          commandsPerTask: round(per(x.commands), 2),
          scriptCallsPerTask: round(per(x.scriptCalls), 2),
          cpuUsecPerTask: round(per(x.cpuSec * 1e6), 1),
          cpuUtilization: round(x.cpuSec / phaseSec, 3),
          memoryBytesPerTask: Math.round(per(x.memoryBytes)),
        }));
      }
    }
    const nodeCpu = n0.map((a, i) => (a !== undefined && n1[i] !== undefined ? round(per((n1[i]! - a) * 1e6), 1) : null));
    const known = n0.length > 0 && [...n0, ...n1].every((x) => x !== undefined);
    const nodeTotal = known ? round(per((sum(n1 as number[]) - sum(n0 as number[])) * 1e6), 1) : null;
    const result: BenchResult = {
      system: cfg.system,
      mode: cfg.mode,
      config: {
        tasks: expected, rate: cfg.mode === 'throughput' ? null : cfg.rate, durationSec: cfg.mode === 'throughput' ? null : cfg.durationSec,
        workers: cfg.workers, concurrency: cfg.concurrency, producers: cfg.producers, batch: cfg.batch, flows: cfg.flows,
        ...(cfg.addresses.length > 1 ? { nodes: cfg.addresses.length } : {}),
        ...(cfg.redisPrimaries?.length ? { redisPrimaries: cfg.redisPrimaries.length } : {}),
      },
      completed,
      expected,
      enqueueErrors,
      ...(enqueueErrors > 0 ? { lastEnqueueError: phaseDone.map((d) => d.lastError).filter(Boolean).pop() } : {}),
      elapsedSec: round(elapsedSec, 3),
      tasksPerSec: round(elapsedSec > 0 ? completed / elapsedSec : 0, 0),
      offeredRate: cfg.mode === 'throughput' ? null : cfg.rate,
      latencyMs: {
        submitToStart: percentiles(samples.map((s) => s.submitToStart)),
        enqueueToStart: percentiles(samples.map((s) => s.enqueueToStart)),
        dispatch: percentiles(samples.map((s) => s.dispatch)),
        enqueueToOutcome: percentiles(outcome),
        submitToStartBySecond: timeline(samples.map((s) => s.submitTimeline), t0),
      },
      redis,
      cpuUsecPerTask: {
        node: nodeTotal,
        ...(nodeCpu.length > 1 ? { nodes: nodeCpu } : {}),
        workers: round(per(sum(w1) - sum(w0)) * 1e6, 1),
        producers: round(per(sum(p1) - sum(p0)) * 1e6, 1),
      },
      wakeupsPerTask: roleDeltas(wake0, wake1, per),
      waitingForCore: roleDeltas(wait0, wait1, (sec) => sec / phaseSec),
      machineCpu: machineCpu(m0, m1, os.cpus().length, (t1 - t0) / 1000, run1 - run0) ?? null,
      timedOut: !done,
    };
    return result;
  } finally {
    await Promise.all(children.map((c) => new Promise<void>((resolve) => {
      if (c.proc.exitCode !== null || c.proc.signalCode !== null) return resolve();
      const t = setTimeout(() => {
        c.proc.kill('SIGKILL');
        resolve();
      }, 8000);
      c.proc.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      try {
        c.proc.send({ type: 'stop' });
      } catch {
        c.proc.kill('SIGKILL');
      }
    })));
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const median = _median;
