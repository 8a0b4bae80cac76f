/**
 * Doorbell for outcome waiters (WaitOutcome, ConsumeOutcomes): rung when an
 * outcome is written, locally or on a peer. It carries only "look again";
 * waiters subscribe before they read, so a ring between read and wait is
 * never missed.
 */
import { EventEmitter } from 'node:events';

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
  subscribe(taskId: string | undefined, signal: AbortSignal) {
    const event = taskId ? `task:${taskId}` : 'any';
    let rung = false;
    let wake: (() => void) | undefined;
    const onRing = () => {
      rung = true;
      wake?.();
    };
    this.emitter.on(event, onRing);
    return {
      wait: (ms: number): Promise<boolean> => {
        if (rung) {
          rung = false;
          return Promise.resolve(true);
        }
        if (ms <= 0 || signal.aborted) return Promise.resolve(false);
        return new Promise<boolean>((resolve) => {
          const done = (v: boolean) => {
            clearTimeout(t);
            signal.removeEventListener('abort', onAbort);
            wake = undefined;
            rung = false;
            resolve(v);
          };
          const onAbort = () => done(false);
          const t = setTimeout(() => done(false), ms);
          wake = () => done(true);
          signal.addEventListener('abort', onAbort, { once: true });
        });
      },
      close: () => this.emitter.off(event, onRing),
    };
  }
}
