/** Errors a Worker raises itself (handler failures are in failure.ts). */
import type { ClientError, Status } from 'nice-grpc';
import { parseZdCode } from '../common';
import type { SlotKindName } from './types';

/**
 * A permanent rejection (FAILED_PRECONDITION, INVALID_ARGUMENT,
 * UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED) of a slot stream
 * while no other stream of that slot kind was registered.
 */
export class PullRegistrationError extends Error {
  override name = 'PullRegistrationError';
  /** The slot kind (the "queue" of the readiness report), not a flow type. */
  readonly slotKind: SlotKindName;
  /** The gRPC status of the rejection. */
  readonly code: Status;
  /** The `ZD_…` code of the server's message, when present. */
  readonly zdCode: string | undefined;
  override readonly cause: ClientError;

  constructor(slotKind: SlotKindName, cause: ClientError) {
    super(`${slotKind} slot stream rejected: ${cause.details || cause.message}`, { cause });
    this.slotKind = slotKind;
    this.cause = cause;
    this.code = cause.code;
    this.zdCode = parseZdCode(cause.details);
  }
}

/** The first registration reported a per-worker stream cap below the task limit. */
export class WorkerCapacityError extends Error {
  override name = 'WorkerCapacityError';
  constructor(readonly taskLimit: number, readonly cap: number) {
    super(
      `maxConcurrentTasks ${taskLimit} exceeds the server's maxConcurrentTasksCap ${cap}; ` +
        `lower maxConcurrentTasks or raise matching.maxConcurrentTasksCap`,
    );
  }
}

/** start() or waitPullRegistered() after the worker stopped before it was ready. */
export class WorkerStoppedError extends Error {
  override name = 'WorkerStoppedError';
  constructor(message = 'the worker stopped before every slot kind registered') {
    super(message);
  }
}
