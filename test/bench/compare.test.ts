/**
 * Side by side on redis-server (no persistence; a fresh one for every
 * measurement), in this process tree:
 * zdmatch (one node process, `zdmatch bench --address`) vs BullMQ 6.7
 * (`zdmatch bench --system bullmq`: the same producer/worker harness, no-op
 * processor, concurrency 64, producer and worker as separate processes) vs
 * the raw ceiling of the same Redis (test/bench/raw-ceiling.js). Each at
 * least 3 times; medians and ratios are printed and written to
 * docs/benchmarks/results.json, and the latency plot to docs/benchmarks/latency.png.
 *
 * npm run bench   (env: BENCH_RUNS=3 BENCH_TASKS=10000 BENCH_BULL_TASKS=30000 BENCH_RATES=250,1000,2500,5000 BENCH_RATE_SECS=5 BENCH_OUT_DIR=docs/benchmarks)
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { startNodeProcess, type NodeProcess, CLI_MAIN, REPO_ROOT } from '../helpers/node-process';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TASKS = Number(process.env.BENCH_TASKS ?? 10000);
const BULL_TASKS = Number(process.env.BENCH_BULL_TASKS ?? 30000);
const RATES = (process.env.BENCH_RATES ?? '250,1000,2500,5000').split(',').map(Number);
const RATE_SECS = Number(process.env.BENCH_RATE_SECS ?? 5);
// BENCH_OUT_DIR: write a confirmation run elsewhere, keeping the page's results.
const OUT_DIR = process.env.BENCH_OUT_DIR ?? path.join(REPO_ROOT, 'docs', 'benchmarks');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function run(args: string[], timeoutMs = 600_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${args.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const r2 = (x: number) => Math.round(x * 100) / 100;

/** Medians of the figures that matter, over the runs of one configuration. */
function summarize(runs: Json[]): Json {
  const m = (f: (r: Json) => number | null | undefined) => r2(median(runs.map((r) => Number(f(r) ?? NaN))));
  return {
    runs: runs.length,
    tasksPerSec: m((r) => r.tasksPerSec),
    submitToStartP50: m((r) => r.latencyMs.submitToStart.p50),
    submitToStartP99: m((r) => r.latencyMs.submitToStart.p99),
    submitToStartMax: m((r) => r.latencyMs.submitToStart.max),
    enqueueToStartP50: m((r) => r.latencyMs.enqueueToStart.p50),
    enqueueToStartP99: m((r) => r.latencyMs.enqueueToStart.p99),
    dispatchP50: m((r) => r.latencyMs.dispatch.p50),
    dispatchP99: m((r) => r.latencyMs.dispatch.p99),
    enqueueToOutcomeP50: m((r) => r.latencyMs.enqueueToOutcome.p50),
    enqueueToOutcomeP99: m((r) => r.latencyMs.enqueueToOutcome.p99),
    redisCommandsPerTask: m((r) => r.redis?.commandsPerTask),
    redisScriptCallsPerTask: m((r) => r.redis?.scriptCallsPerTask),
    redisCpuUsecPerTask: m((r) => r.redis?.cpuUsecPerTask),
    redisCpuUtilization: m((r) => r.redis?.cpuUtilization),
    redisMemoryBytesPerTask: m((r) => r.redis?.memoryBytesPerTask),
    nodeCpuUsecPerTask: m((r) => r.cpuUsecPerTask?.node),
    workerCpuUsecPerTask: m((r) => r.cpuUsecPerTask?.workers),
    nodeWakeupsPerTask: m((r) => r.wakeupsPerTask?.node),
    workerWakeupsPerTask: m((r) => r.wakeupsPerTask?.workers),
    producerWakeupsPerTask: m((r) => r.wakeupsPerTask?.producers),
    redisWakeupsPerTask: m((r) => r.wakeupsPerTask?.redis),
    nodeWaitingForCore: m((r) => r.waitingForCore?.node),
    workerWaitingForCore: m((r) => r.waitingForCore?.workers),
    redisWaitingForCore: m((r) => r.waitingForCore?.redis),
    completedAll: runs.every((r) => r.completed >= r.expected - 1 && !r.timedOut),
  };
}

/**
 * Every measurement gets a redis-server of its own (and zdmatch a node of its
 * own): on one Redis kept for the whole run, outcomes, done records and
 * BullMQ's completed jobs piled up, and both systems' Redis CPU per task rose
 * round by round. BullMQ runs with no zdmatch node beside it.
 */
async function onFreshRedis<T>(withNode: boolean, fn: (redis: EmbeddedRedis, node?: NodeProcess) => Promise<T>): Promise<T> {
  const redis = await startEmbeddedRedis();
  let node: NodeProcess | undefined;
  try {
    if (withNode) {
      node = await startNodeProcess({ redisUrl: redis.url, keyPrefix: 'zdb', config: { auth: { enabled: false }, log: { level: 'warn' } } });
    }
    return await fn(redis, node);
  } finally {
    await node?.stop(20_000);
    await redis.stop();
  }
}

describe('zdmatch vs BullMQ vs raw Redis', () => {
  test('side by side', async () => {
    const zdArgs = (redis: EmbeddedRedis, node: NodeProcess) =>
      ['--address', node.apiAddress, '--redis-url', redis.url, '--key-prefix', 'zdb', '--node-pid', String(node.process.pid),
        '--redis-pid', String(redis.process.pid), '--json', '--no-progress'];
    const bullArgs = (redis: EmbeddedRedis) => ['--system', 'bullmq', '--redis-url', redis.url, '--redis-pid', String(redis.process.pid), '--json', '--no-progress'];
    const bench = async (args: string[]) => JSON.parse((await run([CLI_MAIN, 'bench', ...args])).trim().split('\n').pop()!) as Json;
    const zdBench = (mode: string[]) => onFreshRedis(true, (redis, node) => bench([...zdArgs(redis, node!), ...mode]));
    const bullBench = (mode: string[]) => onFreshRedis(false, (redis) => bench([...bullArgs(redis), ...mode]));
    const rawCeiling = (kind: string) => onFreshRedis(false, async (redis) =>
      JSON.parse(await run([path.join(__dirname, 'raw-ceiling.js'), redis.url, kind, '3'])) as Json);
    // What one wakeup costs here (test/bench/wakeup-cost.js): explains the rise of CPU per Step at low load.
    const wakeupCost = () => onFreshRedis(false, async (redis) =>
      JSON.parse(await run([path.join(__dirname, 'wakeup-cost.js'), redis.url, '1000', '3'])) as Json);
    // One line per measurement on stderr as it ends: a run takes minutes.
    const total = RUNS * (5 + 2 * RATES.length);
    let done = 0;
    const t0 = Date.now();
    const measured = async <T extends Json>(label: string, m: Promise<T>, line: (r: T) => string): Promise<T> => {
      const r = await m;
      done++;
      process.stderr.write(`bench: [${done}/${total}] ${label}: ${line(r)} (${Math.round((Date.now() - t0) / 1000)} s)\n`);
      return r;
    };
    const steps = (r: Json) => `${r.tasksPerSec} Steps/s, Redis ${r.redis?.cpuUsecPerTask ?? '—'} µs/Step, p99 ${r.latencyMs?.submitToStart?.p99 ?? '—'} ms`;
    const raw: Record<string, Json[]> = { zdmatch: [], bullmq: [], evalsha: [], cycle: [], wakeup: [] };
    const rates: Record<string, Record<number, Json[]>> = { zdmatch: {}, bullmq: {} };
    let redisVersion: string | undefined;

    for (let i = 0; i < RUNS; i++) {
      // Interleaved, so drift of a shared machine hits every system alike.
      const round = `round ${i + 1}/${RUNS}`;
      raw.evalsha!.push(await measured(`${round} raw EVALSHA`, rawCeiling('evalsha'), (r) => JSON.stringify(r)));
      raw.cycle!.push(await measured(`${round} raw cycle`, rawCeiling('cycle'), (r) => JSON.stringify(r)));
      raw.wakeup!.push(await measured(`${round} wakeup cost`, wakeupCost(), (r) => JSON.stringify(r)));
      raw.zdmatch!.push(await measured(`${round} zdmatch full load`, zdBench(['--mode', 'throughput', '--tasks', String(TASKS)]), steps));
      raw.bullmq!.push(await measured(`${round} BullMQ full load`, bullBench(['--mode', 'throughput', '--tasks', String(BULL_TASKS)]), steps));
      for (const rate of RATES) {
        // Fresh processes of both systems warm up (JIT, connections) on a second's worth of Steps of the rate, sent as fast as they go.
        const mode = ['--mode', 'rate', '--rate', String(rate), '--duration', String(RATE_SECS), '--warmup', String(Math.max(1000, rate))];
        (rates.zdmatch![rate] ??= []).push(await measured(`${round} zdmatch at ${rate}/s`, zdBench(mode), steps));
        (rates.bullmq![rate] ??= []).push(await measured(`${round} BullMQ at ${rate}/s`, bullBench(mode), steps));
      }
      redisVersion ??= raw.zdmatch![0]?.redis?.version;
    }

    const zd = summarize(raw.zdmatch!);
    const bull = summarize(raw.bullmq!);
    const ceiling = {
      evalsha: { opsPerSec: median(raw.evalsha!.map((r) => r.opsPerSec)), redisCpuUsecPerOp: median(raw.evalsha!.map((r) => r.redisCpuUsecPerOp)) },
      cycle: { tasksPerSec: median(raw.cycle!.map((r) => r.opsPerSec)), redisCpuUsecPerTask: median(raw.cycle!.map((r) => r.redisCpuUsecPerOp)), commandsPerTask: median(raw.cycle!.map((r) => r.commandsPerOp)) },
    };
    const w = raw.wakeup!;
    const platform = {
      redisUsecPerWokenPing: median(w.map((x) => x.redis.perWakeupUsec)),
      redisUsecPerPipelinedPing: median(w.map((x) => x.redis.perPipelinedUsec)),
      nodeUsecPerWokenEcho: median(w.map((x) => x.node.perWakeupUsec)),
      nodeUsecPerBatchedEcho: median(w.map((x) => x.node.perBatchedUsec)),
    };
    const atRate: Json = {};
    for (const rate of RATES) atRate[rate] = { zdmatch: summarize(rates.zdmatch![rate]!), bullmq: summarize(rates.bullmq![rate]!) };
    const ratios = {
      tasksPerSec_zdmatch_over_bullmq: r2(zd.tasksPerSec / bull.tasksPerSec),
      redisCpuPerTask_zdmatch_over_bullmq: r2(zd.redisCpuUsecPerTask / bull.redisCpuUsecPerTask),
      redisCommandsPerTask_zdmatch_over_bullmq: r2(zd.redisCommandsPerTask / bull.redisCommandsPerTask),
      tasksPerSec_zdmatch_over_rawCycle: r2(zd.tasksPerSec / ceiling.cycle.tasksPerSec),
      redisCpuPerTask_zdmatch_over_rawCycle: r2(zd.redisCpuUsecPerTask / ceiling.cycle.redisCpuUsecPerTask),
      redisCpuPerTask_at1k_over_fullLoad_zdmatch: atRate[1000] ? r2(atRate[1000].zdmatch.redisCpuUsecPerTask / zd.redisCpuUsecPerTask) : null,
      redisCpuPerTask_at1k_over_fullLoad_bullmq: atRate[1000] ? r2(atRate[1000].bullmq.redisCpuUsecPerTask / bull.redisCpuUsecPerTask) : null,
    };
    const results = {
      when: new Date().toISOString(),
      machine: { nproc: require('node:os').availableParallelism(), cpu: require('node:os').cpus()[0]?.model, node: process.version, redis: redisVersion },
      settings: { runs: RUNS, tasks: TASKS, bullTasks: BULL_TASKS, rates: RATES, rateSeconds: RATE_SECS, concurrency: 64, freshRedisPerMeasurement: true },
      throughput: { zdmatch: zd, bullmq: bull, ceiling },
      platform,
      atRate,
      ratios,
      raw: { throughput: raw, rates },
    };
    fs.mkdirSync(OUT_DIR, { recursive: true });
    const file = path.join(OUT_DIR, 'results.json');
    fs.writeFileSync(file, `${JSON.stringify(results, null, 1)}\n`);
    await run([path.join(REPO_ROOT, 'scripts', 'bench-plot.js'), file, path.join(OUT_DIR, 'latency.png')]).catch((e: Error) => process.stderr.write(`plot: ${e.message}\n`));

    const lines = [
      `throughput (median of ${RUNS}): zdmatch ${zd.tasksPerSec}/s, BullMQ ${bull.tasksPerSec}/s, raw 3-script cycle ${ceiling.cycle.tasksPerSec}/s, raw EVALSHA ${ceiling.evalsha.opsPerSec}/s`,
      `Redis CPU/task: zdmatch ${zd.redisCpuUsecPerTask} µs, BullMQ ${bull.redisCpuUsecPerTask} µs, raw cycle ${ceiling.cycle.redisCpuUsecPerTask} µs`,
      `Redis commands/task: zdmatch ${zd.redisCommandsPerTask} (scripts ${zd.redisScriptCallsPerTask}), BullMQ ${bull.redisCommandsPerTask}`,
      `ratios: ${JSON.stringify(ratios)}`,
      `wakeups/task at full load: zdmatch node ${zd.nodeWakeupsPerTask}, workers ${zd.workerWakeupsPerTask}, Redis ${zd.redisWakeupsPerTask}; BullMQ workers ${bull.workerWakeupsPerTask}, Redis ${bull.redisWakeupsPerTask}`,
      `one wakeup here: Redis ${platform.redisUsecPerWokenPing} µs per woken PING (${platform.redisUsecPerPipelinedPing} pipelined), Node ${platform.nodeUsecPerWokenEcho} µs per woken echo (${platform.nodeUsecPerBatchedEcho} batched)`,
      ...RATES.map((rate) => `at ${rate}/s: submit→start p99 zdmatch ${atRate[rate].zdmatch.submitToStartP99} ms, BullMQ ${atRate[rate].bullmq.submitToStartP99} ms; Redis CPU/task zdmatch ${atRate[rate].zdmatch.redisCpuUsecPerTask} µs, BullMQ ${atRate[rate].bullmq.redisCpuUsecPerTask} µs; Redis wakeups/task zdmatch ${atRate[rate].zdmatch.redisWakeupsPerTask}, BullMQ ${atRate[rate].bullmq.redisWakeupsPerTask}`),
    ];
    process.stderr.write(`\n${lines.join('\n')}\n`);
    expect(zd.tasksPerSec).toBeGreaterThan(0);
    expect(bull.tasksPerSec).toBeGreaterThan(0);
  });
});
