/**
 * deploy/nginx/zdmatch.conf against the node's defaults. Worker streams and
 * long polls stay silent for as long as the node lets them (pingInterval,
 * busyStreamSilence, limits.maxWait, fetch.maxWait): a proxy timeout at or
 * below any of them cuts healthy streams with INTERNAL. test/e2e/nginx.test.ts
 * runs the file, but never long enough to meet a timeout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { silencesCutBy } from '../helpers/stream-silences';

const text = fs.readFileSync(path.join(__dirname, '..', '..', 'deploy', 'nginx', 'zdmatch.conf'), 'utf8');
const defaults = loadConfig({ env: {} });

/** The values of a directive (comments left out), one per occurrence. */
function directive(name: string): string[] {
  const lines = text.split('\n').map((l) => l.replace(/#.*/, '').trim());
  return lines.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length).replace(/;$/, '').trim());
}

/** An nginx time ("300s", "5m", "1h"; a bare number is seconds) in milliseconds. */
function nginxMs(value: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  if (!m) throw new Error(`not an nginx time: ${value}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 's']!;
  return Number(m[1]) * unit;
}

function only(name: string): string {
  const values = directive(name);
  expect(values).toHaveLength(1);
  return values[0]!;
}

it.each(['grpc_read_timeout', 'grpc_send_timeout', 'client_body_timeout'])('sets %s above every silence the node allows a stream', (name) => {
  expect(silencesCutBy(nginxMs(only(name)))).toEqual([]);
});

it('counts no limit on the bytes a worker sends over a stream\'s life', () => {
  expect(only('client_max_body_size')).toBe('0');
});

it('admits as many streams on a connection as the node does', () => {
  expect(Number(only('http2_max_concurrent_streams'))).toBeGreaterThanOrEqual(defaults.limits.maxStreamsPerConnection);
});

it('passes gRPC to the gateways over HTTP/2, to every upstream of the group', () => {
  expect(only('grpc_pass')).toBe('grpc://zdmatch_grpc');
  expect(text).toMatch(/upstream zdmatch_grpc \{/);
  expect(directive('server').length).toBeGreaterThanOrEqual(2);
});
