/**
 * The subscription both doorbells hand out (outcome waiters, fetch long
 * polls): subscribe before the first read, so a ring between the read and the
 * wait is never missed; a ring carries only "look again".
 */
import type { EventEmitter } from 'node:events';

export interface BellSubscription {
  /** Resolves true on a ring (at once if one came since the last wait), false at the timeout or abort. */
  wait(ms: number): Promise<boolean>;
  /** Unsubscribes. */
  close(): void;
}

export function subscribeBell(emitter: EventEmitter, events: readonly string[], signal: AbortSignal): BellSubscription {
  let rung = false;
  let wake: (() => void) | undefined;
  const onRing = () => {
    rung = true;
    wake?.();
  };
  const unique = [...new Set(events)];
  for (const e of unique) emitter.on(e, onRing);
  return {
    wait(ms) {
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
    close() {
      for (const e of unique) emitter.off(e, onRing);
    },
  };
}
