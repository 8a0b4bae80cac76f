#!/usr/bin/env node
/**
 * The tables of docs/benchmarks.md (full load, ratios, fixed rates) as
 * Markdown, from a results.json that `npm run bench` wrote: medians, with the
 * rounds in brackets, so no figure is copied by hand.
 *
 *   node scripts/bench-tables.js docs/benchmarks/results.json
 */
'use strict';
const fs = require('node:fs');

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: bench-tables.js <results.json>\n');
  process.exit(2);
}
const res = JSON.parse(fs.readFileSync(file, 'utf8'));
const fmt = (x, digits = 1) => (x === null || x === undefined ? '—'
  : Number(x).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }).replace(/,/g, ' '));
const int = (x) => fmt(x, 0);
const rounds = (runs, pick, f = fmt) => runs.map((r) => f(pick(r))).join(' / ');
const th = res.throughput;
const zdRuns = res.raw.throughput.zdmatch;
const bullRuns = res.raw.throughput.bullmq;
const cpu = (r, role) => r.cpuUsecPerTask?.[role];
const out = [];

out.push('| | zdmatch | BullMQ 6.7 | raw 3-script cycle | raw EVALSHA (3 keys) |', '|---|---|---|---|---|');
out.push(`| tasks/s (3 rounds) | **${int(th.zdmatch.tasksPerSec)}** (${rounds(zdRuns, (r) => r.tasksPerSec, int)}) | **${int(th.bullmq.tasksPerSec)}** (${rounds(bullRuns, (r) => r.tasksPerSec, int)}) | ${int(th.ceiling.cycle.tasksPerSec)} | ${int(th.ceiling.evalsha.opsPerSec)} ops/s |`);
out.push(`| submit → start p50 / p99 | ${int(th.zdmatch.submitToStartP50)} / ${int(th.zdmatch.submitToStartP99)} ms | ${int(th.bullmq.submitToStartP50)} / ${int(th.bullmq.submitToStartP99)} ms | — | — |`);
out.push(`| Redis commands / task | ${fmt(th.zdmatch.redisCommandsPerTask)} | ${fmt(th.bullmq.redisCommandsPerTask)} | ${fmt(th.ceiling.cycle.commandsPerTask)} | 4 / op |`);
out.push(`| Redis script calls / task | **${fmt(th.zdmatch.redisScriptCallsPerTask, 2)}** | ${fmt(th.bullmq.redisScriptCallsPerTask, 2)} | 3 | 1 |`);
out.push(`| Redis CPU / task | **${fmt(th.zdmatch.redisCpuUsecPerTask)} µs** (${rounds(zdRuns, (r) => r.redis.cpuUsecPerTask)}) | **${fmt(th.bullmq.redisCpuUsecPerTask)} µs** (${rounds(bullRuns, (r) => r.redis.cpuUsecPerTask)}) | ${fmt(th.ceiling.cycle.redisCpuUsecPerTask)} µs | ${fmt(th.ceiling.evalsha.redisCpuUsecPerOp)} µs / op |`);
out.push(`| Redis CPU utilisation | ${int(th.zdmatch.redisCpuUtilization * 100)} % | ${int(th.bullmq.redisCpuUtilization * 100)} % | — | — |`);
out.push(`| node CPU / task | ${fmt(th.zdmatch.nodeCpuUsecPerTask)} µs (${rounds(zdRuns, (r) => cpu(r, 'node'))}) | — | — | — |`);
out.push(`| worker process CPU / task | ${fmt(th.zdmatch.workerCpuUsecPerTask)} µs (${rounds(zdRuns, (r) => cpu(r, 'workers'))}) | ${fmt(th.bullmq.workerCpuUsecPerTask)} µs (${rounds(bullRuns, (r) => cpu(r, 'workers'))}) | — | — |`);
out.push(`| producer process CPU / task | ${rounds(zdRuns, (r) => cpu(r, 'producers'))} µs | ${rounds(bullRuns, (r) => cpu(r, 'producers'))} µs | — | — |`);
// Runs from before the bench read /proc/stat have no machineCpu: a dash.
const machine = (runs) => (runs.some((r) => r.machineCpu) ? rounds(runs, (r) => r.machineCpu && `${fmt(r.machineCpu.busy, 2)} (${fmt(r.machineCpu.other, 2)})`, (x) => x ?? '—') : '—');
out.push(`| cores busy (of them other load), by round | ${machine(zdRuns)} | ${machine(bullRuns)} | — | — |`);
// Runs from before the bench read /proc/<pid>/schedstat have no waitingForCore: dashes.
const waiting = (t) => [t.nodeWaitingForCore, t.workerWaitingForCore, t.redisWaitingForCore].map((x) => fmt(x, 2)).join(', ');
out.push(`| main threads waiting for a core (cores): node, worker, Redis | ${waiting(th.zdmatch)} | ${waiting(th.bullmq)} | — | — |`);
out.push(`| wakeups / task: node, worker, Redis | ${fmt(th.zdmatch.nodeWakeupsPerTask, 2)}, ${fmt(th.zdmatch.workerWakeupsPerTask, 2)}, ${fmt(th.zdmatch.redisWakeupsPerTask, 2)} | —, ${fmt(th.bullmq.workerWakeupsPerTask, 2)}, ${fmt(th.bullmq.redisWakeupsPerTask, 2)} | — | — |`);

const ratio = (a, b) => (a && b ? (a / b).toFixed(2) : '—');
const paired = (pick) => zdRuns.map((r, i) => ratio(pick(r), pick(bullRuns[i] ?? {}))).join(' / ');
const q = Object.fromEntries(Object.entries(res.ratios).map(([k, v]) => [k, v === null ? '—' : Number(v).toFixed(2)]));
out.push('', '| ratio | value |', '|---|---|');
out.push(`| zdmatch / BullMQ tasks/s | **${q.tasksPerSec_zdmatch_over_bullmq}** (${paired((r) => r.tasksPerSec)}) |`);
out.push(`| zdmatch / BullMQ Redis CPU per task | **${q.redisCpuPerTask_zdmatch_over_bullmq}** (${paired((r) => r.redis?.cpuUsecPerTask)}) |`);
out.push(`| zdmatch / BullMQ Redis commands per task | ${q.redisCommandsPerTask_zdmatch_over_bullmq} |`);
out.push(`| zdmatch / raw 3-script cycle tasks/s | ${q.tasksPerSec_zdmatch_over_rawCycle} |`);
out.push(`| zdmatch / raw 3-script cycle Redis CPU per task | ${q.redisCpuPerTask_zdmatch_over_rawCycle} |`);
out.push(`| zdmatch Redis CPU per task at 1k/s ÷ at full load | **${q.redisCpuPerTask_at1k_over_fullLoad_zdmatch}** |`);
out.push(`| BullMQ Redis CPU per job at 1k/s ÷ at full load | ${q.redisCpuPerTask_at1k_over_fullLoad_bullmq} |`);

out.push('', '| offered | system | tasks/s | submit→start p50 | p99 (3 rounds) | enqueuedAt→start p50 / p99 | enqueue→outcome p99 | Redis CPU / task | cmds / task | scripts / task | node CPU / task | worker CPU / task | wakeups / task: node, worker, Redis |');
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const rate of Object.keys(res.atRate).map(Number).sort((a, b) => a - b)) {
  for (const system of ['zdmatch', 'bullmq']) {
    const s = res.atRate[rate][system];
    const runs = res.raw.rates[system]?.[rate] ?? [];
    out.push(`| ${int(rate)}/s | ${system === 'zdmatch' ? 'zdmatch' : 'BullMQ'} | ${int(s.tasksPerSec)} | ${fmt(s.submitToStartP50, 2)} ms | **${fmt(s.submitToStartP99)} ms** (${rounds(runs, (r) => r.latencyMs.submitToStart.p99)}) | ${fmt(s.enqueueToStartP50, 2)} / ${fmt(s.enqueueToStartP99, 2)} ms | ${int(s.enqueueToOutcomeP99)} ms | ${fmt(s.redisCpuUsecPerTask)} µs | ${fmt(s.redisCommandsPerTask)} | ${fmt(s.redisScriptCallsPerTask, 2)} | ${s.nodeCpuUsecPerTask === null ? '—' : `${int(s.nodeCpuUsecPerTask)} µs`} | ${int(s.workerCpuUsecPerTask)} µs | ${s.nodeWakeupsPerTask === null ? '—' : fmt(s.nodeWakeupsPerTask, 2)}, ${fmt(s.workerWakeupsPerTask, 2)}, ${fmt(s.redisWakeupsPerTask, 2)} |`);
  }
}
const p = res.platform;
if (p) {
  out.push('', '| | one message that wakes the process | the same message in a batch of 100 |', '|---|---|---|');
  out.push(`| redis-server: CPU per PING | **${fmt(p.redisUsecPerWokenPing)} µs** | ${fmt(p.redisUsecPerPipelinedPing)} µs |`);
  out.push(`| Node.js echo over loopback TCP: CPU per message | **${fmt(p.nodeUsecPerWokenEcho)} µs** | ${fmt(p.nodeUsecPerBatchedEcho)} µs |`);
}
process.stdout.write(`${out.join('\n')}\n`);
