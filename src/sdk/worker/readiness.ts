/**
 * Readiness per DESIGN §5: ready once every required slot kind has a
 * registered stream at the same time; after that it stays ready through
 * reconnects and busy slots, and is false only while some kind has no
 * registered stream *and* a permanent error. A successful registration clears that kind's error.
 */
import type { ClientError } from 'nice-grpc';
import { PullRegistrationError, WorkerStoppedError } from './errors';
import type { SlotKindName } from './types';

export interface QueueReadiness {
  slotKind: SlotKindName;
  hasRegisteredStream: boolean;
  lastPermanentError: PullRegistrationError | null;
}

export interface Readiness {
  isReady: boolean;
  /** One entry per required slot kind. */
  queues: QueueReadiness[];
}

interface KindState {
  registered: number;
  lastPermanentError: PullRegistrationError | null;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export class ReadinessTracker {
  private readonly kinds = new Map<SlotKindName, KindState>();
  private readonly waiters = new Set<Waiter>();
  private everReady = false;
  /** A startup error or stop before readiness; every later wait rejects with it. */
  private terminal: unknown = null;

  constructor(required: readonly SlotKindName[]) {
    for (const kind of required) this.kinds.set(kind, { registered: 0, lastPermanentError: null });
  }

  registered(kind: SlotKindName): void {
    const s = this.state(kind);
    s.registered++;
    s.lastPermanentError = null;
    // Registered now, not once: a kind whose stream dropped before the others
    // registered (in backoff, say) cannot take its tasks yet.
    if (!this.everReady && [...this.kinds.values()].every((k) => k.registered > 0)) {
      this.everReady = true;
      this.settle((w) => w.resolve());
    }
  }

  unregistered(kind: SlotKindName): void {
    const s = this.state(kind);
    s.registered = Math.max(0, s.registered - 1);
  }

  /**
   * Records a permanent rejection. Returns the PullRegistrationError when it
   * leaves the kind with no registered stream (it then also rejects the
   * waiters if the worker is not ready yet), else null.
   */
  permanentRejection(kind: SlotKindName, cause: ClientError): PullRegistrationError | null {
    const s = this.state(kind);
    if (s.registered > 0) return null;
    const err = new PullRegistrationError(kind, cause);
    s.lastPermanentError = err;
    if (!this.everReady) this.settle((w) => w.reject(err));
    return err;
  }

  /** The worker failed to start or stopped: waiters that are not satisfied yet reject. */
  close(err: unknown = new WorkerStoppedError()): void {
    if (this.everReady || this.terminal) return;
    this.terminal = err;
    this.settle((w) => w.reject(err));
  }

  snapshot(): Readiness {
    const queues = [...this.kinds].map(([slotKind, s]) => ({
      slotKind,
      hasRegisteredStream: s.registered > 0,
      lastPermanentError: s.lastPermanentError,
    }));
    const failing = queues.some((q) => !q.hasRegisteredStream && q.lastPermanentError);
    return { isReady: this.everReady && !failing, queues };
  }

  wait(signal?: AbortSignal): Promise<void> {
    if (this.everReady) return Promise.resolve();
    if (this.terminal) return Promise.reject(this.terminal);
    const pending = this.pendingError();
    if (pending) return Promise.reject(pending);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(waiter);
        reject(abortReason(signal!));
      };
      const waiter: Waiter = {
        resolve: () => { signal?.removeEventListener('abort', onAbort); resolve(); },
        reject: (e) => { signal?.removeEventListener('abort', onAbort); reject(e); },
      };
      this.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A kind that is currently failing, so a late waiter learns it at once. */
  private pendingError(): PullRegistrationError | null {
    for (const s of this.kinds.values()) if (s.registered === 0 && s.lastPermanentError) return s.lastPermanentError;
    return null;
  }

  private settle(fn: (w: Waiter) => void): void {
    const ws = [...this.waiters];
    this.waiters.clear();
    ws.forEach(fn);
  }

  private state(kind: SlotKindName): KindState {
    const s = this.kinds.get(kind);
    if (!s) throw new Error(`slot kind ${kind} is not tracked`);
    return s;
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}
