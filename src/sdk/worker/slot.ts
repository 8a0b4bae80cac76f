/**
 * One execution slot: a loop of stream sessions. Reconnects at once after a
 * server-directed Reconnect, otherwise with exponential backoff and jitter;
 * the backoff starts over only after a stream that stayed registered for
 * STABLE_STREAM_MS. Permanent rejections are reported to readiness and
 * retried (unless the worker was told to stop on them).
 */
import { delay, isAbortError } from 'abort-controller-x';
import { ClientError, Status } from 'nice-grpc';
import { backoffMs, mapGrpcError, parseZdCode } from '../common';
import { Session, type SlotHost, type SlotPhase } from './session';
import type { SlotKindName } from './types';

/** Statuses that a retry will not fix by itself (DESIGN §5); they count for readiness when they refuse a Register. */
export const PERMANENT_STATUSES: ReadonlySet<Status> = new Set([
  Status.FAILED_PRECONDITION,
  Status.INVALID_ARGUMENT,
  Status.UNAUTHENTICATED,
  Status.PERMISSION_DENIED,
  Status.RESOURCE_EXHAUSTED,
]);

/**
 * How long a stream must stay registered to reset the reconnect backoff. A
 * node that registers streams and drops them at once (overloaded, broken)
 * would otherwise have every slot of a fleet redial it every 50–100 ms.
 */
export const STABLE_STREAM_MS = 5_000;

export class Slot {
  private session: Session | null = null;

  constructor(readonly index: number, readonly kind: SlotKindName, private readonly host: SlotHost) {}

  get phase(): SlotPhase | 'backoff' {
    return this.session?.phase ?? 'backoff';
  }

  /** Log fields naming the slot's task, if it has one. */
  get taskLabels(): Record<string, unknown> | undefined {
    return this.session?.taskLabels;
  }

  /** Runs until the worker stops (or fails); never rejects. */
  async run(): Promise<void> {
    let attempt = 0;
    while (!this.host.stopping) {
      const session = new Session(this.kind, this.host);
      this.session = session;
      let error: unknown = null;
      try {
        await session.run();
      } catch (err) {
        error = err;
      }
      this.session = null;
      if (session.registeredMs >= STABLE_STREAM_MS) attempt = 0;
      if (this.host.stopping) return;
      if (error === null && session.reconnectRequested) {
        // A draining node asks all its idle streams at once: spread them over the
        // first backoff step rather than have them all dial the next node together.
        try {
          await delay(this.host.stopSignal, Math.floor(Math.random() * (this.host.options.reconnectBackoff.initialMs ?? 100)));
        } catch {
          return; // stop began
        }
        continue;
      }
      if (error !== null && !this.onError(error, session.registered, session.channelGen)) return;
      if (error === null) this.host.options.logger.info('slot stream ended by the server; reconnecting', this.labels());
      try {
        await delay(this.host.stopSignal, backoffMs(attempt++, this.host.options.reconnectBackoff));
      } catch {
        return; // stop began
      }
    }
  }

  drain(): void {
    this.session?.drain();
  }

  reset(reason: unknown): void {
    this.session?.reset(reason);
  }

  /** Classifies a stream failure; false when it is fatal to the worker. */
  private onError(err: unknown, wasRegistered: boolean, channelGen: number): boolean {
    const { logger, stopOnPermanentStreamRejection } = this.host.options;
    if (!(err instanceof ClientError)) {
      if (!isAbortError(err)) logger.warn('slot stream failed; reconnecting', { ...this.labels(), error: String(err) });
      return true;
    }
    // A FAILED_PRECONDITION before the worker ever registered is a protocol
    // mismatch (or an incompatible server): starting cannot succeed.
    if (err.code === Status.FAILED_PRECONDITION && !wasRegistered && !this.host.hasRegistered) {
      this.host.fail(mapGrpcError(err));
      return false;
    }
    const fields = { ...this.labels(), status: Status[err.code], error: err.details };
    // A node that began draining before this stream came sends it no Reconnect: it refuses
    // it. Behind a connection balancer that node is out of rotation, but every stream over
    // this connection reaches it again until it closes, drain.timeout later; as after a
    // Reconnect, later streams go over a new connection.
    if (err.code === Status.UNAVAILABLE && parseZdCode(err.details) === 'ZD_DRAINING') this.host.reconnectAsked?.(channelGen);
    if (!PERMANENT_STATUSES.has(err.code)) {
      logger.info('slot stream lost; reconnecting', fields);
      return true;
    }
    // The node accepted this stream's Register: whatever ended it later (a result past
    // the node's message limit ends it with RESOURCE_EXHAUSTED) is not a rejection of
    // the slot. The next Register tells whether the node refuses it.
    if (wasRegistered) {
      logger.warn('slot stream failed; reconnecting', fields);
      return true;
    }
    const orphaned = this.host.readiness.permanentRejection(this.kind, err);
    logger.warn('slot stream rejected', { ...fields, noRegisteredStreamOfKind: orphaned !== null });
    if (orphaned && stopOnPermanentStreamRejection) {
      this.host.fail(orphaned);
      return false;
    }
    return true;
  }

  private labels(): Record<string, unknown> {
    return { slot: this.index, slotKind: this.kind };
  }
}
