/**
 * What the bench reads around a run: Redis INFO (commandstats, cpu, memory), the CPU
 * time of processes (/proc/<pid>/stat, or a node's Prometheus metrics), and
 * percentiles.
 */
import fs from 'node:fs';
import http from 'node:http';
import { sendCommand } from '../../store/embedded-redis';

export interface RedisSnapshot {
  /** Calls by command name (`evalsha`, `hset`, …). */
  calls: Record<string, number>;
  /** used_cpu_sys + used_cpu_user, seconds. */
  cpuSec: number;
  /** used_memory, bytes. */
  usedMemory: number;
  version: string;
}

function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 6379) };
}

export async function redisSnapshot(url: string): Promise<RedisSnapshot> {
  const { host, port } = hostPort(url);
  const stats = String(await sendCommand(port, ['INFO', 'commandstats'], { host, timeoutMs: 5000 }));
  const cpu = String(await sendCommand(port, ['INFO', 'cpu'], { host, timeoutMs: 5000 }));
  const server = String(await sendCommand(port, ['INFO', 'server'], { host, timeoutMs: 5000 }));
  const memory = String(await sendCommand(port, ['INFO', 'memory'], { host, timeoutMs: 5000 }));
  const calls: Record<string, number> = {};
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1]!] = Number(m[2]);
  const num = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  return {
    calls,
    cpuSec: num('used_cpu_sys') + num('used_cpu_user'),
    usedMemory: Number(/^used_memory:(\d+)/m.exec(memory)?.[1] ?? 0),
    version: /^redis_version:(\S+)/m.exec(server)?.[1] ?? '',
  };
}

/**
 * The primaries (`host:port`) of the Redis Cluster that the server at `url` is a
 * node of, as it lists them in CLUSTER SLOTS; empty for a server that is not in
 * cluster mode. A Cluster spreads the partitions over its primaries: INFO of the
 * one node named would count a share of the run as all of it, and a plain client
 * reading the outcome streams there meets MOVED.
 */
export async function clusterPrimaries(url: string): Promise<string[]> {
  const { host, port } = hostPort(url);
  const info = String(await sendCommand(port, ['INFO', 'cluster'], { host, timeoutMs: 5000 }));
  if (!/^cluster_enabled:1/m.test(info)) return [];
  const slots = await sendCommand(port, ['CLUSTER', 'SLOTS'], { host, timeoutMs: 5000 });
  if (!Array.isArray(slots)) throw new Error(`CLUSTER SLOTS on ${host}:${port} answered ${String(slots)}`);
  const primaries = new Set<string>();
  for (const range of slots) {
    const primary = Array.isArray(range) ? range[2] : undefined;
    if (!Array.isArray(primary)) continue;
    // An empty address means "the one this reply came over" (a node that does not know its own).
    const ip = typeof primary[0] === 'string' && primary[0] !== '' ? primary[0] : host;
    primaries.add(`${ip.includes(':') ? `[${ip}]` : ip}:${String(primary[1])}`);
  }
  return [...primaries];
}

export interface RedisDelta {
  version: string;
  commands: number;
  scriptCalls: number;
  cpuSec: number;
  /** Growth of used_memory: what the run left behind (outcomes, done records, sticky keys; BullMQ's kept jobs). */
  memoryBytes: number;
  byCommand: Record<string, number>;
}

/** Commands issued between two snapshots; the INFO calls of the bench itself are left out. */
export function redisDelta(a: RedisSnapshot, b: RedisSnapshot): RedisDelta {
  const byCommand: Record<string, number> = {};
  let commands = 0;
  for (const [name, n] of Object.entries(b.calls)) {
    if (name === 'info') continue;
    const d = n - (a.calls[name] ?? 0);
    if (d <= 0) continue;
    byCommand[name] = d;
    commands += d;
  }
  const scriptCalls = (byCommand.evalsha ?? 0) + (byCommand.eval ?? 0) + (byCommand.fcall ?? 0) + (byCommand.evalsha_ro ?? 0);
  return { version: b.version, commands, scriptCalls, cpuSec: b.cpuSec - a.cpuSec, memoryBytes: b.usedMemory - a.usedMemory, byCommand };
}

/** The deltas of several servers (a Redis Cluster's primaries) added up. */
export function sumDeltas(ds: readonly RedisDelta[]): RedisDelta {
  const byCommand: Record<string, number> = {};
  for (const d of ds) for (const [k, v] of Object.entries(d.byCommand)) byCommand[k] = (byCommand[k] ?? 0) + v;
  return {
    version: ds[0]?.version ?? '',
    commands: ds.reduce((s, d) => s + d.commands, 0),
    scriptCalls: ds.reduce((s, d) => s + d.scriptCalls, 0),
    cpuSec: ds.reduce((s, d) => s + d.cpuSec, 0),
    memoryBytes: ds.reduce((s, d) => s + d.memoryBytes, 0),
    byCommand,
  };
}

let clockTicks: number | undefined;

/** utime + stime of a process in seconds (Linux /proc), or undefined. */
export function procCpuSec(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may contain spaces: split after its closing parenthesis.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    clockTicks ??= 100; // USER_HZ is 100 on every Linux this runs on
    return (utime + stime) / clockTicks;
  } catch {
    return undefined;
  }
}

/**
 * Voluntary context switches of a process's main thread (Linux /proc; the
 * leader's own counter, not its helper threads'): how often its event loop
 * had nothing to do, slept, and was woken. Per Step, this says how well a
 * process batches: a busy one handles many messages a wakeup. Undefined when
 * the process is gone or not on this machine.
 */
export function procWakeups(pid: number): number | undefined {
  try {
    const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The run-queue wait of a /proc/<pid>/schedstat text (its second field, ns) in seconds; undefined when it is not one. */
export function parseRunQueueWaitSec(schedstat: string): number | undefined {
  const m = /^\d+ (\d+) \d+$/.exec(schedstat.trim());
  return m ? Number(m[1]) / 1e9 : undefined;
}

/**
 * Seconds a process's main thread has spent runnable but waiting for a core
 * (Linux /proc/<pid>/schedstat: the leader's own, as in procWakeups). On a
 * machine the run shares with itself, a process whose CPU and wait add up to a
 * core is the one the run waits on, though the machine's cores may not all be
 * busy: the processes want them at the same moments. Undefined when the process
 * is gone, not on this machine, or the kernel keeps no schedstat.
 */
export function procRunQueueWaitSec(pid: number): number | undefined {
  try {
    return parseRunQueueWaitSec(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The machine's CPU time so far, from the first line of /proc/stat: clock ticks of every core together. */
export interface MachineTicks {
  /** user, nice, system, irq and softirq: work done on this machine, by any process. */
  busy: number;
  /** steal: time the hypervisor gave to other machines while this one wanted to run. */
  steal: number;
  /** Every state (idle and iowait too), guests aside: they are counted in user and nice already. */
  total: number;
}

/** Reads the aggregate `cpu` line of a /proc/stat text (Linux); undefined when there is none. */
export function parseMachineTicks(procStat: string): MachineTicks | undefined {
  const m = /^cpu\s+(\d+(?:\s+\d+){6,})/m.exec(procStat);
  if (!m) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = m[1]!.split(/\s+/).map(Number) as number[];
  return { busy: user! + nice! + system! + irq! + softirq!, steal, total: user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal };
}

export function machineTicks(): MachineTicks | undefined {
  try {
    return parseMachineTicks(fs.readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** How busy the machine was over a phase, in cores; what the run's own processes used of it, and the rest. */
export interface MachineCpu {
  cores: number;
  /** Cores' worth of work done on the machine over the phase, by every process. */
  busy: number;
  /** Of it, the processes the bench knows run here: itself, its workers and producers, and the node and Redis processes it has pids for. */
  run: number;
  /** busy − run: load the run did not make (another tenant, a build), or processes it has no pid for. */
  other: number;
  /** Cores' worth of time the hypervisor gave elsewhere while this machine wanted to run. */
  stolen: number;
}

/**
 * Busy cores over a phase from two /proc/stat readings, and the share of the run's
 * processes (`runCpuSec`, their CPU seconds over the same phase). The machine's
 * ticks set the scale, so the clock-tick rate does not matter. Undefined without
 * both readings or with no time between them.
 */
export function machineCpu(before: MachineTicks | undefined, after: MachineTicks | undefined, cores: number, phaseSec: number, runCpuSec: number): MachineCpu | undefined {
  if (!before || !after || phaseSec <= 0) return undefined;
  const total = after.total - before.total;
  if (total <= 0) return undefined;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  const busy = ((after.busy - before.busy) / total) * cores;
  const run = Math.min(runCpuSec / phaseSec, busy);
  return { cores, busy: r2(busy), run: r2(run), other: r2(busy - run), stolen: r2(((after.steal - before.steal) / total) * cores) };
}

/** process_cpu_seconds_total from a node's /metrics (prom-client default metrics), or undefined. */
export function metricsCpuSec(metricsAddress: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = http.get(`http://${metricsAddress}/metrics`, { timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const m = /^process_cpu_seconds_total(?:\{[^}]*\})? ([\d.e+-]+)/m.exec(body);
        resolve(m ? Number(m[1]) : undefined);
      });
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(undefined));
  });
}

export interface Percentiles {
  n: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

/** Nearest-rank percentiles of the concatenated samples, in the samples' unit. */
export function percentiles(parts: Float64Array[]): Percentiles {
  const n = parts.reduce((s, p) => s + p.length, 0);
  if (n === 0) return { n: 0, p50: null, p99: null, max: null };
  const all = new Float64Array(n);
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  all.sort();
  const at = (q: number) => all[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
  const r = (v: number) => Math.round(v * 1000) / 1000;
  return { n, p50: r(at(0.5)), p99: r(at(0.99)), max: r(all[n - 1]!) };
}

export interface TimelineBucket extends Percentiles {
  /** Seconds from the start of the measured phase to the start of this bucket. */
  atSec: number;
}

/**
 * The samples of timed pairs (when, value; wall-clock ms) by `bucketMs` from
 * `origin`: percentiles per bucket, so a tail that comes from the first seconds
 * of fresh processes, or from a pause now and then, shows where it falls. Buckets
 * run from the first to the last sample's; an empty one has n 0.
 */
export function timeline(pairs: Float64Array[], origin: number, bucketMs = 1000): TimelineBucket[] {
  const byBucket: number[][] = [];
  for (const p of pairs) {
    for (let i = 0; i + 1 < p.length; i += 2) {
      const b = Math.max(0, Math.floor((p[i]! - origin) / bucketMs));
      (byBucket[b] ??= []).push(p[i + 1]!);
    }
  }
  const out: TimelineBucket[] = [];
  for (let b = 0; b < byBucket.length; b++) {
    out.push({ atSec: (b * bucketMs) / 1000, ...percentiles([Float64Array.from(byBucket[b] ?? [])]) });
  }
  return out;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
