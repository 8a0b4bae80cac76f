/**
 * Breaks of a set of TCP proxies on the soak's chaos schedule (chaos-schedule.ts),
 * shared by the mesh partitions (mesh-partitions.ts) and the Redis-link cuts
 * (redis-cuts.ts): now and then one proxy, picked at random, black-holes (half the
 * breaks: connections stall both ways, new ones get no answer) or refuses (the
 * other half: connections are reset, new ones refused) for a span its caller
 * draws, then heals. stop() waits for the break under way, halt() (afterAll, a
 * failed run) heals every proxy at once.
 */
import type { TcpProxy } from '../helpers/tcp-proxy';
import { ChaosSchedule } from './chaos-schedule';

export interface ProxyBreak { index: number; how: 'blackhole' | 'refuse'; from: number; to: number }

export class ProxyBreaks {
  readonly spans: ProxyBreak[] = [];
  private readonly schedule: ChaosSchedule;

  /** `spanMs` draws a break's length, after the proxy and the kind are drawn. */
  constructor(readonly proxies: TcpProxy[], private readonly random: () => number, until: number, private readonly spanMs: () => number) {
    this.schedule = new ChaosSchedule(random, until);
  }

  start(): void {
    this.schedule.start(async () => {
      const index = Math.floor(this.random() * this.proxies.length);
      const how = this.random() < 0.5 ? 'blackhole' : 'refuse';
      const ms = this.spanMs();
      const span: ProxyBreak = { index, how, from: Date.now(), to: Number.POSITIVE_INFINITY };
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

  /** Stops the schedule and waits for the break under way to heal. */
  async stop(): Promise<void> {
    await this.schedule.stop();
    for (const p of this.proxies) p.resume();
  }

  /** Stops the schedule and heals every proxy at once. */
  halt(): void {
    this.schedule.halt();
    for (const p of this.proxies) p.resume();
  }

  async close(): Promise<void> {
    this.halt();
    await Promise.all(this.proxies.map((p) => p.close()));
  }

  /** "N black-holed, M refused". */
  counts(): string {
    const of = (how: ProxyBreak['how']) => this.spans.filter((s) => s.how === how).length;
    return `${of('blackhole')} black-holed, ${of('refuse')} refused`;
  }

  longestMs(): number {
    return this.spans.length ? Math.max(...this.spans.map((s) => s.to - s.from)) : 0;
  }
}
