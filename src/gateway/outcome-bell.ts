/**
 * Doorbell for outcome waiters (WaitOutcome, ConsumeOutcomes): rung when an
 * outcome is written, locally or on a peer. It carries only "look again";
 * waiters subscribe before they read, so a ring between read and wait is
 * never missed. It counts its waiters so the node can tell peers whether to
 * send it OUTCOME doorbells at all.
 */
import { EventEmitter } from 'node:events';
import { subscribeBell, type BellSubscription } from './doorbell';

const ALL = 'all';

/** A subscription that also tells which partitions rang (outcome waiters over every partition). */
export interface OutcomeSubscription extends BellSubscription {
  /**
   * The partitions rung since the last call, and forgets them; undefined when a ring
   * named none (a peer's "wake all") or the subscription waits on one task.
   */
  takeRung(): number[] | undefined;
}

export class OutcomeBell {
  private readonly emitter = new EventEmitter();
  private waiters = 0;
  /** Open subscriptions, waiting or not: with none, a ring has nobody to tell. */
  private subscribers = 0;
  /**
   * Grows each time the first waiter arrives. Peers that see it grow wake our
   * waiters once, for outcomes they wrote while they still thought we had none.
   */
  private gen = 1;

  /** `interestChanged`: the first waiter arrived, or the last one left. */
  constructor(private readonly interestChanged: () => void = () => undefined) {
    this.emitter.setMaxListeners(0);
  }

  get waiting(): number {
    return this.waiters;
  }

  get generation(): number {
    return this.gen;
  }

  ring(partition: number, taskId: string): void {
    // Every outcome rings; most nodes most of the time have no waiter to wake.
    if (this.subscribers === 0) return;
    this.emitter.emit(`task:${taskId}`);
    this.emitter.emit('any', partition);
  }

  /** Every waiter looks again (a peer wrote outcomes before it knew of them). */
  wakeAll(): void {
    this.emitter.emit(ALL);
  }

  /**
   * Subscribes before the caller's first read. `wait(ms)` resolves on a ring
   * (true) or at the timeout/abort (false); `close()` unsubscribes.
   */
  subscribe(taskId: string | undefined, signal: AbortSignal): OutcomeSubscription {
    const sub = subscribeBell(this.emitter, [taskId ? `task:${taskId}` : 'any', ALL], signal);
    this.subscribers++;
    // Which partitions rang, so that a consumer woken by one outcome reads that partition, not all.
    let rung: Set<number> | undefined = new Set();
    const onAny = (partition: number) => rung?.add(partition);
    const onAll = () => (rung = undefined);
    if (!taskId) {
      this.emitter.on('any', onAny);
      this.emitter.on(ALL, onAll);
    }
    // A waiter counts once it really waits: a call with no wait (polling) never
    // changes what peers send. Outcomes they wrote before they learnt of it
    // reach it by the "wake all" the generation bump brings.
    let counted = false;
    let open = true;
    return {
      wait: (ms) => {
        if (ms > 0 && open && !counted) {
          counted = true;
          if (this.waiters++ === 0) {
            this.gen++;
            this.interestChanged();
          }
        }
        return sub.wait(ms);
      },
      takeRung: () => {
        const r = taskId ? undefined : rung && [...rung];
        rung = new Set();
        return r;
      },
      close: () => {
        if (!open) return;
        open = false;
        sub.close();
        this.emitter.off('any', onAny);
        this.emitter.off(ALL, onAll);
        this.subscribers--;
        if (counted && --this.waiters === 0) this.interestChanged();
      },
    };
  }
}
