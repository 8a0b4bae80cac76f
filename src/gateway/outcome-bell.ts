/**
 * Doorbell for outcome waiters (WaitOutcome, ConsumeOutcomes): rung when an
 * outcome is written, locally or on a peer. It carries only "look again";
 * waiters subscribe before they read, so a ring between read and wait is
 * never missed.
 */
import { EventEmitter } from 'node:events';
import { subscribeBell, type BellSubscription } from './doorbell';

export class OutcomeBell {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  ring(partition: number, taskId: string): void {
    this.emitter.emit(`task:${taskId}`);
    this.emitter.emit('any', partition);
  }

  /**
   * Subscribes before the caller's first read. `wait(ms)` resolves on a ring
   * (true) or at the timeout/abort (false); `close()` unsubscribes.
   */
  subscribe(taskId: string | undefined, signal: AbortSignal): BellSubscription {
    return subscribeBell(this.emitter, [taskId ? `task:${taskId}` : 'any'], signal);
  }
}
