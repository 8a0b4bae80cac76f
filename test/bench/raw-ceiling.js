#!/usr/bin/env node
/**
 * The raw ceiling of a Redis: EVALSHA of a 3-key script in a tight pipelined
 * loop (`evalsha`), and a bare 3-script task cycle (`cycle`: enqueue, start,
 * complete, each one script over 3 keys). Prints one JSON line:
 *   { mode, ops, seconds, opsPerSec, redisCpuUsecPerOp, commandsPerOp }
 * Usage: node test/bench/raw-ceiling.js <redis-url> <evalsha|cycle> [seconds=3]
 */
'use strict';
const { Redis } = require('ioredis');

const ENQ = `redis.call('HSET', KEYS[1], 'state', 'queued', 'input', ARGV[2], 'enqueuedAt', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1`;
const START = `local s = redis.call('HGET', KEYS[1], 'state')
if s ~= 'queued' then return -2 end
redis.call('HSET', KEYS[1], 'state', 'running', 'startedAt', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
return redis.call('HGET', KEYS[1], 'input')`;
const DONE = `redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', '100000', '*', 'taskId', ARGV[1], 'status', 'COMPLETED', 'finishedAt', ARGV[2])
redis.call('DEL', KEYS[1])
return 1`;

function info(text, key) {
  const m = new RegExp(`^${key}:([\\d.]+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}
async function snap(r) {
  const cpu = await r.info('cpu');
  const stats = await r.info('commandstats');
  let calls = 0;
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') calls += Number(m[2]);
  return { cpu: info(cpu, 'used_cpu_sys') + info(cpu, 'used_cpu_user'), calls };
}

function resp(args) {
  let out = `*${args.length}\r\n`;
  for (const a of args) out += `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`;
  return out;
}

/**
 * A raw pipelined RESP writer (no client library on the hot path, so the
 * client is not the bottleneck): keeps `depth` commands in flight; replies
 * have a known size, so counting bytes counts replies.
 */
function blast(port, makeChunk, replyBytesPerUnit, unitsPerChunk, seconds, depthChunks) {
  const net = require('node:net');
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let received = 0;
    let sentUnits = 0;
    let stop = false;
    const until = Date.now() + seconds * 1000;
    let chunkNo = 0;
    const pump = () => {
      while (!stop && sentUnits * replyBytesPerUnit - received < depthChunks * unitsPerChunk * replyBytesPerUnit) {
        sock.write(makeChunk(chunkNo++));
        sentUnits += unitsPerChunk;
      }
    };
    sock.on('data', (d) => {
      received += d.length;
      if (Date.now() >= until) stop = true;
      if (stop && received >= sentUnits * replyBytesPerUnit) {
        sock.destroy();
        resolve(sentUnits);
        return;
      }
      pump();
    });
    sock.once('error', reject);
    sock.once('connect', pump);
  });
}

async function main() {
  const [url, mode = 'evalsha', secs = '3'] = process.argv.slice(2);
  const r = new Redis(url);
  const port = Number(new URL(url).port);
  const seconds = Number(secs);
  const enq = await r.script('LOAD', ENQ);
  const start = await r.script('LOAD', START);
  const done = await r.script('LOAD', DONE);
  const P = 'raw:{1}:';
  const UNITS = 200;
  const CHUNKS = 256; // distinct pre-encoded chunks, reused round robin
  const chunks = [];
  let seq = 0;
  for (let c = 0; c < CHUNKS; c++) {
    let s = '';
    const now = String(Date.now());
    const ids = [];
    for (let i = 0; i < UNITS; i++) ids.push(String(seq++));
    if (mode === 'evalsha') {
      for (const id of ids) s += resp(['EVALSHA', enq, 3, `${P}t:${id}`, `${P}q`, `${P}queues`, id, 'x', now]);
    } else {
      for (const id of ids) s += resp(['EVALSHA', enq, 3, `${P}t:${id}`, `${P}q`, `${P}flow`, id, 'x', now]);
      for (const id of ids) s += resp(['EVALSHA', start, 3, `${P}t:${id}`, `${P}q`, `${P}inflight`, id, now]);
      for (const id of ids) s += resp(['EVALSHA', done, 3, `${P}t:${id}`, `${P}inflight`, `${P}out`, id, now]);
    }
    chunks.push(Buffer.from(s));
  }
  // evalsha: reply ":1\r\n" (4 bytes); cycle: ":1\r\n" + "$1\r\nx\r\n" + ":1\r\n" (15 bytes).
  const replyBytes = mode === 'evalsha' ? 4 : 15;
  const s0 = await snap(r);
  const t0 = process.hrtime.bigint();
  // In cycle mode a reused chunk re-runs tasks that already completed: enqueue
  // re-creates the hash, so every unit is still a full 3-script cycle.
  const ops = await blast(port, (n) => chunks[n % CHUNKS], replyBytes, UNITS, seconds, 8);
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  const s1 = await snap(r);
  await r.del(`${P}q`, `${P}queues`, `${P}flow`, `${P}inflight`, `${P}out`);
  r.disconnect();
  process.stdout.write(`${JSON.stringify({
    mode, ops, seconds: Math.round(sec * 1000) / 1000, opsPerSec: Math.round(ops / sec),
    redisCpuUsecPerOp: Math.round(((s1.cpu - s0.cpu) * 1e6 / ops) * 10) / 10,
    commandsPerOp: Math.round(((s1.calls - s0.calls) / ops) * 100) / 100,
    redisCpuUtilization: Math.round(((s1.cpu - s0.cpu) / sec) * 100) / 100,
  })}\n`);
}
main().catch((e) => { console.error(e); process.exit(1); });
