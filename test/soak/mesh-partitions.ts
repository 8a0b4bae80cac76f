/**
 * Mesh partitions of the chaos soak (chaos.test.ts): the peer mesh broken
 * between nodes while each still reaches Redis. Every node's `internal.listen`
 * sits behind a TCP proxy of its own (test/helpers/tcp-proxy.ts) whose address
 * it advertises as `internal.advertise`, so every peer dials it through the
 * proxy; the proxy outlives the node's restarts (same ports). Now and then one
 * node's proxy, that is every mesh link into that node, is broken for 200 ms to
 * 4 s, then healed:
 *
 * - black-holed (half the partitions): open connections stall in both
 *   directions and new ones get no answer (a network that drops packets): an
 *   offer, a capacity snapshot, a doorbell, an RPC hand-off or a Cancel sent to
 *   the node gets nothing back, not even a close;
 * - refused (the other half): open connections are closed and new ones reset at
 *   once (a network that answers RST).
 *
 * Leases, queues and outcomes stay reachable in Redis meanwhile: DESIGN §4
 * says an offer to a peer that does not answer settles by the start script's
 * state, never by guessing, and §11.5 that safety never rests on a peer message
 * arriving. So every end-of-run invariant holds as it is. The RPC check keeps
 * its rule too (rpc-load.ts): a call whose worker sat behind a partition, or
 * was handed on to the partitioned node, is answered OK or UNAVAILABLE within
 * the caller's timeout plus the Client's margin and the slack, and never runs
 * twice; a partition excuses no DEADLINE_EXCEEDED (the node the caller talks to
 * is not frozen and answers at the caller's deadline, or at dispatchWait).
 *
 * One partition at a time, with a pause of 1 to 3 s between two. The loop ends
 * at `until`; `stop()` heals the partition under way, `halt()` (afterAll) heals
 * every proxy at once. SOAK_PARTITIONS=0 leaves them out (the nodes then dial
 * one another directly).
 */
import { tcpProxy } from '../helpers/tcp-proxy';
import { ProxyBreaks } from './proxy-breaks';

export interface MeshPartitionsOptions {
  random: () => number;
  /** No partition starts after this (epoch ms). */
  until: number;
}

const MIN_MS = 200;
const MAX_MS = 4000;

export class MeshPartitions extends ProxyBreaks {
  /** A proxy for each node's mesh port, `internalPorts[i]`. */
  static async open(internalPorts: number[], opts: MeshPartitionsOptions): Promise<MeshPartitions> {
    const proxies = await Promise.all(internalPorts.map((p) => tcpProxy(p)));
    return new MeshPartitions(proxies, opts.random, opts.until, () => MIN_MS + Math.floor(opts.random() * (MAX_MS - MIN_MS)));
  }

  /** The `internal` config of node `i`: it listens on its port and is dialled through its proxy. */
  internalConfig(i: number, internalPort: number): { listen: string; advertise: string } {
    return { listen: `127.0.0.1:${internalPort}`, advertise: `127.0.0.1:${this.proxies[i]!.port}` };
  }

  summary(): string {
    return `mesh partitions: ${this.counts()} (longest ${this.longestMs()} ms)`;
  }
}
