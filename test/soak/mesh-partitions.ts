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
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { ChaosSchedule } from './chaos-schedule';

export interface MeshPartitionsOptions {
  random: () => number;
  /** No partition starts after this (epoch ms). */
  until: number;
}

const MIN_MS = 200;
const MAX_MS = 4000;

interface Span { index: number; how: 'blackhole' | 'refuse'; from: number; to: number }

export class MeshPartitions {
  private readonly spans: Span[] = [];
  private readonly schedule: ChaosSchedule;

  private constructor(private readonly proxies: TcpProxy[], private readonly opts: MeshPartitionsOptions) {
    this.schedule = new ChaosSchedule(opts.random, opts.until);
  }

  /** A proxy for each node's mesh port, `internalPorts[i]`. */
  static async open(internalPorts: number[], opts: MeshPartitionsOptions): Promise<MeshPartitions> {
    return new MeshPartitions(await Promise.all(internalPorts.map((p) => tcpProxy(p))), opts);
  }

  /** The `internal` config of node `i`: it listens on its port and is dialled through its proxy. */
  internalConfig(i: number, internalPort: number): { listen: string; advertise: string } {
    return { listen: `127.0.0.1:${internalPort}`, advertise: `127.0.0.1:${this.proxies[i]!.port}` };
  }

  start(): void {
    const { random } = this.opts;
    this.schedule.start(async () => {
      const index = Math.floor(random() * this.proxies.length);
      const how = random() < 0.5 ? 'blackhole' : 'refuse';
      const ms = MIN_MS + Math.floor(random() * (MAX_MS - MIN_MS));
      const span: Span = { index, how, from: Date.now(), to: Number.POSITIVE_INFINITY };
      this.spans.push(span);
      const proxy = this.proxies[index]!;
      if (how === 'blackhole') proxy.blackhole();
      else proxy.refuse();
      try {
        await this.schedule.pause(ms);
      } finally {
        proxy.resume();
        span.to = Date.now();
      }
    });
  }

  /** Stops the schedule and waits for the partition under way to heal: the mesh is whole once it resolves. */
  async stop(): Promise<void> {
    await this.schedule.stop();
    for (const p of this.proxies) p.resume();
  }

  /** Stops the schedule and heals every proxy at once (afterAll, a failed run). */
  halt(): void {
    this.schedule.halt();
    for (const p of this.proxies) p.resume();
  }

  async close(): Promise<void> {
    this.halt();
    await Promise.all(this.proxies.map((p) => p.close()));
  }

  summary(): string {
    const of = (how: Span['how']) => this.spans.filter((s) => s.how === how);
    const longest = this.spans.length ? Math.max(...this.spans.map((s) => s.to - s.from)) : 0;
    return `mesh partitions: ${of('blackhole').length} black-holed, ${of('refuse').length} refused (longest ${longest} ms)`;
  }
}
