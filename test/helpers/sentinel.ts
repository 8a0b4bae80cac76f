/**
 * A real Sentinel (redis-server --sentinel) on a free loopback port that monitors
 * one primary, for tests of a node behind Sentinel: with a password of its own or
 * for the data nodes, or over TLS, as deployments run it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { sendCommand, startEmbeddedRedis, type EmbeddedRedis, type EmbeddedRedisTls } from '../../src/store/embedded-redis';
import { freePort } from './ports';
import { waitFor } from './wait';

export interface TestSentinel {
  port: number;
  /** The node's config for this Sentinel. */
  nodeConfig: { 'redis.sentinels': string[]; 'redis.sentinelName': string };
  stop(): void;
}

export interface SentinelOptions {
  /** Healthy replicas to wait for (SENTINEL FAILOVER needs them); with none, waits until it names the primary. */
  replicas?: number;
  /** Silence after which it takes the primary for down (default 1 s). */
  downAfterMs?: number;
  /** The primary's name (default mymaster). */
  name?: string;
  /** The password it gives the data nodes (sentinel auth-pass). */
  authPass?: string;
  /** A password of its own (requirepass). */
  requirepass?: string;
  /** Listens on TLS only, and reaches the data nodes over TLS. */
  tls?: EmbeddedRedisTls;
  /** The primary's hostname (default 127.0.0.1): with one, Sentinel resolves it, and names the primary by it. */
  primaryHost?: string;
}

/** Starts a Sentinel watching the primary on `primaryPort` (its TLS port with `tls`). */
export async function startSentinel(primaryPort: number, opts: SentinelOptions = {}): Promise<TestSentinel> {
  const name = opts.name ?? 'mymaster';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-sentinel-'));
  const port = await freePort();
  const conf = path.join(dir, 'sentinel.conf');
  const tls = opts.tls;
  fs.writeFileSync(conf, [
    ...(tls
      ? ['port 0', `tls-port ${port}`, `tls-cert-file ${tls.certFile}`, `tls-key-file ${tls.keyFile}`, `tls-ca-cert-file ${tls.caFile}`,
        'tls-auth-clients no', 'tls-replication yes']
      : [`port ${port}`]),
    'bind 127.0.0.1', `dir ${dir}`,
    ...(opts.primaryHost ? ['sentinel resolve-hostnames yes', 'sentinel announce-hostnames yes'] : []),
    `sentinel monitor ${name} ${opts.primaryHost ?? '127.0.0.1'} ${primaryPort} 1`,
    `sentinel down-after-milliseconds ${name} ${opts.downAfterMs ?? 1000}`,
    `sentinel failover-timeout ${name} 10000`,
    ...(opts.authPass ? [`sentinel auth-pass ${name} ${opts.authPass}`] : []),
    ...(opts.requirepass ? [`requirepass ${opts.requirepass}`] : []),
  ].join('\n'));
  const proc: ChildProcess = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  const stop = () => {
    proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const probe = new Redis({
    port, host: '127.0.0.1', password: opts.requirepass, lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: 1,
    ...(tls ? { tls: { ca: fs.readFileSync(tls.caFile) } } : {}),
  });
  probe.on('error', () => undefined);
  const ask = (...args: string[]) => probe.call('SENTINEL', ...args).catch(() => null);
  try {
    // Sentinel's own periods sized for tests, not production: it reads each replica's INFO every
    // second (10 s by default), and turns an old primary that came back into a replica 2 s after it
    // reports itself (4 publish periods: 8 s by default). With the defaults, that alone took up to
    // 18 s, and a loaded machine pushed it past the tests' waits.
    await waitFor(async () => (await ask('DEBUG', 'info-period', '1000', 'publish-period', '500')) === 'OK',
      { timeoutMs: 15000, intervalMs: 50, description: 'the Sentinel to take its periods' });
    const replicas = opts.replicas ?? 0;
    await waitFor(async () => {
      if (replicas === 0) {
        const r = await ask('get-master-addr-by-name', name);
        return Array.isArray(r) && Number(r[1]) === primaryPort;
      }
      const r = await ask('replicas', name);
      return Array.isArray(r) && r.length === replicas && r.every((f) => Array.isArray(f) && f[f.indexOf('flags') + 1] === 'slave');
    }, { timeoutMs: 15000, intervalMs: 100, description: replicas ? `the Sentinel to know ${replicas} healthy replica(s)` : 'the Sentinel to name the primary' });
  } catch (err) {
    stop();
    throw err;
  } finally {
    probe.disconnect();
  }
  return { port, nodeConfig: { 'redis.sentinels': [`127.0.0.1:${port}`], 'redis.sentinelName': name }, stop };
}

/**
 * A primary and one replica in sync with it, both without a diskless-sync delay (a
 * replica turned back after a failover syncs at once); each pushed on `servers` for the
 * test's clean-up as soon as it runs.
 */
export async function startPrimaryAndReplica(servers: EmbeddedRedis[]): Promise<{ primary: EmbeddedRedis; replica: EmbeddedRedis }> {
  const fast = ['--repl-diskless-sync-delay', '0'];
  const primary = await startEmbeddedRedis({ args: fast });
  servers.push(primary);
  const replica = await startEmbeddedRedis({ args: [...fast, '--replicaof', '127.0.0.1', String(primary.port)] });
  servers.push(replica);
  await waitFor(async () => String(await sendCommand(primary.port, ['INFO', 'replication']).catch(() => '')).includes('state=online'),
    { description: 'the replica online' });
  return { primary, replica };
}
