#!/usr/bin/env node
/**
 * Top self-time functions of a V8 .cpuprofile (node --cpu-prof).
 *   node scripts/cpuprofile-top.js <file.cpuprofile> [n=25]
 */
'use strict';
const fs = require('node:fs');
const [file, nArg = '25'] = process.argv.slice(2);
const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++) {
  const id = prof.samples[i];
  self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
}
const total = dt.reduce((s, x) => s + x, 0);
const agg = new Map();
for (const [id, us] of self) {
  const cf = byId.get(id).callFrame;
  const where = cf.url ? `${cf.url.replace(/^file:\/\//, '').replace(process.cwd() + '/', '')}:${cf.lineNumber + 1}` : '';
  const key = `${cf.functionName || '(anonymous)'} ${where}`;
  agg.set(key, (agg.get(key) ?? 0) + us);
}
const rows = [...agg].sort((a, b) => b[1] - a[1]).slice(0, Number(nArg));
process.stdout.write(`total sampled ${(total / 1000).toFixed(0)} ms\n`);
for (const [k, us] of rows) process.stdout.write(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}\n`);
