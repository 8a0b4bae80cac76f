/**
 * Redis-link cuts of the chaos soak (chaos.test.ts): one node cut off from
 * Redis while it keeps running and its peers still reach Redis. Every node
 * dials the redis-server through a TCP proxy of its own (test/helpers/tcp-proxy.ts),
 * which outlives the node's restarts and Redis's (same ports). Now and then one
 * node's proxy is broken for 200 ms to about twice `cluster.leaseTtl`, then healed:
 *
 * - black-holed (half the cuts): the node's calls to Redis, its lease
 *   renewals, heartbeats, start scripts and results, get no answer, not even a
 *   close, and wait;
 * - refused (the other half): its connections are reset and new ones refused,
 *   so its calls fail as Redis being unreachable.
 *
 * Past `cluster.nodeTtl` its peers drop it from the members, past the lease
 * they take its partitions under a higher epoch, and meanwhile its workers'
 * results cannot be recorded. When the link heals, what it held is stale:
 * DESIGN §3 says its owner scripts carry the old epoch and are refused, and the
 * start script lets one offer win (safety never rests on the lease, §11.5); a
 * late result is refused (§6). So every end-of-run invariant holds as it is.
 *
 * The RPC check keeps its rule too (rpc-load.ts): RPCs are never written to
 * Redis (§4, §11.7) and a node routes them from its capacity view in memory;
 * the one read a call may make, the sticky worker its flow remembers, waits
 * 250 ms at most and the call goes on without it. So a node cut from Redis
 * still runs calls on its own slots (and hands them to peers over the mesh),
 * and answers OK, the handler's failure or UNAVAILABLE (dispatchWait, the
 * caller's timeout) in time, and never runs one twice. A cut excuses nothing:
 * no DEADLINE_EXCEEDED (the node is not frozen), no late answer.
 *
 * Single redis-server mode only: on a Redis Cluster (SOAK_REDIS=cluster or
 * cluster-replicated) a node would need a proxy per Redis server and the
 * Cluster to announce those proxies' addresses to it alone, which it cannot
 * (one announced address per server). There the soak runs without cuts.
 *
 * One cut at a time, with a pause of 1 to 3 s between two, on the shared schedule
 * and dice of its own. The loop ends at `until`; `stop()` heals the cut under
 * way, `halt()` (afterAll) heals every proxy at once. SOAK_REDIS_CUTS=0 leaves
 * them out (the nodes then dial Redis directly).
 */
import { tcpProxy } from '../helpers/tcp-proxy';
import { ProxyBreaks } from './proxy-breaks';

export interface RedisCutsOptions {
  random: () => number;
  /** The nodes' cluster.leaseTtl. */
  leaseTtlMs: number;
  /** No cut starts after this (epoch ms). */
  until: number;
}

const MIN_MS = 200;

export class RedisCuts extends ProxyBreaks {
  private leaseTtlMs = 0;

  /** A proxy per node, each forwarding to the redis-server on `redisPort`. */
  static async open(nodes: number, redisPort: number, opts: RedisCutsOptions): Promise<RedisCuts> {
    const proxies = await Promise.all(Array.from({ length: nodes }, () => tcpProxy(redisPort)));
    const { random, leaseTtlMs } = opts;
    // Half the cuts end within the lease, half past it (up to about twice it).
    const spanMs = () => (random() < 0.5 ? MIN_MS + Math.floor(random() * (leaseTtlMs - MIN_MS)) : leaseTtlMs + Math.floor(random() * leaseTtlMs));
    const cuts = new RedisCuts(proxies, random, opts.until, spanMs);
    cuts.leaseTtlMs = leaseTtlMs;
    return cuts;
  }

  /** The Redis URL node `i` is given: its proxy's. */
  url(i: number): string {
    return `redis://127.0.0.1:${this.proxies[i]!.port}`;
  }

  summary(): string {
    const past = this.spans.filter((s) => s.to - s.from > this.leaseTtlMs).length;
    return `Redis-link cuts: ${this.counts()} (${past} past the lease, longest ${this.longestMs()} ms)`;
  }
}
