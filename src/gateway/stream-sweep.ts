/**
 * The periodic pass over this node's worker streams: it pings idle streams that
 * are due one, and finds busy ones silent past matching.busyStreamSilence.
 */
import type { Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import type { Slot } from './slot';

export interface StreamSweepOptions {
  pingIntervalMs: number;
  /** matching.busyStreamSilence: a busy stream quiet this long is lost; 0 never. */
  busyStreamSilenceMs: number;
}

export class StreamSweep {
  private readonly timer: NodeJS.Timeout;
  /** Streams are swept four times per matching.pingInterval or busyStreamSilence, whichever is shorter (at least 50 ms apart). */
  private readonly everyMs: number;

  constructor(
    private readonly opts: StreamSweepOptions,
    /** The gateway's open streams by id. */
    private readonly slots: ReadonlyMap<string, Slot>,
    /** Ends a stream whose worker is lost (Gateway.unregister, not graceful). */
    private readonly lose: (slot: Slot, because: string) => Promise<void>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    const silence = opts.busyStreamSilenceMs > 0 ? opts.busyStreamSilenceMs : Infinity;
    this.everyMs = Math.max(50, Math.floor(Math.min(opts.pingIntervalMs, silence) / 4));
    this.timer = setInterval(() => this.sweepStreams(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Pings idle streams that are due one; finds busy ones silent too long. */
  private sweepStreams(): void {
    const now = this.clock.now();
    const silence = this.opts.busyStreamSilenceMs;
    for (const slot of this.slots.values()) {
      // One sweep early rather than up to one late: no idle gap exceeds the interval.
      if (slot.state === 'idle' && now - slot.lastSentAt >= this.opts.pingIntervalMs - this.everyMs) slot.send({ ping: { sent_at_ms: now } }, now);
      // A worker Pongs while it runs a task (DESIGN §5). The node's HTTP/2 PINGs catch a
      // connection gone silent, but not behind a proxy that answers them itself (an
      // HTTP/2 load balancer): there only the worker's own frames show it is alive.
      // An older SDK sends nothing while a task runs: silence is no sign for it.
      else if (silence > 0 && slot.state === 'busy' && (slot.attempt || slot.rpc) && !slot.reg.quietWhileBusy
        && now - Math.max(slot.lastHeardAt, slot.lastSentAt) >= silence) this.lostInSilence(slot, now);
    }
  }

  private lostInSilence(slot: Slot, now: number): void {
    const quietMs = now - Math.max(slot.lastHeardAt, slot.lastSentAt);
    this.log.warn({ stream: slot.id, appWorkerId: slot.reg.appWorkerId, quietMs }, 'busy worker stream silent past matching.busyStreamSilence: worker lost');
    void this.lose(slot, `no frame for ${quietMs} ms on a busy stream (matching.busyStreamSilence)`)
      .catch((err: Error) => this.log.warn({ err: err.message }, 'unregister failed'));
  }
}
