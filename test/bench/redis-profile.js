#!/usr/bin/env node
/**
 * Where Redis's CPU goes at full load, for zdmatch and for BullMQ: `perf record`
 * on the redis-server while `zdmatch bench` runs (each system on a redis-server
 * of its own, zdmatch with a node process of its own), then every sample put in
 * one of a few kinds of work (the commands' key lookups, the Lua interpreter,
 * the kernel, memory, …). Prints a table: share of Redis's samples and µs of
 * Redis CPU per Step (the bench's INFO cpu delta times the share).
 *
 * Lua's own functions are static in redis-server (no symbols): a sample is Lua
 * when its address lies between the first and the last exported Lua symbol.
 * Needs `perf` (apt-get install -y linux-perf) and may need
 * `sysctl kernel.perf_event_paranoid=1`.
 * Usage: npm run build && node test/bench/redis-profile.js [tasks=40000]
 */
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dist = (p) => require(path.join(__dirname, '..', '..', 'dist', p));
const { startEmbeddedRedis } = dist('store/embedded-redis');
const { startNodeProcess } = dist('cli/bench/local');

const TASKS = Number(process.argv[2] ?? 40000);
const MAIN = path.join(__dirname, '..', '..', 'dist', 'cli', 'main.js');
const status = (line) => process.stderr.write(`redis-profile: ${line}\n`);

/** [first, end) of the Lua interpreter's code in the redis-server binary. */
function luaRange(binary) {
  const lines = execFileSync('nm', ['-D', '--defined-only', binary], { encoding: 'utf8' }).split('\n');
  const addrs = lines.map((l) => l.split(' ')).filter((f) => f[1] === 'T')
    .map(([a, , name]) => ({ a: Number.parseInt(a, 16), name })).sort((x, y) => x.a - y.a);
  const lua = addrs.filter((s) => /^(lua_|luaL_|luaopen_)/.test(s.name));
  if (lua.length === 0) return [0, 0];
  // The Lua libraries end where the next non-Lua symbol after the last luaopen_ starts.
  const last = lua[lua.length - 1];
  const after = addrs.find((s) => s.a > last.a && !/^(lua|mp_|json_|strbuf_|fpconv_)/.test(s.name));
  return [lua[0].a, after ? after.a : last.a + 0x10000];
}

const KINDS = [
  ['keyspace dicts: key and command lookups, rehashing', /^(_?dict|siphash)/],
  ['script bridge: redis.call, ARGV, replies into Lua', /^(luaRedis|scriptCall|luaReply|redisProtocolToLua|luaPush|luaCreate|freeLuaRedisArgv|luaArgsToRedisArgv|luaCallFunction|evalGeneric|evalSha|luaSet|luaGetFromRegistry|callReply|luaRegister|luaMaskCountHook|scriptIs|scriptVerify|scriptPrepare|scriptReset)/],
  ['key bookkeeping: lookup, expiry, keyspace events, propagation', /^(lookupKey|expire|keyIsExpired|getExpire|setExpire|removeExpire|dbAdd|dbDelete|dbGeneric|setKey|signalModified|notifyKeyspace|moduleNotify|propagate|alsoPropagate|touchWatched|trackingInvalidate|signalKeyAsReady|rewriteClient|replaceClient|replicationFeed)/],
  ['networking and command dispatch', /(Reply|processMultibulk|processInputBuffer|processInlineBuffer|readQueryFromClient|writeToClient|connSocket|handleClientsWithPending|aeProcess|aeApiPoll|beforeSleep|processCommand|lookupCommand|^call$|resetClient|commandProcessed|freeClientArgv|prepareClientToWrite|clientHasPendingReplies|ACLCheck|moduleCallCommandFilters|listNext)/],
  ['the commands: hashes, sets, sorted sets, streams, strings', /(Command$|^(lp|hashType|zsl|zzl|zset|genericZ|stream|rax|intset|setType|listType))/],
  ['objects, sds and the allocator', /^(sds|_sds|createObject|createString|createEmbedded|createRaw|decrRefCount|incrRefCount|zmalloc|zfree|zcalloc|zrealloc|ztry|tryObjectEncoding|getDecoded|string2ll|ll2string|ull2string|getLongLong|je_|malloc|free|realloc|calloc)/],
  ['timing: latency tracking, clocks', /(hdr_|latency|ustime|mstime|gettimeofday|clock_gettime|monotonic)/],
];

function kindOf(dso, symbol, [luaStart, luaEnd]) {
  if (dso.startsWith('[kernel')) return 'kernel: syscalls, TCP, scheduling';
  const hex = /^0x([0-9a-f]+)$/.exec(symbol);
  if (hex) {
    const a = Number.parseInt(hex[1], 16);
    return a >= luaStart && a < luaEnd ? 'Lua interpreter: the scripts\' own code' : 'redis-server, unnamed';
  }
  if (/^(lua_|luaL_|luaH|luaS|luaV|luaD|luaC|luaopen)/.test(symbol)) return 'Lua interpreter: the scripts\' own code';
  if (/libc/.test(dso)) return /^(__)?(mem|str)/.test(symbol) ? 'libc: memcpy, memcmp, strings' : 'libc, other';
  for (const [kind, re] of KINDS) if (re.test(symbol)) return kind;
  return 'redis-server, other named';
}

function categorize(perfData, binary) {
  const range = luaRange(binary);
  const text = execFileSync('perf', ['report', '-i', perfData, '--no-children', '--sort', 'dso,symbol', '--stdio', '-g', 'none'],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  const kinds = new Map();
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(\S+)/.exec(line);
    if (!m) continue;
    const share = Number(m[1]);
    const kind = kindOf(m[2], m[3], range);
    kinds.set(kind, (kinds.get(kind) ?? 0) + share);
    total += share;
  }
  for (const [k, v] of kinds) kinds.set(k, v / total);
  return kinds;
}

function bench(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [MAIN, 'bench', ...args, '--json', '--no-progress'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bench exited ${code}`))));
  });
}

async function profile(system) {
  const redis = await startEmbeddedRedis();
  const node = system === 'zdmatch'
    ? await startNodeProcess(redis.url, 'zdb')
    : undefined;
  const perfData = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'redis-profile-')), 'perf.data');
  try {
    const args = system === 'zdmatch'
      ? ['--address', node.apiAddress, '--redis-url', redis.url, '--key-prefix', 'zdb', '--node-pid', String(node.node.pid)]
      : ['--system', 'bullmq', '--redis-url', redis.url];
    status(`${system}: warm-up`);
    await bench([...args, '--mode', 'throughput', '--tasks', '3000', '--warmup', '100']);
    status(`${system}: ${TASKS} Steps under perf record`);
    const perf = spawn('perf', ['record', '-F', '4999', '-p', String(redis.process.pid), '-o', perfData], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500));
    const r = await bench([...args, '--mode', 'throughput', '--tasks', String(TASKS), '--warmup', '100']);
    perf.kill('SIGINT');
    await new Promise((res) => perf.once('exit', res));
    const binary = fs.realpathSync(`/proc/${redis.process.pid}/exe`);
    return { kinds: categorize(perfData, binary), redisUsec: r.redis.cpuUsecPerTask, tasksPerSec: r.tasksPerSec };
  } finally {
    fs.rmSync(path.dirname(perfData), { recursive: true, force: true });
    await node?.stop();
    await redis.stop();
  }
}

async function main() {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    process.stderr.write('redis-profile: needs perf on PATH (apt-get install -y linux-perf)\n');
    process.exit(2);
  }
  const zd = await profile('zdmatch');
  const bull = await profile('bullmq');
  const names = [...new Set([...zd.kinds.keys(), ...bull.kinds.keys()])]
    .sort((a, b) => (zd.kinds.get(b) ?? 0) * zd.redisUsec - (zd.kinds.get(a) ?? 0) * zd.redisUsec);
  const cell = (r, k) => {
    const s = r.kinds.get(k) ?? 0;
    return `${(s * 100).toFixed(1).padStart(5)} % ${(s * r.redisUsec).toFixed(1).padStart(5)} µs`;
  };
  const width = Math.max(...names.map((n) => n.length));
  console.log(`${'Redis CPU per Step, by kind of work'.padEnd(width)}  ${'zdmatch'.padEnd(16)}  BullMQ`);
  for (const k of names) console.log(`${k.padEnd(width)}  ${cell(zd, k)}  ${cell(bull, k)}`);
  console.log(`${'total (INFO cpu)'.padEnd(width)}  ${`${zd.redisUsec} µs`.padStart(16)}  ${`${bull.redisUsec} µs`.padStart(14)}`);
  console.log(`${'Steps/s under perf'.padEnd(width)}  ${String(zd.tasksPerSec).padStart(16)}  ${String(bull.tasksPerSec).padStart(14)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
