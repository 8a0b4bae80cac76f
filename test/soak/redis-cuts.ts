/**
 * Redis-link cuts of the chaos soak (chaos.test.ts): one node cut off from
 * Redis while it keeps running and its peers still reach Redis. Every node
 * dials each Redis server through a TCP proxy of its own (test/helpers/tcp-proxy.ts),
 * which outlives the node's restarts and Redis's (same ports): one proxy to the
 * redis-server, or on a Redis Cluster (SOAK_REDIS=cluster or cluster-replicated)
 * one per Cluster server, primaries and replicas. A Cluster announces one
 * address per server to every client, so each node is given its proxies through
 * redis.natMap (each server's announced address mapped to that node's proxy
 * of it) and takes them as its seeds too. Now and then one node's link is
 * broken (its proxy, or all its proxies to the Cluster at once) for 200 ms to
 * about twice `cluster.leaseTtl`, then healed:
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
 * One cut at a time, with a pause of 1 to 3 s between two, on the shared schedule
 * and dice of its own. The loop ends at `until`; `stop()` heals the cut under
 * way, `halt()` (afterAll) heals every proxy at once. SOAK_REDIS_CUTS=0 leaves
 * them out (the nodes then dial Redis directly).
 */
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { ProxyBreaks } from './proxy-breaks';

export interface RedisCutsOptions {
  random: () => number;
  /** The nodes' cluster.leaseTtl. */
  leaseTtlMs: number;
  /** No cut starts after this (epoch ms). */
  until: number;
}

const MIN_MS = 200;

/** One node's proxies to every server of a Cluster as one link: broken and healed together. */
function link(proxies: TcpProxy[]): TcpProxy {
  const each = (act: (p: TcpProxy) => void) => () => proxies.forEach(act);
  return {
    port: proxies[0]!.port,
    get accepted() {
      return proxies.reduce((n, p) => n + p.accepted, 0);
    },
    pause: each((p) => p.pause()),
    freeze: each((p) => p.freeze()),
    blackhole: each((p) => p.blackhole()),
    retarget() {
      throw new Error('a Cluster link has a target per server');
    },
    resume: each((p) => p.resume()),
    cut: each((p) => p.cut()),
    refuse: each((p) => p.refuse()),
    holdNew: each((p) => p.holdNew()),
    release: each((p) => p.release()),
    close: async () => {
      await Promise.all(proxies.map((p) => p.close()));
    },
  };
}

export class RedisCuts extends ProxyBreaks {
  private leaseTtlMs = 0;
  /** Per node, its proxy to each of `serverPorts`, in that order. */
  private links: TcpProxy[][] = [];
  private serverPorts: number[] = [];

  /**
   * For each node, a proxy to each Redis server on `redisPorts` (one redis-server, or every
   * server of a Cluster); a cut breaks all of one node's at once.
   */
  static async open(nodes: number, redisPorts: readonly number[], opts: RedisCutsOptions): Promise<RedisCuts> {
    const links = await Promise.all(Array.from({ length: nodes }, () => Promise.all(redisPorts.map((port) => tcpProxy(port)))));
    const { random, leaseTtlMs } = opts;
    // Half the cuts end within the lease, half past it (up to about twice it).
    const spanMs = () => (random() < 0.5 ? MIN_MS + Math.floor(random() * (leaseTtlMs - MIN_MS)) : leaseTtlMs + Math.floor(random() * leaseTtlMs));
    const cuts = new RedisCuts(links.map((l) => (l.length === 1 ? l[0]! : link(l))), random, opts.until, spanMs);
    cuts.leaseTtlMs = leaseTtlMs;
    cuts.links = links;
    cuts.serverPorts = [...redisPorts];
    return cuts;
  }

  /** The Redis URL node `i` is given: its proxy's (one redis-server). */
  url(i: number): string {
    return `redis://127.0.0.1:${this.links[i]![0]!.port}`;
  }

  /** The redis.* keys node `i` is given on a Cluster: its proxies as seeds, and each server's announced address mapped to its proxy. */
  clusterConfig(i: number): { clusterNodes: string[]; natMap: string[] } {
    const proxies = this.links[i]!;
    return {
      clusterNodes: proxies.map((p) => `127.0.0.1:${p.port}`),
      natMap: this.serverPorts.map((port, s) => `127.0.0.1:${port}=127.0.0.1:${proxies[s]!.port}`),
    };
  }

  summary(): string {
    const past = this.spans.filter((s) => s.to - s.from > this.leaseTtlMs).length;
    return `Redis-link cuts: ${this.counts()} (${past} past the lease, longest ${this.longestMs()} ms)`;
  }
}
