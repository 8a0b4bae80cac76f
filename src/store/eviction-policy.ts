/**
 * Redis's maxmemory-policy, read at boot. Any policy but noeviction lets Redis
 * drop keys under memory pressure without an error to anyone: allkeys-* take
 * task hashes (their queue entries stay, the Steps are lost), volatile-* take
 * the keys with a TTL (done records, whose outcomes then vanish before
 * outcomes.retention; sticky keys; leases). Redis answers writes with OOM under
 * noeviction instead, which producers see and retry.
 */
import { Cluster } from 'ioredis';
import type { RedisClient } from './redis';

export interface EvictionPolicy {
  /** host:port of the primary read, or '' for the one primary of a client that is not a Cluster. */
  server: string;
  /** The policy, or undefined where CONFIG GET is refused (renamed or not allowed, as managed Redis services do). */
  policy: string | undefined;
  /** Why it could not be read. */
  error?: string;
}

type ConfigGetter = { config(op: 'GET', name: string): Promise<unknown> };

async function readPolicy(client: ConfigGetter, server: string): Promise<EvictionPolicy> {
  try {
    const reply = await client.config('GET', 'maxmemory-policy');
    const policy = Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
    return policy === undefined ? { server, policy, error: 'CONFIG GET returned no maxmemory-policy' } : { server, policy };
  } catch (err) {
    return { server, policy: undefined, error: (err as Error).message };
  }
}

/** Each primary's policy: every master of a Cluster, else the one primary. */
export async function evictionPolicies(redis: RedisClient): Promise<EvictionPolicy[]> {
  if (!(redis instanceof Cluster)) return [await readPolicy(redis, '')];
  return Promise.all(redis.nodes('master').map((n) => readPolicy(n, `${n.options.host}:${n.options.port}`)));
}
