/**
 * A real Sentinel (redis-server --sentinel) on a free loopback port that monitors
 * one primary as `mymaster`, for tests of a node behind Sentinel.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sendCommand } from '../../src/store/embedded-redis';
import { freePort } from './ports';
import { waitFor } from './wait';

export interface TestSentinel {
  port: number;
  /** The node's config for this Sentinel. */
  nodeConfig: { 'redis.sentinels': string[]; 'redis.sentinelName': string };
  stop(): void;
}

/**
 * Starts a Sentinel that fails over after `downAfterMs` of silence, and waits
 * until it knows `replicas` healthy replicas (SENTINEL FAILOVER needs them).
 */
export async function startSentinel(primaryPort: number, opts: { replicas: number; downAfterMs?: number }): Promise<TestSentinel> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-sentinel-'));
  const port = await freePort();
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(conf, [
    `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
    `sentinel monitor mymaster 127.0.0.1 ${primaryPort} 1`,
    `sentinel down-after-milliseconds mymaster ${opts.downAfterMs ?? 1000}`,
    'sentinel failover-timeout mymaster 10000',
  ].join('\n'));
  const proc: ChildProcess = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  const stop = () => {
    proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => {
      const r = await sendCommand(port, ['SENTINEL', 'replicas', 'mymaster']).catch(() => null);
      return Array.isArray(r) && r.length === opts.replicas && r.every((f) => Array.isArray(f) && f[f.indexOf('flags') + 1] === 'slave');
    }, { timeoutMs: 15000, intervalMs: 100, description: `the Sentinel to know ${opts.replicas} healthy replica(s)` });
  } catch (err) {
    stop();
    throw err;
  }
  return { port, nodeConfig: { 'redis.sentinels': [`127.0.0.1:${port}`], 'redis.sentinelName': 'mymaster' }, stop };
}
