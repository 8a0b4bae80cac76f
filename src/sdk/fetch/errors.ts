/**
 * The fetch surface's verdicts as named errors, mapped in one place
 * (`mapFetchError`) by their `ZD_…` code. Each has its own gRPC status
 * (ABORTED, OUT_OF_RANGE, FAILED_PRECONDITION, NOT_FOUND); the three lock
 * verdicts extend `ZdFailedPreconditionError`, the class they had when they
 * shared that status, so a caller catching it still catches them (and the
 * class `mapGrpcError` gives those statuses without a code, a Client's too).
 */
import { mapGrpcError, ZdError, ZdFailedPreconditionError, ZdNotFoundError } from '../common';

/** Another worker holds the task's lock (or a stream slot runs it): drop the task. */
export class LockedByOtherError extends ZdFailedPreconditionError { override name = 'LockedByOtherError'; }
/** This worker's lock lapsed; the task may be fetched by another worker: drop the result. */
export class LockExpiredError extends ZdFailedPreconditionError { override name = 'LockExpiredError'; }
/** The task is terminal, or has ended (completed, cancelled, timed out): drop it. */
export class TerminalError extends ZdFailedPreconditionError { override name = 'TerminalError'; }
/** No such task (or it ended longer ago than outcomes.retention). */
export class NotFoundError extends ZdNotFoundError { override name = 'NotFoundError'; }

const BY_CODE = {
  ZD_LOCKED_BY_OTHER: LockedByOtherError,
  ZD_LOCK_EXPIRED: LockExpiredError,
  ZD_TERMINAL: TerminalError,
  ZD_TASK_NOT_FOUND: NotFoundError,
} as const;

/** gRPC failure → the verdict's named error, else the common mapping (`mapGrpcError`). */
export function mapFetchError(err: unknown): unknown {
  const mapped = mapGrpcError(err);
  if (!(mapped instanceof ZdError)) return mapped;
  const cls = BY_CODE[mapped.code as keyof typeof BY_CODE];
  if (!cls) return mapped;
  return new cls(mapped.message, mapped.status, { code: mapped.code, path: mapped.path, cause: mapped.cause });
}
