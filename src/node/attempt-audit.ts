/**
 * Once a minute, both sides of "a slot holds exactly the attempts Redis says run
 * there", for what a lost message or a Redis that lost writes left behind:
 *
 * - the owners here look at the running attempts of their partitions: those of node
 *   instances that are gone fail (the dead-node sweep, which otherwise runs only when
 *   the members change: an attempt such a loss puts back on a node that died before
 *   finds no member change to end it), and those no slot of their live node holds on
 *   two looks fail as worker lost (owner/unheld-attempts.ts);
 * - the gateway sends Cancel to its slots holding an attempt that no longer runs in
 *   Redis (cancelled, timed out), in case the one-way Cancel of its owner or canceller
 *   was lost on its way (Gateway.cancelEnded).
 */
import type { Logger } from '../util/logger';

export interface AuditedSides {
  /** The owners' look; how many attempts it failed. */
  ownersLook(): Promise<number>;
  /** Sends Cancel to the slots holding an attempt that no longer runs; how many. */
  cancelEnded(): Promise<number>;
}

export class AttemptAudit {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly sides: AuditedSides,
    private readonly everyMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass; returns how many attempts the owners here failed. */
  async runOnce(): Promise<number> {
    if (this.stopped) return 0;
    const failed = await this.sides.ownersLook().catch((err: Error) => {
      this.log.warn({ err: err.message }, 'attempt audit of the partitions owned here failed');
      return 0;
    });
    if (this.stopped) return failed;
    const cancelled = await this.sides.cancelEnded().catch((err: Error) => {
      this.log.warn({ err: err.message }, 'attempt audit could not check the attempts its slots hold');
      return 0;
    });
    if (cancelled > 0) this.log.warn({ cancelled }, 'slots held attempts that had ended without their Cancel: sent it');
    return failed;
  }
}
