/**
 * `zdmatch bench`: load against a running cluster (--address, plus
 * --redis-url for Redis figures) or a private one (--local: redis-server and
 * a node process on free loopback ports, stopped at the end; --nodes N and
 * --redis-cluster for a cluster of nodes and a 3-primary Redis Cluster).
 * Producers and workers run as child processes (src/cli/bench/child.ts).
 *
 *   zdmatch bench --local --mode throughput --tasks 50000
 *   zdmatch bench --local --mode rate --rate 5000 --duration 10
 *   zdmatch bench --local --mode latency --json
 *   zdmatch bench --local --nodes 3 --redis-cluster --workers 3 --producers 3
 */
import type { Command } from 'commander';
import { checkedAddress, withClient } from './client';
import { CliExit, EXIT_CONFIG, EXIT_FAILURE, SHUTDOWN_SIGNALS, wholeNumber } from './common';
import { fittedTable } from './format';
import type { LocalEnv } from './bench/local';
import type { BenchSystem } from './bench/protocol';
import type { BenchConfig, BenchMode, BenchResult, RoleFigures } from './bench/run';

interface BenchOptions {
  address: string;
  local?: boolean;
  nodes: string;
  redisCluster?: boolean;
  redisUrl?: string;
  keyPrefix: string;
  nodePid?: string;
  redisPid?: string;
  metricsAddress?: string;
  mode: string;
  system: string;
  tasks: string;
  rate?: string;
  duration: string;
  warmup: string;
  workers: string;
  concurrency: string;
  producers: string;
  batch?: string;
  inflight?: string;
  flows: string;
  timeout?: string;
  cpuProfDir?: string;
  json?: boolean;
  progress: boolean;
}

const int = (name: string, v: string | undefined, min: number, max: number): number => wholeNumber(`--${name}`, v, min, max);

/**
 * Flags this run would not use: said, not ignored (a --rate on a throughput run
 * measured something else than its author meant).
 */
function refuseIgnored(opts: BenchOptions, cmd: Command): void {
  const given = (key: string) => cmd.getOptionValueSource(key) === 'cli' || cmd.getOptionValueSource(key) === 'env';
  const mode = opts.mode;
  const clash = (flag: string, why: string) => new CliExit(`${flag}: ${why}`, EXIT_CONFIG);
  if (opts.local) {
    for (const [key, flag] of [['address', '--address'], ['redisUrl', '--redis-url'], ['keyPrefix', '--key-prefix'], ['nodePid', '--node-pid'],
      ['redisPid', '--redis-pid'], ['metricsAddress', '--metrics-address']] as const) {
      if (given(key)) throw clash(flag, '--local starts its own node and redis-server; leave it out, or drop --local to measure a running cluster');
    }
  }
  if (mode === 'throughput' && given('rate')) throw clash('--rate', 'a throughput run enqueues --tasks as fast as it can; use --mode rate');
  if (mode === 'throughput' && given('duration')) throw clash('--duration', 'a throughput run ends after --tasks; use --mode rate or latency');
  if (mode !== 'throughput' && given('tasks')) throw clash('--tasks', `a ${mode} run offers --rate for --duration seconds; use --mode throughput`);
}

/**
 * A running node answers before any child process starts: a wrong or unreachable
 * --address failed as "worker 0 was not ready within 30s". Any answer will do
 * (a refusal by auth too: the run itself then says what it lacks).
 */
async function reachable(address: string): Promise<void> {
  try {
    await withClient(address, (c) => c.describeCluster({ timeoutMs: 5000 }));
  } catch (err) {
    const { ZdDeadlineExceededError, ZdUnavailableError } = await import('../sdk/common');
    if (err instanceof ZdUnavailableError || err instanceof ZdDeadlineExceededError) {
      throw new CliExit(`--address: no zdmatch node answers at ${address} (${err.message})`, EXIT_FAILURE);
    }
  }
}

export function registerBench(program: Command): void {
  program
    .command('bench')
    .description('benchmark a cluster: throughput, fixed-rate latency, dispatch latency; Redis and CPU cost per task')
    .option('--address <host:port>', 'gRPC API address of a running node', '127.0.0.1:8801')
    .option('--local', 'start a private redis-server and node process for the run (stopped at the end)')
    .option('--nodes <n>', '--local: node processes on the same Redis (worker/producer i talks to node i mod n)', '1')
    .option('--redis-cluster', '--local: a Redis Cluster of 3 primaries instead of one redis-server')
    .option('--redis-url <url>', 'the cluster\'s Redis, for INFO commandstats/cpu and outcome latencies (--local sets it)')
    .option('--key-prefix <prefix>', 'redis.keyPrefix of the cluster (outcome streams)', 'zd')
    .option('--node-pid <pid>', 'node process id on this machine, for node CPU per task (/proc)')
    .option('--redis-pid <pid>', 'redis-server process id on this machine, for its wakeups per task (/proc)')
    .option('--metrics-address <host:port>', 'node metrics address, for node CPU per task when --node-pid is not given')
    .option('--mode <mode>', 'throughput | rate | latency', 'throughput')
    .option('--system <system>', 'zdmatch, or bullmq for comparison runs (needs the bullmq package and --redis-url)', 'zdmatch')
    .option('--tasks <n>', 'throughput mode: Steps to enqueue', '50000')
    .option('--rate <perSec>', 'rate mode: offered Steps/s (latency mode: default 100)')
    .option('--duration <sec>', 'rate and latency modes: seconds of offered load', '10')
    .option('--warmup <n>', 'Steps run before measuring', '2000')
    .option('--workers <n>', 'worker processes', '1')
    .option('--concurrency <n>', 'slots per worker process', '64')
    .option('--producers <n>', 'producer processes', '1')
    .option('--batch <n>', 'most Steps per enqueue call (default: 100 for throughput, 50 for rate)')
    .option('--inflight <n>', 'enqueue calls in flight per producer (default: 4 for throughput, 64 for rate)')
    .option('--flows <n>', '0 = a new flow per Step; else Steps cycle over this many flows (sticky routing)', '0')
    .option('--timeout <sec>', 'give up on the measured phase after this long (default: scaled to the load)')
    .option('--cpu-prof-dir <dir>', 'write a V8 CPU profile of each worker and producer process here (worker-0.cpuprofile, …), and with --local of each node process')
    .option('--json', 'print the result as JSON (no table)')
    .option('--no-progress', 'no progress bar')
    .action(async (opts: BenchOptions, cmd: Command) => {
      refuseIgnored(opts, cmd);
      const mode = opts.mode as BenchMode;
      if (!['throughput', 'rate', 'latency'].includes(mode)) throw new CliExit(`--mode: must be throughput, rate or latency, got ${opts.mode}`, EXIT_CONFIG);
      const system = opts.system as BenchSystem;
      if (!['zdmatch', 'bullmq'].includes(system)) throw new CliExit(`--system: must be zdmatch or bullmq, got ${opts.system}`, EXIT_CONFIG);
      const nodes = int('nodes', opts.nodes, 1, 32);
      if (!opts.local) checkedAddress(opts.address);
      if (opts.metricsAddress !== undefined && !/^[^\s/]+:\d{1,5}$/.test(opts.metricsAddress)) {
        throw new CliExit(`--metrics-address: must be host:port (got ${JSON.stringify(opts.metricsAddress)})`, EXIT_CONFIG);
      }
      if (system === 'bullmq' && nodes > 1) throw new CliExit('--nodes: --system bullmq runs against one Redis, without zdmatch nodes', EXIT_CONFIG);
      if (system === 'bullmq' && opts.redisCluster) throw new CliExit('--redis-cluster: --system bullmq runs against --redis-url only', EXIT_CONFIG);
      if (nodes > 1 && !opts.local) throw new CliExit('--nodes needs --local (for a running cluster, point --address at one of its nodes)', EXIT_CONFIG);
      if (opts.redisCluster && !opts.local) throw new CliExit('--redis-cluster needs --local', EXIT_CONFIG);
      if (opts.local && system !== 'zdmatch') throw new CliExit('--local runs zdmatch only; start BullMQ runs with --redis-url', EXIT_CONFIG);
      if (system === 'bullmq' && !opts.redisUrl) throw new CliExit('--system bullmq needs --redis-url', EXIT_CONFIG);
      const throughput = mode === 'throughput';
      const rate = opts.rate !== undefined ? int('rate', opts.rate, 1, 10_000_000) : mode === 'latency' ? 100 : mode === 'rate' ? undefined : 0;
      if (rate === undefined) throw new CliExit('--mode rate needs --rate <perSec>', EXIT_CONFIG);
      const tasks = int('tasks', opts.tasks, 1, 100_000_000);
      const durationSec = int('duration', opts.duration, 1, 86_400);
      const expected = throughput ? tasks : rate * durationSec;
      const cfg: BenchConfig = {
        system, mode, addresses: [opts.address], redisUrl: opts.redisUrl ?? '', keyPrefix: opts.keyPrefix,
        nodePids: opts.nodePid ? [int('node-pid', opts.nodePid, 1, 2 ** 31)] : undefined,
        redisPids: opts.redisPid ? [int('redis-pid', opts.redisPid, 1, 2 ** 31)] : undefined,
        metricsAddress: opts.metricsAddress,
        tasks, rate, durationSec,
        warmup: int('warmup', opts.warmup, 0, 10_000_000),
        workers: int('workers', opts.workers, 1, 256),
        concurrency: int('concurrency', opts.concurrency, 1, 4096),
        producers: int('producers', opts.producers, 1, 256),
        batch: int('batch', opts.batch ?? (throughput ? '100' : '50'), 1, 1000),
        inflight: int('inflight', opts.inflight ?? (throughput ? '4' : '64'), 1, 10_000),
        flows: int('flows', opts.flows, 0, 100_000_000),
        timeoutSec: opts.timeout ? int('timeout', opts.timeout, 1, 86_400) : throughput ? Math.max(60, Math.ceil(tasks / 500)) : durationSec + 60,
        cpuProfDir: opts.cpuProfDir,
      };

      let env: LocalEnv | undefined;
      let bar: Awaited<ReturnType<typeof makeBar>> | undefined;
      // Setup lines go to stderr (stdout is the report); only for the multi-process topologies.
      const status = nodes > 1 || opts.redisCluster ? (line: string) => void process.stderr.write(`${line}\n`) : undefined;
      const signals = opts.local ? stopLocalOnSignals(() => env, () => bar?.stop()) : undefined;
      try {
        // The harness (child processes, Redis readers, the SDK) loaded once the flags are checked.
        const [{ startLocal }, { clusterPrimaries }, { runBench }] = await Promise.all([import('./bench/local'), import('./bench/measure'), import('./bench/run')]);
        if (!opts.local && system === 'zdmatch') await reachable(opts.address);
        // --redis-url naming a node of a Redis Cluster: the figures are read from every primary.
        if (!opts.local && system === 'zdmatch' && cfg.redisUrl) {
          const primaries = await clusterPrimaries(cfg.redisUrl).catch((err: Error) => {
            throw new CliExit(`--redis-url: cannot read ${cfg.redisUrl} (${err.message})`, EXIT_FAILURE);
          });
          if (primaries.length > 0) cfg.redisPrimaries = primaries;
        }
        if (opts.local) {
          env = await startLocal({ cpuProfDir: opts.cpuProfDir, nodes, redisCluster: opts.redisCluster, onStatus: status });
          cfg.addresses = env.nodes.map((n) => n.apiAddress);
          cfg.redisUrl = env.redisUrl;
          if (env.redisPrimaries.length > 0) cfg.redisPrimaries = env.redisPrimaries;
          cfg.keyPrefix = env.keyPrefix;
          cfg.nodePids = env.nodes.map((n) => n.node.pid!);
          cfg.redisPids = (env.redisCluster ? env.redisCluster.nodes : env.redis ? [env.redis] : []).map((r) => r.process.pid!);
          if (nodes > 1 && (cfg.workers < nodes || cfg.producers < nodes)) {
            status?.(`note: ${cfg.workers} worker and ${cfg.producers} producer processes for ${nodes} nodes: some nodes get no direct load (use --workers ${nodes} --producers ${nodes})`);
          }
          status?.('running…');
        }
        // Created after the setup, so that the status lines above do not break the bar.
        bar = opts.progress && !opts.json && process.stderr.isTTY ? await makeBar(expected) : undefined;
        const b = bar;
        if (b) cfg.onProgress = (done) => b.update(done);
        const result = await runBench(cfg);
        bar?.stop();
        if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else process.stdout.write(`${table(result)}\n`);
        if (result.timedOut) process.exitCode = 1;
        // A run whose enqueues failed measured something else than it says: it fails, saying why.
        if (result.enqueueErrors > 0) {
          process.stderr.write(`error: ${result.enqueueErrors} enqueues failed; the last: ${result.lastEnqueueError ?? 'unknown'}\n`);
          process.exitCode = 1;
        }
      } catch (err) {
        // A run cut short by a signal fails because its processes stop; the signal handler exits once they have.
        if (signals?.received()) await new Promise(() => undefined);
        throw err;
      } finally {
        bar?.stop();
        await env?.stop();
        signals?.remove();
      }
    });
}

/**
 * --local: SIGINT/SIGTERM/SIGHUP stop the private redis-server and node processes,
 * then exit 1 (without handlers Node dies at once and they outlive the bench).
 * A second signal exits at once; the exit hooks (bench/local.ts,
 * store/embedded-redis.ts) SIGKILL what is left, and do the same for a signal
 * that comes while startLocal is still starting them.
 */
function stopLocalOnSignals(current: () => LocalEnv | undefined, beforeStop: () => void): { received(): boolean; remove(): void } {
  let received = false;
  const handler = (signal: NodeJS.Signals) => {
    if (received) process.exit(EXIT_FAILURE);
    received = true;
    beforeStop();
    process.stderr.write(`bench: ${signal}: stopping the local redis-server and nodes\n`);
    void Promise.resolve(current()?.stop()).finally(() => process.exit(EXIT_FAILURE));
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, handler);
  return {
    received: () => received,
    remove: () => {
      for (const signal of SHUTDOWN_SIGNALS) process.off(signal, handler);
    },
  };
}

/** A figure per role ("node 1.7 · workers 1.1 · …": wakeups per Step, cores waited); roles not read are left out. */
function byRole(w: RoleFigures): string {
  const parts = (['node', 'workers', 'producers', 'redis'] as const).filter((k) => w[k] !== null).map((k) => `${k} ${w[k]}`);
  return parts.length ? parts.join(' · ') : '–';
}

async function makeBar(total: number): Promise<{ update(n: number): void; stop(): void }> {
  const { SingleBar, Presets } = await import('cli-progress');
  const bar = new SingleBar(
    { stream: process.stderr, format: 'bench [{bar}] {percentage}% | {value}/{total} Steps started | {eta_formatted} left', hideCursor: true },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  let stopped = false;
  return {
    update: (n) => bar.update(n),
    stop: () => {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}

const f = (v: number | null | undefined, unit = '') => (v === null || v === undefined ? '—' : `${v}${unit}`);

/**
 * submit → start p99 per second of a run of 2 s or more: a tail from the first
 * seconds of fresh processes, or from one pause, shows where it falls.
 */
function bySecond(all: BenchResult['latencyMs']['submitToStartBySecond']): [string, string][] {
  // The last Steps start just after the phase's last full second: a stub of a bucket, left out here (not in --json).
  const last = all[all.length - 1];
  const buckets = last && all.length > 1 && last.n < all[all.length - 2]!.n / 2 ? all.slice(0, -1) : all;
  if (buckets.length < 2) return [];
  const cells = buckets.map((b) => `${b.atSec}s ${f(b.p99)}`);
  const rows: [string, string][] = [];
  for (let i = 0; i < cells.length; i += 8) rows.push([i === 0 ? 'submit → start p99 by second (ms)' : '', cells.slice(i, i + 8).join(' · ')]);
  return rows;
}

/** "1.52 of 2: this run 1.45, other 0.07": whether the figures above are the run's alone. */
function machine(m: BenchResult['machineCpu']): string {
  if (!m) return '—';
  return `${m.busy} of ${m.cores}: this run ${m.run}, other ${m.other}${m.stolen > 0 ? `, stolen ${m.stolen}` : ''}`;
}

/** The summary as a table: plain when piped (no colour codes in a saved file), fitted to a terminal's width. */
function table(r: BenchResult): string {
  const t: [string, string][] = [];
  const l = r.latencyMs;
  const pct = (p: typeof l.submitToStart) => `p50 ${f(p.p50)} · p99 ${f(p.p99)} · max ${f(p.max)} ms (n=${p.n})`;
  t.push(
    ['system / mode', `${r.system} / ${r.mode}`],
    ['load', `${r.config.workers} worker proc × ${r.config.concurrency} slots, ${r.config.producers} producer proc, batch ${r.config.batch}${r.offeredRate ? `, offered ${r.offeredRate}/s for ${r.config.durationSec}s` : ''}`
      + `${r.config.nodes ? `, ${r.config.nodes} nodes` : ''}${r.config.redisPrimaries ? `, Redis Cluster of ${r.config.redisPrimaries} primaries` : ''}`],
    ['Steps started / expected', `${r.completed} / ${r.expected}${r.enqueueErrors ? ` (${r.enqueueErrors} enqueue errors)` : ''}${r.timedOut ? ' TIMED OUT' : ''}`],
    ['Steps/s', `${r.tasksPerSec} (over ${r.elapsedSec}s)`],
    ['submit → handler start', pct(l.submitToStart)],
    ['enqueuedAt → handler start', pct(l.enqueueToStart)],
    ['enqueuedAt → startedAt (dispatch)', pct(l.dispatch)],
    ['enqueuedAt → outcome', pct(l.enqueueToOutcome)],
    ...bySecond(l.submitToStartBySecond),
    ['Redis commands / Step', f(r.redis?.commandsPerTask)],
    ['Redis script calls / Step', f(r.redis?.scriptCallsPerTask)],
    ['Redis CPU / Step', f(r.redis?.cpuUsecPerTask, ' µs')],
    ['Redis CPU utilisation', f(r.redis ? Math.round(r.redis.cpuUtilization * 100) : null, ' %')],
    ['Redis memory left / Step', f(r.redis?.memoryBytesPerTask, ' bytes')],
  );
  // With a Redis Cluster the Redis rows above are sums over the primaries (utilisation too); these split them.
  for (const p of r.redis?.perPrimary ?? []) {
    t.push([`  primary ${p.address}`, `CPU ${p.cpuUsecPerTask} µs/Step · ${p.commandsPerTask} cmds · ${p.scriptCallsPerTask} scripts /Step · ${Math.round(p.cpuUtilization * 100)} % busy · ${p.memoryBytesPerTask} bytes/Step left`]);
  }
  const perNode = r.cpuUsecPerTask.nodes;
  t.push(['node CPU / Step', `${f(r.cpuUsecPerTask.node, ' µs')}${perNode ? ` (${perNode.length} nodes together)` : ''}`]);
  for (const [i, v] of (perNode ?? []).entries()) t.push([`  node ${i + 1}`, f(v, ' µs')]);
  t.push(
    ['worker CPU / Step', f(r.cpuUsecPerTask.workers, ' µs')],
    ['producer CPU / Step', f(r.cpuUsecPerTask.producers, ' µs')],
    ['wakeups / Step', byRole(r.wakeupsPerTask)],
    ['waiting for a core (cores)', byRole(r.waitingForCore)],
    ['machine CPU (cores busy)', machine(r.machineCpu)],
  );
  return fittedTable(['metric', 'value'], t);
}
