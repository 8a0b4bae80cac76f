/**
 * `zdmatch dev` with a Redis configured: it uses that Redis, and starts no
 * private redis-server (docs: "starts a private redis-server when no Redis is
 * configured"). Needs `npm run build` (npm test does it).
 */
import { runCliAsync } from '../helpers/cli';
import { startDev } from '../helpers/dev-process';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();

it('uses the configured Redis, names it in the banner, and starts no private redis-server', async () => {
  const prefix = uniquePrefix('dev-redis');
  const dev = await startDev([`--redis.url=${redis.url}`, `--redis.keyPrefix=${prefix}`]);
  try {
    await dev.banner();
    const out = dev.output();
    expect(/^ {2}redis +(.*)$/m.exec(out)?.[1]).toBe(redis.url);
    expect(out).not.toContain('private redis-server');
    expect(out).toMatch(/^ {2}auth +OFF: /m);
    const r = await runCliAsync(['enqueue', '--address', `127.0.0.1:${dev.ports.api}`, '--tenant', 'acme', '--flow-id', 'f1', '--flow-type', 'order',
      '--step-type', 'charge', '--step-execution-id', 's1'], { env: dev.env });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    // The Step is in the Redis that was configured.
    const keys = await redis.command('KEYS', `${prefix}:*`);
    expect(Array.isArray(keys) && keys.length).toBeGreaterThan(0);
    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
  } finally {
    dev.child.kill('SIGKILL');
  }
}, 60_000);

it('keeps auth on when a flag sets auth.enabled: the banner says so and a call without a token is refused', async () => {
  const prefix = uniquePrefix('dev-auth');
  const dev = await startDev([`--redis.url=${redis.url}`, `--redis.keyPrefix=${prefix}`, '--auth.enabled=true']);
  try {
    await dev.banner();
    expect(dev.output()).toMatch(/^ {2}auth +on /m);
    const r = await runCliAsync(['enqueue', '--address', `127.0.0.1:${dev.ports.api}`, '--tenant', 'acme', '--flow-id', 'f1', '--flow-type', 'order',
      '--step-type', 'charge', '--step-execution-id', 's1'], { env: dev.env });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('ZD_UNAUTHENTICATED');
    expect(await redis.command('KEYS', `${prefix}:*q:*`)).toEqual([]);
    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
  } finally {
    dev.child.kill('SIGKILL');
  }
}, 60_000);
