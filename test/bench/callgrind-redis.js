/**
 * A private redis-server under `valgrind --tool=callgrind`, for benchmarks
 * that count the instructions Redis executes (redis-cycle.js --callgrind).
 * `zero()` resets the counts; `dump()` writes them and returns the
 * instructions since the last zero: all of them, and those inside command
 * execution (Redis's `call`, inclusive). With `cacheSim`, callgrind also
 * simulates the caches, and `dump()` adds the first-level and last-level
 * cache misses (instruction and data): what a change that saves memory
 * traffic rather than work is worth, repeatably. It runs about twice as slowly.
 * Needs valgrind (apt-get install -y valgrind).
 */
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Redis = require('ioredis');
const { findFreePort, findOnPath } = require('../../dist/store/embedded-redis');

async function startUnderCallgrind({ cacheSim = false } = {}) {
  const bin = findOnPath('redis-server');
  if (!bin || !findOnPath('valgrind')) throw new Error('needs redis-server and valgrind on PATH (apt-get install -y valgrind)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-callgrind-'));
  const port = await findFreePort();
  const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${dir}/cg.out`, `--cache-sim=${cacheSim ? 'yes' : 'no'}`,
    bin, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
    '--protected-mode', 'no'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  const url = `redis://127.0.0.1:${port}`;
  // valgrind takes seconds to start redis-server
  for (let i = 0; ; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (i > 120 || child.exitCode !== null) throw new Error(`redis-server under valgrind did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  let dumps = 0;
  const control = (...args) => execFileSync('callgrind_control', [...args, String(child.pid)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return {
    url,
    zero: () => control('-z'),
    dump: () => {
      control('-d');
      dumps += 1;
      const file = `${dir}/cg.out.${dumps}`;
      const text = fs.readFileSync(file, 'utf8');
      // events: Ir [Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw]; summary: their totals, in that order
      const events = (/^events:\s+(.*)$/m.exec(text)?.[1] ?? 'Ir').trim().split(/\s+/);
      const sums = (/^summary:\s+(.*)$/m.exec(text)?.[1] ?? '').trim().split(/\s+/).map(Number);
      const of = (name) => sums[events.indexOf(name)] ?? 0;
      const total = of('Ir');
      const misses = cacheSim
        ? { l1: of('I1mr') + of('D1mr') + of('D1mw'), ll: of('ILmr') + of('DLmr') + of('DLmw') }
        : undefined;
      const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file],
        { encoding: 'utf8', maxBuffer: 64 << 20 });
      const line = annotated.split('\n').find((l) => /\s\?\?\?:call \[/.test(l) || /[:\s]call \[/.test(l));
      const commands = line ? Number(line.trim().split(/\s+/)[0].replace(/,/g, '')) : Number.NaN;
      return { total, commands, misses };
    },
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      if (!process.env.CALLGRIND_KEEP) fs.rmSync(dir, { recursive: true, force: true });
      else process.stderr.write(`callgrind dumps kept in ${dir}\n`);
    },
  };
}

module.exports = { startUnderCallgrind };
