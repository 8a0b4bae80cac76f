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
  /** Each side's run not settled yet: the next pass skips that side rather than pile up behind it. */
  private looking: Promise<number> | undefined;
  private cancelling: Promise<number> | undefined;

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

  /**
   * One pass; returns how many attempts the owners here failed. The two sides run
   * apart: on a Redis Cluster whose primary stopped answering, the owners' look waits
   * on that primary's partitions, and the Cancel of an attempt that ended on another
   * primary must not wait with it. A side whose last run is still out is skipped.
   */
  async runOnce(): Promise<number> {
    if (this.stopped) return 0;
    const look = this.looking ? Promise.resolve(0) : this.side('looking', () => this.sides.ownersLook(), 'attempt audit of the partitions owned here failed');
    const cancel = this.cancelling ? Promise.resolve(0) : this.side('cancelling', () => this.sides.cancelEnded(), 'attempt audit could not check the attempts its slots hold');
    const [failed, cancelled] = await Promise.all([look, cancel]);
    if (cancelled > 0) this.log.warn({ cancelled }, 'slots held attempts that had ended without their Cancel: sent it');
    return failed;
  }

  private side(which: 'looking' | 'cancelling', run: () => Promise<number>, failure: string): Promise<number> {
    const p = run().catch((err: Error) => {
      this.log.warn({ err: err.message }, failure);
      return 0;
    }).finally(() => {
      if (this[which] === p) this[which] = undefined;
    });
    this[which] = p;
    return p;
  }
}
