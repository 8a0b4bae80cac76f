/**
 * deploy/haproxy/zdmatch.cfg against the node's defaults. Worker streams and
 * long polls stay silent for as long as the node lets them (pingInterval,
 * busyStreamSilence, limits.maxWait, fetch.maxWait): a timeout client or
 * timeout server at or below any of them cuts healthy streams.
 * test/e2e/haproxy.test.ts runs the file, but never long enough to meet a
 * timeout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { silencesCutBy } from '../helpers/stream-silences';

const text = fs.readFileSync(path.join(__dirname, '..', '..', 'deploy', 'haproxy', 'zdmatch.cfg'), 'utf8');
const defaults = loadConfig({ env: {} });

/** The arguments of a keyword (comments left out), one per occurrence. */
function keyword(name: string): string[] {
  const lines = text.split('\n').map((l) => l.replace(/#.*/, '').trim());
  return lines.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length).trim());
}

function only(name: string): string {
  const values = keyword(name);
  expect(values).toHaveLength(1);
  return values[0]!;
}

/** An HAProxy time ("300s", "5m", "1h"; a bare number is milliseconds) in milliseconds. */
function haproxyMs(value: string): number {
  const m = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (!m) throw new Error(`not an HAProxy time: ${value}`);
  const unit = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 'ms']!;
  return Number(m[1]) * unit;
}

it.each(['timeout client', 'timeout server'])('sets %s above every silence the node allows a stream', (name) => {
  expect(silencesCutBy(haproxyMs(only(name)))).toEqual([]);
});

it('admits as many streams on a connection as the node does', () => {
  expect(Number(only('tune.h2.max-concurrent-streams'))).toBeGreaterThanOrEqual(defaults.limits.maxStreamsPerConnection);
});

it('speaks HTTP/2 on both sides and checks every server on /readyz', () => {
  expect(only('bind')).toMatch(/ proto h2$/);
  const servers = keyword('server');
  expect(servers.length).toBeGreaterThanOrEqual(2);
  for (const s of servers) expect(s).toMatch(/ proto h2 check port \d+ check-proto h1$/);
  expect(only('option httpchk')).toBe('GET /readyz');
});
