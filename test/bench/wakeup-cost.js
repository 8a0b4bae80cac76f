#!/usr/bin/env node
/**
 * What one wakeup costs on this machine, for the two kinds of process a Step
 * crosses: a redis-server and a Node.js process.
 *
 *   redis:  PING sent one at a time at a fixed rate (every PING wakes Redis),
 *           then in pipelines of 100 (one wakeup serves 100): Redis CPU per PING.
 *   node:   a child Node.js process echoing 16-byte messages over loopback TCP,
 *           at a fixed rate, then in bursts of 100: the child's CPU per message.
 *
 * The difference between the two figures of a row is the price of being woken
 * for one message instead of finding it in a batch: the reason every process's
 * CPU per Step rises at low load (docs/benchmarks.md). Prints one JSON line:
 *   { rate, redis: { perWakeupUsec, perPipelinedUsec }, node: { perWakeupUsec, perBatchedUsec } }
 * Usage: node test/bench/wakeup-cost.js <redis-url> [rate=1000] [seconds=3]
 */
'use strict';
const { fork } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const { Redis } = require('ioredis');

if (process.argv[2] === '--echo') {
  const server = net.createServer((c) => c.on('data', (d) => c.write(d)));
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
  return;
}

const [url, rateArg = '1000', secsArg = '3'] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: wakeup-cost.js <redis-url> [rate] [seconds]\n');
  process.exit(2);
}
const RATE = Number(rateArg);
const SECS = Number(secsArg);
const BATCH = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x) => Math.round(x * 10) / 10;
const status = (line) => process.stderr.write(`wakeup-cost: ${line}\n`);

async function redisCpu(r) {
  const text = await r.info('cpu');
  const get = (k) => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(text)[1]);
  return get('used_cpu_sys') + get('used_cpu_user');
}

/** Calls `send` RATE times a second for SECS seconds, each after the previous answer at the earliest. */
async function paced(send) {
  const n = RATE * SECS;
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    await send();
  }
  return n;
}

async function redisCost() {
  const r = new Redis(url, { enableAutoPipelining: false, lazyConnect: true });
  await r.connect();
  for (let i = 0; i < 2000; i++) await r.ping(); // warm the connection
  status(`redis: ${RATE} PING/s for ${SECS}s`);
  let c0 = await redisCpu(r);
  const single = await paced(() => r.ping());
  const perWakeupUsec = ((await redisCpu(r)) - c0) * 1e6 / single;
  status(`redis: PINGs in pipelines of ${BATCH}`);
  c0 = await redisCpu(r);
  const rounds = Math.max(100, (RATE * SECS) / 10);
  for (let i = 0; i < rounds; i++) {
    const p = r.pipeline();
    for (let k = 0; k < BATCH; k++) p.ping();
    await p.exec();
  }
  const perPipelinedUsec = ((await redisCpu(r)) - c0) * 1e6 / (rounds * BATCH);
  r.disconnect();
  return { perWakeupUsec: round(perWakeupUsec), perPipelinedUsec: round(perPipelinedUsec) };
}

function procCpuSec(pid) {
  const rest = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(rest[11]) + Number(rest[12])) / 100;
}

async function nodeCost() {
  const child = fork(__filename, ['--echo'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise((resolve) => child.once('message', resolve));
  const sock = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => sock.once('connect', resolve));
  sock.setNoDelay(true);
  const msg = Buffer.alloc(16, 1);
  let received = 0;
  let want = 0;
  let wake = () => {};
  sock.on('data', (d) => {
    received += d.length;
    if (received >= want) wake();
  });
  const exchange = (count) => new Promise((resolve) => {
    want = received + count * msg.length;
    wake = resolve;
    for (let i = 0; i < count; i++) sock.write(msg);
  });
  for (let i = 0; i < 2000; i++) await exchange(1); // warm up (JIT, socket buffers)
  status(`node: ${RATE} echoes/s for ${SECS}s`);
  let c0 = procCpuSec(child.pid);
  const single = await paced(() => exchange(1));
  const perWakeupUsec = (procCpuSec(child.pid) - c0) * 1e6 / single;
  status(`node: echoes in bursts of ${BATCH}`);
  c0 = procCpuSec(child.pid);
  const rounds = Math.max(100, (RATE * SECS) / 10);
  for (let i = 0; i < rounds; i++) await exchange(BATCH);
  const perBatchedUsec = (procCpuSec(child.pid) - c0) * 1e6 / (rounds * BATCH);
  sock.destroy();
  child.kill();
  return { perWakeupUsec: round(perWakeupUsec), perBatchedUsec: round(perBatchedUsec) };
}

(async () => {
  const redis = await redisCost();
  const node = await nodeCost();
  process.stdout.write(`${JSON.stringify({ rate: RATE, seconds: SECS, redis, node })}\n`);
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
