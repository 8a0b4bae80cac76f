#!/usr/bin/env node
/**
 * zdmatch's own task scripts alone, on a private redis-server: enqueue, start
 * and complete N Steps through TaskStore (no node, no gRPC), 256 at a time,
 * one phase at a time: enqueues as a node sends an EnqueueSteps batch
 * (enqueueMany, 100 a script call), starts and completions as a node's event
 * loop turn does (one call per 8, call-batch.ts). Prints, per phase, the Redis CPU per Step (INFO
 * cpu), this process's CPU per Step (TaskStore and ioredis: what a node pays
 * to make the calls) and the usec of the commands the scripts ran (INFO
 * commandstats).
 * It isolates what the Lua scripts cost from everything around them.
 *
 * With --callgrind the redis-server runs under `valgrind --tool=callgrind`
 * and each phase also reports the instructions Redis executed per Step: all
 * of them, and those inside command execution (`call`, which leaves out the
 * event loop and the timer work that grows with the run's wall time). An
 * instruction count does not move with the machine's load, so it tells a
 * change of a few per cent apart where CPU time cannot (a cache miss costs
 * no more instructions than a hit: it counts work, not stalls). Use a few
 * thousand Steps: Redis runs ≈ 50× slower under valgrind. --cache-sim adds
 * the simulated cache misses per Step (first level and last level): a change
 * that saves memory traffic (fewer keys, fewer allocations) rather than
 * instructions shows there.
 * --dist DIR runs the scripts and TaskStore of another build (an A/B).
 * --sync: the low-rate path instead, each Step enqueued alone and started at
 * once in a slot the node bound (sync match), then completed.
 * Usage: npm run build && node test/bench/redis-cycle.js [steps=20000] [--callgrind [--cache-sim]] [--sync] [--dist DIR]
 */
'use strict';
const path = require('node:path');

const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv.splice(i, 2)[1];
};
const DIST = path.resolve(flag('--dist') ?? path.join(__dirname, '..', '..', 'dist'));
const CALLGRIND = argv.includes('--callgrind');
const SYNC = argv.includes('--sync');
const CACHE_SIM = argv.includes('--cache-sim');
const dist = (p) => require(path.join(DIST, p));
const { startEmbeddedRedis } = dist('store/embedded-redis');
const { createRedis } = dist('store/redis');
const { Keys, partitionOf } = dist('store/keys');
const { TaskStore } = dist('store/task-store');
const { hotScripts } = dist('store/scripts');
const { startUnderCallgrind } = require('./callgrind-redis');

const N = Number(argv.find((a) => !a.startsWith('--')) ?? 20000);
const BATCH = 256;

async function main() {
  const r = CALLGRIND ? await startUnderCallgrind({ cacheSim: CACHE_SIM }) : await startEmbeddedRedis();
  const redis = createRedis({ url: r.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const store = new TaskStore(redis, new Keys('zd'), 86_400_000, 600_000);
  const stats = async () => {
    const text = (await redis.info('commandstats')) + (await redis.info('cpu'));
    const m = {};
    for (const line of text.split('\r\n')) {
      const [k, v] = line.split(':');
      if (!v) continue;
      if (k.startsWith('cmdstat_')) m[k.slice(8)] = Number(/usec=(\d+)/.exec(v)[1]);
      else m[k] = Number.parseFloat(v);
    }
    return m;
  };
  const tasks = Array.from({ length: N }, (_, i) => {
    const flowId = `f-${i}`;
    const partition = partitionOf('t', flowId, 64);
    return {
      partition, taskId: `${partition}-${i.toString(16).padStart(24, '0')}`, queue: 't:ft:st', tenant: 't', flowId,
      flowType: 'ft', stepType: 'st', stepExecutionId: `se-${i}`, input: Buffer.from(JSON.stringify({ m: 1, s: 1234567.891 })),
      readyAt: 0, flowDeadline: 0, maxAttempts: 3, initialInterval: 1000, backoffCoefficient: 2, maxInterval: 60000,
      nonRetryable: [], methodTimeout: 0, heartbeatTimeout: 0, stickyWorkerId: '',
    };
  });
  const slot = { appWorkerId: 'w1', streamId: 's1', nodeId: 'n1', bootId: 'b1' };
  const nonce = '0123456789abcdef';
  const phases = SYNC ? {
    // sync match at enqueue, as at low rates: each Step alone in its call, started in the slot the node bound
    'enqueue+start': (batch) => Promise.all(batch.map((t) => store.enqueueMany([t], Date.now(), [{ slot, nonce }]))),
    complete: (batch) => Promise.all(batch.map((t) => store.complete(
      { partition: t.partition, taskId: t.taskId, attempt: 1, nonce }, Buffer.from('ok'), Date.now()))),
  } : {
    enqueue: (batch) => Promise.all([store.enqueueMany(batch.slice(0, 100), Date.now()),
      store.enqueueMany(batch.slice(100, 200), Date.now()), store.enqueueMany(batch.slice(200), Date.now())]),
    start: (batch) => Promise.all(batch.map((t) => store.start(t.partition, t.taskId, 0, slot, nonce, Date.now()))),
    complete: (batch) => Promise.all(batch.map((t) => store.complete(
      { partition: t.partition, taskId: t.taskId, attempt: 1, nonce }, Buffer.from('ok'), Date.now()))),
  };
  // Loaded before the first phase: a script's first call compiles it, which
  // under callgrind weighs as much as thousands of Steps.
  for (const s of Object.values(hotScripts)) await redis.script('LOAD', s.lua);
  let total = 0;
  let irTotal = 0;
  let irCommands = 0;
  let l1Total = 0;
  let llTotal = 0;
  try {
    for (const [name, fn] of Object.entries(phases)) {
      await redis.config('RESETSTAT');
      const a = await stats();
      r.zero?.();
      const c0 = process.cpuUsage();
      for (let i = 0; i < N; i += BATCH) {
        await fn(tasks.slice(i, i + BATCH));
        if (process.stderr.isTTY) process.stderr.write(`\r${name} ${Math.min(N, i + BATCH)}/${N}`);
      }
      if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
      const c1 = process.cpuUsage(c0);
      const ir = r.dump?.();
      const b = await stats();
      const client = (c1.user + c1.system) / N;
      const cpu = ((b.used_cpu_sys + b.used_cpu_user) - (a.used_cpu_sys + a.used_cpu_user)) / N * 1e6;
      total += cpu;
      const inner = Object.entries(b)
        .filter(([k]) => !/^(evalsha|eval|info|config|used_)/.test(k) && !k.includes('|'))
        .map(([k, v]) => `${k} ${(v / N).toFixed(2)}`).join(', ');
      console.log(`${name.padEnd(13)} Redis CPU ${cpu.toFixed(1)} µs/Step · client CPU ${client.toFixed(1)} µs · EVALSHA ${((b.evalsha ?? 0) / N).toFixed(1)} µs · inside: ${inner}`);
      if (ir) {
        const misses = ir.misses ? ` · cache misses: L1 ${Math.round(ir.misses.l1 / N)}, last level ${Math.round(ir.misses.ll / N)} /Step` : '';
        console.log(`${''.padEnd(13)} Redis instructions ${Math.round(ir.total / N)} /Step · in commands ${Math.round(ir.commands / N)} /Step${misses}`);
        irTotal += ir.total;
        irCommands += ir.commands;
        if (ir.misses) {
          l1Total += ir.misses.l1;
          llTotal += ir.misses.ll;
        }
      }
    }
    console.log(`${'total'.padEnd(13)} Redis CPU ${total.toFixed(1)} µs/Step`);
    if (CALLGRIND) {
      const misses = CACHE_SIM ? ` · cache misses: L1 ${Math.round(l1Total / N)}, last level ${Math.round(llTotal / N)} /Step` : '';
      console.log(`${'total'.padEnd(13)} Redis instructions ${Math.round(irTotal / N)} /Step · in commands ${Math.round(irCommands / N)} /Step${misses}`);
    }
  } finally {
    redis.disconnect();
    await r.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
