/**
 * `zdmatch bench --local`: a private redis-server (startEmbeddedRedis) and a
 * node process (`node dist/cli/main.js serve`) on free loopback ports, both
 * stopped at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { findFreePort, startEmbeddedRedis, type EmbeddedRedis } from '../../store/embedded-redis';

export interface LocalEnv {
  redis: EmbeddedRedis;
  node: ChildProcess;
  apiAddress: string;
  metricsAddress: string;
  redisUrl: string;
  keyPrefix: string;
  stop(): Promise<void>;
}

export interface LocalOptions {
  /** Write a V8 CPU profile of the node process into this directory. */
  cpuProfDir?: string;
  /** Extra `--section.key=value` flags for the node. */
  nodeFlags?: string[];
  /** An existing Redis to use instead of a private one. */
  redisUrl?: string;
}

function healthy(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(`http://${address}/healthz`, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Starts a node process against `redisUrl`; resolves once /healthz answers 200. */
export async function startNodeProcess(redisUrl: string, keyPrefix: string, opts: LocalOptions = {}): Promise<{ node: ChildProcess; apiAddress: string; metricsAddress: string; stop(): Promise<void> }> {
  const ports: number[] = [];
  while (ports.length < 4) {
    const p = await findFreePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const [api, httpPort, internal, metrics] = ports as [number, number, number, number];
  const main = path.join(__dirname, '..', 'main.js');
  const execArgv = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [];
  const args = [
    ...execArgv, main, 'serve',
    `--redis.url=${redisUrl}`, `--redis.keyPrefix=${keyPrefix}`,
    `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`,
    `--internal.listen=127.0.0.1:${internal}`, `--metrics.listen=127.0.0.1:${metrics}`,
    `--cluster.nodeId=bench-${process.pid}-${api}`, '--log.level=warn', '--drain.timeout=2s', '--auth.enabled=false',
    ...(opts.nodeFlags ?? []),
  ];
  const node = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const keep = (c: Buffer) => {
    out.push(c.toString('utf8'));
    if (out.length > 50) out.shift();
  };
  node.stdout!.on('data', keep);
  node.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => node.once('exit', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  process.once('exit', () => {
    if (!gone) node.kill('SIGKILL');
  });
  const metricsAddress = `127.0.0.1:${metrics}`;
  const deadline = Date.now() + 30_000;
  while (!(await healthy(metricsAddress))) {
    if (gone) throw new Error(`node exited before it was ready: ${out.join('').slice(-2000)}`);
    if (Date.now() > deadline) {
      node.kill('SIGKILL');
      throw new Error(`node was not ready within 30s: ${out.join('').slice(-2000)}`);
    }
    await sleep(50);
  }
  return {
    node,
    apiAddress: `127.0.0.1:${api}`,
    metricsAddress,
    async stop() {
      if (gone) return;
      node.kill('SIGTERM');
      const t = setTimeout(() => node.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

export async function startLocal(opts: LocalOptions = {}): Promise<LocalEnv> {
  const redis = await startEmbeddedRedis();
  const keyPrefix = 'zdb';
  try {
    const n = await startNodeProcess(redis.url, keyPrefix, opts);
    return {
      redis, node: n.node, apiAddress: n.apiAddress, metricsAddress: n.metricsAddress, redisUrl: redis.url, keyPrefix,
      async stop() {
        await n.stop();
        await redis.stop();
      },
    };
  } catch (err) {
    await redis.stop();
    throw err;
  }
}
