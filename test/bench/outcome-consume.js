#!/usr/bin/env node
/**
 * What an engine consuming the outcomes adds to a Step's Redis cost, which
 * `zdmatch bench` leaves out (its producer and worker never read outcomes; nor
 * do BullMQ's). One node in this process on a private redis-server (default
 * config: 64 partitions), a Worker with 16 slots that completes each Step, a
 * producer enqueuing 10 Steps a call at a fixed rate (0 = as fast as it goes),
 * and an engine that consumes them with ConsumeOutcomes (max_count 100, wait
 * 1 s, each call acking the previous batch) until it has them all.
 * Prints one JSON line: calls, outcomes per call, XREADGROUP / XAUTOCLAIM /
 * XACK calls per outcome (INFO commandstats) and Redis CPU per Step, consumption
 * included (INFO cpu).
 * --dist DIR runs another build (an A/B).
 * Usage: npm run build && node test/bench/outcome-consume.js [steps=5000] [rate=1000] [--dist DIR]
 */
'use strict';
const { buildOf, redisCounters, startBenchNode } = require('./bench-kit');

const argv = process.argv.slice(2);
const dist = buildOf(argv);
const { Client, Worker } = dist('index');

const N = Number(argv[0] ?? 5000);
const RATE = Number(argv[1] ?? 1000);
const PER_CALL = 10;
const status = (line) => process.stderr.write(`outcome-consume: ${line}\n`);

async function main() {
  const { node, stop } = await startBenchNode(dist);
  const client = new Client({ address: node.apiAddress });
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const worker = new Worker({
    address: node.apiAddress, tenant: 'acme', appWorkerId: 'w', maxConcurrentTasks: 16, logger: silent,
    flowTypes: { order: { steps: { charge: async () => 'ok' } } },
  });
  void worker.start();
  await worker.waitPullRegistered();
  await client.consumeOutcomes({ group: 'engine', consumer: 'c', maxCount: 1 }); // the group, on every stream

  const before = await redisCounters(node.redis);
  let got = 0;
  let calls = 0;
  let ack = [];
  const engine = (async () => {
    while (got < N) {
      const out = await client.consumeOutcomes({ group: 'engine', consumer: 'c', maxCount: 100, waitMs: 1000, ack });
      calls++;
      ack = out.map((o) => o.outcomeId);
      got += out.length;
    }
    if (ack.length > 0) await client.ackOutcomes('engine', ack);
  })();
  const t0 = Date.now();
  let shown = 0;
  for (let i = 0; i < N; i += PER_CALL) {
    const steps = Array.from({ length: Math.min(PER_CALL, N - i) }, (_, j) => ({
      tenant: 'acme', flowId: `f${i + j}`, flowType: 'order', stepType: 'charge', stepExecutionId: 's',
    }));
    await client.enqueueSteps(steps);
    if (RATE > 0) {
      const wait = t0 + ((i + PER_CALL) / RATE) * 1000 - Date.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    }
    if (Date.now() - shown > 1000) {
      shown = Date.now();
      status(`${i + steps.length}/${N} enqueued, ${got} consumed`);
    }
  }
  await engine;
  const after = await redisCounters(node.redis);
  const per = (k) => Math.round((((after.by[k] ?? 0) - (before.by[k] ?? 0)) / N) * 100) / 100;
  process.stdout.write(`${JSON.stringify({
    steps: N, rate: RATE, consumeCalls: calls, outcomesPerCall: Math.round((N / calls) * 10) / 10,
    xreadgroupPerOutcome: per('xreadgroup'), xautoclaimPerOutcome: per('xautoclaim'), xackPerOutcome: per('xack'),
    redisCpuUsecPerStep: Math.round(((after.cpu - before.cpu) / N) * 1e7) / 10,
  })}\n`);
  await worker.stop();
  client.close();
  await stop();
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
