/**
 * `zdmatch serve` and `zdmatch dev` as real processes: readiness, SIGTERM
 * drain → exit 0, SIGKILL, and dev's private redis-server. Needs the node
 * module (src/node/node.ts) and `npm run build`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { freePorts } from '../helpers/ports';
import { CLI_MAIN, REPO_ROOT, startNodeProcess } from '../helpers/node-process';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).once('error', reject);
  });
}

describe('zdmatch serve', () => {
  const redis = useEmbeddedRedis();

  it('fails before readiness with the config error in its output', async () => {
    await expect(startNodeProcess({ redisUrl: redis.url, config: { matching: { syncMatchWait: '0' } } })).rejects.toThrow(
      /exited \(2\) before it was ready[\s\S]*config matching\.syncMatchWait: must be greater than 0/,
    );
  });

  it('becomes ready, serves /healthz, and drains on SIGTERM with exit 0', async () => {
    const node = await startNodeProcess({ redisUrl: redis.url, keyPrefix: uniquePrefix(), config: { drain: { timeout: '5s' } } });
    try {
      expect(await get(`http://${node.metricsAddress}/healthz`)).toBe(200);
      expect(node.logs()).toContain('zdmatch node started');
    } finally {
      expect(await node.stop()).toBe(0);
    }
  });

  it('dies on SIGKILL', async () => {
    const node = await startNodeProcess({ redisUrl: redis.url, keyPrefix: uniquePrefix() });
    expect(await node.kill('SIGKILL')).toBe('SIGKILL');
  });
});

describe('zdmatch dev', () => {
  it('starts a private redis-server, prints the banner, and cleans up on SIGINT', async () => {
    const [api, httpPort, internal, metrics] = await freePorts(4);
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_')));
    const child = spawn(
      process.execPath,
      [CLI_MAIN, 'dev', `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`,
        `--internal.listen=127.0.0.1:${internal}`, `--metrics.listen=127.0.0.1:${metrics}`, '--drain.timeout=5s'],
      { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const early = new AbortController();
      void exited.then((code) => early.abort(new Error(`dev exited (${code}) before its banner:\n${out}`)));
      await waitFor(() => out.includes('Ctrl-C drains and stops.'), { timeoutMs: 30000, signal: early.signal }).catch((err: Error) => {
        throw early.signal.aborted ? err : new Error(`${err.message}; output:\n${out}`);
      });
      expect(out).toContain(`127.0.0.1:${api}`);
      const dataDir = /data in (\S+), removed on exit/.exec(out)?.[1];
      expect(dataDir).toBeDefined();
      expect(fs.existsSync(dataDir!)).toBe(true);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(fs.existsSync(dataDir!)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
