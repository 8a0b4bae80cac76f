/**
 * Every key under a prefix with its type and size: what "Redis unchanged" compares
 * around a refused call. Left out: heartbeats, node keys and leases, and each
 * partition's set of queues unless `withQueues` (for a test that enqueues nothing):
 * the owner's count prunes that set on its own schedule (a Step just started leaves
 * its queue empty). A write for a refused call would show in the task, queue, flow or
 * outcome keys all the same.
 */
import type { TestRedis } from './redis';

export async function keySnapshot(redis: TestRedis, prefix: string, opts: { withQueues?: boolean } = {}): Promise<string[]> {
  const keys = ((await redis.command('KEYS', `${prefix}:*`)) as string[])
    .filter((k) => !k.endsWith(':members') && !k.includes(':node:') && !k.endsWith(':lease') && (opts.withQueues || !k.endsWith(':queues')));
  const out: string[] = [];
  for (const k of keys.sort()) {
    const type = String(await redis.command('TYPE', k));
    const size = type === 'zset' ? await redis.command('ZCARD', k) : type === 'stream' ? await redis.command('XLEN', k)
      : type === 'set' ? await redis.command('SCARD', k) : type === 'hash' ? await redis.command('HLEN', k) : '';
    out.push(`${k} ${type} ${String(size)}`);
  }
  return out;
}
