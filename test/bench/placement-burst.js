#!/usr/bin/env node
/**
 * The owner's placement alone, in one process, in a burst: N new Steps of one
 * flow type arrive while every slot is busy, so all N wait in their sync-match
 * phase; then slots free one at a time, each taking the oldest waiter. Prints,
 * for each N, the CPU per freed slot: flat in N when a freed slot looks at the
 * line of each Step type once, growing with N when it looks at every waiter.
 * The least of 3 runs per N. No Redis and no gRPC: a dispatcher with a slot count stands in for the
 * gateways, and the offer settles at once.
 * With `sticky`, the N Steps wait for their flows' sticky worker (busy)
 * instead, and its slots free one at a time.
 * Usage: npm run build && node test/bench/placement-burst.js [N…=1000,5000,20000] [sync|sticky]
 */
'use strict';
const path = require('node:path');
const dist = (p) => require(path.join(__dirname, '..', '..', 'dist', p));
const { Placement } = dist('owner/placement');
const { QueueHeads } = dist('owner/heads');
const { Timers } = dist('owner/timers');

const sizes = (process.argv[2] ?? '1000,5000,20000').split(',').map(Number);
const phase = process.argv[3] ?? 'sync';
if (phase !== 'sync' && phase !== 'sticky') throw new Error(`phase: ${phase} is neither sync nor sticky`);
const TYPES = ['charge', 'ship', 'notify'];

function run(n) {
  let free = 0;
  const dispatcher = {
    reserveSlot: () => (free > 0 ? (free--, 'node-1') : undefined),
    presence: () => 'busy',
    canServe: () => true,
    hasWorker: () => true,
    offer: () => Promise.resolve('taken'),
  };
  const host = {
    dispatcher: () => dispatcher, epochOf: () => 1, headsAvailable: () => undefined, backlogged: () => false,
    offerSent: () => undefined, offerSettled: () => undefined,
  };
  const clock = { now: () => Date.now() };
  const timers = new Timers(clock);
  const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined };
  const placement = new Placement(host, timers, 600_000, 600_000, clock, log);
  const queues = TYPES.map((t, i) => new QueueHeads(i, `bench:flow:${t}`, 'bench', 'flow', t));
  const sticky = phase === 'sticky' ? 'app' : '';
  for (let i = 0; i < n; i++) placement.place(queues[i % TYPES.length], { taskId: `t${i}`, readyAt: i }, sticky);
  if (placement.size !== n) throw new Error(`${placement.size} waiters parked, expected ${n}`);
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    free = 1;
    placement.capacity('bench', 'flow', 'app');
  }
  const u = process.cpuUsage(t0);
  timers.stop();
  if (placement.size !== 0) throw new Error(`${placement.size} waiters left after ${n} freed slots`);
  return (u.user + u.system) / n;
}

run(1000); // warm the JIT
// The least of 3 runs: a run's own GC and JIT work is not the cost of a freed slot.
const rows = sizes.map((n) => ({ waiters: n, usecPerFreedSlot: Math.round(Math.min(run(n), run(n), run(n)) * 100) / 100 }));
for (const r of rows) process.stderr.write(`${String(r.waiters).padStart(7)} ${phase} waiters: ${r.usecPerFreedSlot} µs per freed slot\n`);
process.stdout.write(`${JSON.stringify(rows)}\n`);
