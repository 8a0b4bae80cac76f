#!/usr/bin/env node
/**
 * What the fetch surface costs Redis per task: one node in this process on a
 * private redis-server (default config: 64 partitions), a producer enqueuing 10
 * Steps a call at a fixed rate, and W FetchClients (default 4) long-polling the topic
 * (maxTasks 10, wait 500 ms) and completing each task they lock, until all are
 * done. Prints one JSON line: tasks/s, fetches, tasks per fetch, Redis commands per task
 * and the busiest of them (INFO commandstats; commands a script runs count too),
 * and Redis CPU per task (INFO cpu).
 * --dist DIR runs another build (an A/B).
 * Usage: npm run build && node test/bench/fetch-cost.js [tasks=3000] [rate=500] [workers=4] [--dist DIR]
 */
'use strict';
const { buildOf, redisCounters, startBenchNode } = require('./bench-kit');

const argv = process.argv.slice(2);
const dist = buildOf(argv);
const { Client, FetchClient } = dist('index');

const N = Number(argv[0] ?? 3000);
const RATE = Number(argv[1] ?? 500);
const WORKERS = Number(argv[2] ?? 4);
const PER_CALL = 10;
const status = (line) => process.stderr.write(`fetch-cost: ${line}\n`);

async function main() {
  const { node, stop } = await startBenchNode(dist);
  const client = new Client({ address: node.apiAddress });
  const topics = [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }];
  const before = await redisCounters(node.redis);
  let done = 0;
  let fetches = 0;
  const workers = Array.from({ length: WORKERS }, async (_, i) => {
    const f = new FetchClient({ address: node.apiAddress, workerId: `w${i}` });
    while (done < N) {
      const tasks = await f.fetchAndLock({ topics, maxTasks: 10, waitMs: 500, lockDurationMs: 30_000 });
      fetches++;
      for (const t of tasks) {
        await f.complete(t.taskId, { result: 'ok' });
        done++;
      }
    }
    f.close();
  });
  const t0 = Date.now();
  let shown = 0;
  for (let i = 0; i < N; i += PER_CALL) {
    await client.enqueueSteps(Array.from({ length: Math.min(PER_CALL, N - i) }, (_, j) => ({
      tenant: 'acme', flowId: `f${i + j}`, flowType: 'order', stepType: 'charge', stepExecutionId: 's',
    })));
    if (RATE > 0) {
      const wait = t0 + ((i + PER_CALL) / RATE) * 1000 - Date.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    }
    if (Date.now() - shown > 1000) {
      shown = Date.now();
      status(`${Math.min(N, i + PER_CALL)}/${N} enqueued, ${done} completed`);
    }
  }
  await Promise.all(workers);
  const seconds = (Date.now() - t0) / 1000;
  const after = await redisCounters(node.redis);
  const per = (a, b) => Math.round(((a - b) / N) * 100) / 100;
  const top = Object.fromEntries(Object.keys(after.by)
    .map((k) => [k, per(after.by[k], before.by[k] ?? 0)])
    .filter(([, v]) => v >= 0.5)
    .sort((a, b) => b[1] - a[1]));
  process.stdout.write(`${JSON.stringify({
    tasks: N, rate: RATE, workers: WORKERS, tasksPerSec: Math.round(N / seconds), fetches, tasksPerFetch: Math.round((N / fetches) * 10) / 10,
    commandsPerTask: per(after.all, before.all), redisCpuUsecPerTask: Math.round(((after.cpu - before.cpu) / N) * 1e7) / 10, top,
  })}\n`);
  client.close();
  await stop();
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
