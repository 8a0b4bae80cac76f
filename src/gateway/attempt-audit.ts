/**
 * The attempt audit: attempts Redis says run in a slot of this node instance that
 * no slot here holds are failed as worker lost (the retry policy runs). Every end
 * of an attempt is a script; when Redis loses one that it acknowledged (a failover
 * to a replica it had not reached, a restart from an older snapshot), the task is
 * back to running here, in a slot long free. Owners fail the attempts of node
 * instances that are gone, and a method or heartbeat timeout fails a late one, but
 * a Step without timeouts on a node that lives would run for ever: no outcome, its
 * flow waiting on it (DESIGN §11.3: every task gets exactly one outcome).
 *
 * An attempt whose start or end the gateway has on its way, or retries while
 * Redis does not answer, counts as held. One is failed once two passes in a row
 * found it unheld: what is left unheld for a moment between two steps of the
 * gateway is never unheld for a whole interval.
 *
 * Each pass also has the owners here sweep their partitions for attempts of node
 * instances that are gone (`sweepGone`), which otherwise runs only when the members
 * change: an attempt such a loss puts back on a node that died before it finds no
 * member change to end it.
 *
 * And the other way round: a slot holding an attempt that no longer runs in Redis
 * (cancelled, timed out) is sent Cancel, in case the one-way Cancel of its owner
 * or canceller was lost on its way.
 */
import type { RunningAttempt, TaskStore } from '../store/task-store';
import type { Logger } from '../util/logger';

/** What the audit needs of the gateway. */
export interface AuditedSlots {
  /** Start nonces of the attempts the slots hold now. */
  heldNonces(): Set<string>;
  /** Fails an attempt no slot holds; true when it did. */
  failUnheld(a: RunningAttempt): Promise<boolean>;
  /** Sends Cancel to the slots holding an attempt that no longer runs; how many. */
  cancelEnded(): Promise<number>;
}

export class AttemptAudit {
  private timer: NodeJS.Timeout | undefined;
  /** Attempts the last pass found unheld, by partition, task id and nonce. */
  private suspects = new Set<string>();
  private stopped = false;

  constructor(
    private readonly store: Pick<TaskStore, 'attemptsRunningOn'>,
    private readonly slots: AuditedSlots,
    private readonly partitions: number,
    private readonly nodeId: string,
    private readonly bootId: string,
    private readonly everyMs: number,
    private readonly log: Logger,
    /** The owners' sweep of attempts of gone node instances (OwnerRegistry.membershipChanged). */
    private readonly sweepGone: () => Promise<void> = async () => undefined,
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

  /** One pass over every partition; returns how many attempts it failed. */
  async runOnce(): Promise<number> {
    await this.sweepGone().catch((err: Error) => this.log.warn({ err: err.message }, 'sweep of attempts of gone nodes failed'));
    const unheld = new Set<string>();
    const running: RunningAttempt[] = [];
    for (let p = 0; p < this.partitions; p++) {
      try {
        running.push(...await this.store.attemptsRunningOn(p, this.nodeId, this.bootId));
      } catch (err) {
        this.log.warn({ partition: p, err: (err as Error).message }, 'attempt audit could not read a partition');
        // What the last pass found there stays suspect for the next.
        for (const key of this.suspects) if (key.startsWith(`${p}\0`)) unheld.add(key);
      }
    }
    // Taken after the reads: an attempt started before its partition was read and held since counts as held.
    const held = this.slots.heldNonces();
    let failed = 0;
    for (const a of running) {
      if (held.has(a.nonce)) continue;
      const key = `${a.partition}\0${a.taskId}\0${a.nonce}`;
      unheld.add(key);
      if (!this.suspects.has(key) || this.stopped) continue;
      try {
        if (!(await this.slots.failUnheld(a))) continue;
        failed++;
        this.log.warn({ partition: a.partition, taskId: a.taskId, attempt: a.attempt },
          'attempt running here in Redis that no slot holds (its end was not recorded) failed as worker lost');
      } catch (err) {
        this.log.warn({ taskId: a.taskId, err: (err as Error).message }, 'attempt audit could not fail an attempt no slot holds');
      }
    }
    this.suspects = unheld;
    if (!this.stopped) {
      const cancelled = await this.slots.cancelEnded().catch((err: Error) => {
        this.log.warn({ err: err.message }, 'attempt audit could not check the attempts its slots hold');
        return 0;
      });
      if (cancelled > 0) this.log.warn({ cancelled }, 'slots held attempts that had ended without their Cancel: sent it');
    }
    return failed;
  }
}
