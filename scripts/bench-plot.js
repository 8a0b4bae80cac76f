#!/usr/bin/env node
/**
 * Plots p99 submit→start latency against offered rate for zdmatch and BullMQ
 * from docs/benchmarks/results.json (test/bench/compare.test.ts): writes an
 * SVG next to the PNG and converts it with `rsvg-convert` (Debian package
 * librsvg2-bin). No browser, no native npm module.
 *
 *   node scripts/bench-plot.js docs/benchmarks/results.json docs/benchmarks/latency.png
 */
'use strict';
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

const [file, png] = process.argv.slice(2);
if (!file || !png) {
  process.stderr.write('usage: bench-plot.js <results.json> <out.png>\n');
  process.exit(2);
}
const res = JSON.parse(fs.readFileSync(file, 'utf8'));
const rates = Object.keys(res.atRate).map(Number).sort((a, b) => a - b);
const series = [
  { name: 'zdmatch p99', color: '#1f77b4', pts: rates.map((r) => [r, res.atRate[r].zdmatch.submitToStartP99]) },
  { name: 'BullMQ 6.7 p99', color: '#d62728', pts: rates.map((r) => [r, res.atRate[r].bullmq.submitToStartP99]) },
  { name: 'zdmatch p50', color: '#1f77b4', dash: true, pts: rates.map((r) => [r, res.atRate[r].zdmatch.submitToStartP50]) },
  { name: 'BullMQ 6.7 p50', color: '#d62728', dash: true, pts: rates.map((r) => [r, res.atRate[r].bullmq.submitToStartP50]) },
];
const targets = [[1000, 2], [5000, 5]];

const W = 800, H = 500, L = 80, R = 190, T = 50, B = 60;
const pw = W - L - R, ph = H - T - B;
const all = series.flatMap((s) => s.pts.map((p) => p[1])).filter((v) => v > 0);
const yMin = Math.pow(10, Math.floor(Math.log10(Math.min(0.1, ...all))));
const yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(10, ...all))));
const xMax = Math.max(...rates) * 1.05;
const x = (v) => L + (v / xMax) * pw;
const y = (v) => T + ph - ((Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * ph;

const out = [];
out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif" font-size="12">`);
out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
out.push(`<text x="${L + pw / 2}" y="25" text-anchor="middle" font-size="15">Enqueue-to-start latency vs offered rate (${res.machine.nproc} cores, Redis ${res.machine.redis}; median of ${res.settings.runs} runs)</text>`);
for (let e = Math.log10(yMin); e <= Math.log10(yMax); e++) {
  const v = Math.pow(10, e);
  out.push(`<line x1="${L}" x2="${L + pw}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
  out.push(`<text x="${L - 8}" y="${y(v) + 4}" text-anchor="end">${v >= 1 ? v : v.toFixed(-e)} ms</text>`);
}
for (const r of rates) {
  out.push(`<line x1="${x(r)}" x2="${x(r)}" y1="${T}" y2="${T + ph}" stroke="#eee"/>`);
  out.push(`<text x="${x(r)}" y="${T + ph + 18}" text-anchor="middle">${r}</text>`);
}
out.push(`<rect x="${L}" y="${T}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
out.push(`<text x="${L + pw / 2}" y="${H - 15}" text-anchor="middle">offered rate (Steps or jobs per second)</text>`);
out.push(`<text transform="translate(20 ${T + ph / 2}) rotate(-90)" text-anchor="middle">producer send → handler start (ms, log scale)</text>`);
for (const [r, ms] of targets) {
  out.push(`<path d="M ${x(r) - 6} ${y(ms)} h 12" stroke="#2ca02c" stroke-width="3"/>`);
}
series.forEach((s, i) => {
  const d = s.pts.filter((p) => p[1] > 0).map((p, k) => `${k ? 'L' : 'M'} ${x(p[0]).toFixed(1)} ${y(p[1]).toFixed(1)}`).join(' ');
  out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2" ${s.dash ? 'stroke-dasharray="6 4"' : ''}/>`);
  for (const p of s.pts) if (p[1] > 0) out.push(`<circle cx="${x(p[0])}" cy="${y(p[1])}" r="3.5" fill="${s.color}"/>`);
  const ly = T + 10 + i * 22;
  out.push(`<path d="M ${L + pw + 15} ${ly} h 30" stroke="${s.color}" stroke-width="2" ${s.dash ? 'stroke-dasharray="6 4"' : ''}/>`);
  out.push(`<text x="${L + pw + 52}" y="${ly + 4}">${s.name}</text>`);
});
const ty = T + 10 + series.length * 22;
out.push(`<path d="M ${L + pw + 24} ${ty} h 12" stroke="#2ca02c" stroke-width="3"/><text x="${L + pw + 52}" y="${ty + 4}">issue 8 p99 target</text>`);
out.push('</svg>');
const svg = png.replace(/\.png$/, '.svg');
fs.writeFileSync(svg, out.join('\n'));
try {
  execFileSync('rsvg-convert', ['-f', 'png', '-o', png, svg]);
} catch (err) {
  // The SVG is written either way; only the PNG needs the converter.
  if (err.code !== 'ENOENT') throw err;
  process.stderr.write(`bench-plot: rsvg-convert not found, wrote ${svg} only (for the PNG: apt-get install -y librsvg2-bin)\n`);
  process.exit(1);
}
process.stdout.write(`${png}\n`);
