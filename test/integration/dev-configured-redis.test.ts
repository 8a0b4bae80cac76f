/**
 * `zdmatch dev` with a Redis configured: it uses that Redis, and starts no
 * private redis-server (docs: "starts a private redis-server when no Redis is
 * configured"). Needs `npm run build` (npm test does it).
 */
import { spawn } from 'node:child_process';
import { runCliAsync } from '../helpers/cli';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { freePorts } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

it('uses the configured Redis, names it in the banner, and starts no private redis-server', async () => {
  const prefix = uniquePrefix('dev-redis');
  const [api, httpPort, internal, metrics] = await freePorts(4);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_')));
  const child = spawn(process.execPath, [CLI_MAIN, 'dev', `--redis.url=${redis.url}`, `--redis.keyPrefix=${prefix}`,
    `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`, `--internal.listen=127.0.0.1:${internal}`,
    `--metrics.listen=127.0.0.1:${metrics}`, '--drain.timeout=1s'],
  { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    await waitFor(() => out.includes('Ctrl-C drains and stops.'), { timeoutMs: 30_000, description: 'the dev banner' }).catch((err: Error) => {
      throw new Error(`${err.message}; output:\n${out}`);
    });
    expect(/^ {2}redis +(.*)$/m.exec(out)?.[1]).toBe(redis.url);
    expect(out).not.toContain('private redis-server');
    expect(out).toMatch(/^ {2}auth +OFF: /m);
    const r = await runCliAsync(['enqueue', '--address', `127.0.0.1:${api}`, '--tenant', 'acme', '--flow-id', 'f1', '--flow-type', 'order',
      '--step-type', 'charge', '--step-execution-id', 's1'], { env });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    // The Step is in the Redis that was configured.
    const keys = await redis.command('KEYS', `${prefix}:*`);
    expect(Array.isArray(keys) && keys.length).toBeGreaterThan(0);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
}, 60_000);
