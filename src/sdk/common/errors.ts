/**
 * Named SDK errors for gRPC failures. The server's status message starts with
 * a stable code (`ZD_INVALID_ARGUMENT: field: reason`); `mapGrpcError` keeps
 * that message, parses the code and picks a class by status, so callers can
 * `catch (e) { if (e instanceof ZdNotFoundError) … }` without touching gRPC.
 */
import { ClientError, Status } from 'nice-grpc';

export { Status };

/** Base class of every error mapped from a gRPC status. */
export class ZdError extends Error {
  override name = 'ZdError';
  /** The stable `ZD_…` code at the start of the server's message, when present. */
  readonly code: string | undefined;
  /** The gRPC status of the failed call. */
  readonly status: Status;
  /** The RPC path that failed, e.g. `/zdmatch.v1.MatchingService/GetTask`. */
  readonly path: string | undefined;

  constructor(message: string, status: Status, options: { code?: string; path?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.status = status;
    this.code = options.code ?? parseZdCode(message);
    this.path = options.path;
  }
}

export class ZdInvalidArgumentError extends ZdError { override name = 'ZdInvalidArgumentError'; }
export class ZdNotFoundError extends ZdError { override name = 'ZdNotFoundError'; }
export class ZdAlreadyExistsError extends ZdError { override name = 'ZdAlreadyExistsError'; }
/** Retry later: no worker took an RPC, a node is draining, the store is down. */
export class ZdUnavailableError extends ZdError { override name = 'ZdUnavailableError'; }
/** The client and server speak different protocol versions; the message names both. */
export class ZdProtocolError extends ZdError { override name = 'ZdProtocolError'; }
/**
 * The task's state refuses the call: any other FAILED_PRECONDITION (terminal), ABORTED (lock held
 * by another worker) and OUT_OF_RANGE (lock expired), with or without a `ZD_…` code. The fetch
 * SDK's verdict errors extend it (they all were FAILED_PRECONDITION once).
 */
export class ZdFailedPreconditionError extends ZdError { override name = 'ZdFailedPreconditionError'; }
export class ZdPermissionError extends ZdError { override name = 'ZdPermissionError'; }
/** A missing or rejected credential; a kind of permission error. */
export class ZdUnauthenticatedError extends ZdPermissionError { override name = 'ZdUnauthenticatedError'; }
export class ZdResourceExhaustedError extends ZdError { override name = 'ZdResourceExhaustedError'; }
/** The call's own timeout passed (client side) or the server said DEADLINE_EXCEEDED. */
export class ZdDeadlineExceededError extends ZdError { override name = 'ZdDeadlineExceededError'; }
export class ZdCancelledError extends ZdError { override name = 'ZdCancelledError'; }
/** INTERNAL, UNKNOWN, and every status without a class of its own. */
export class ZdInternalError extends ZdError { override name = 'ZdInternalError'; }

const ZD_CODE = /^(ZD_[A-Z0-9_]+)\b/;

/** The `ZD_…` code a server message starts with, if any. */
export function parseZdCode(message: string): string | undefined {
  return ZD_CODE.exec(message)?.[1];
}

type ZdErrorClass = new (message: string, status: Status, options?: { code?: string; path?: string; cause?: unknown }) => ZdError;

const BY_STATUS: Partial<Record<Status, ZdErrorClass>> = {
  [Status.INVALID_ARGUMENT]: ZdInvalidArgumentError,
  [Status.NOT_FOUND]: ZdNotFoundError,
  [Status.ALREADY_EXISTS]: ZdAlreadyExistsError,
  [Status.FAILED_PRECONDITION]: ZdFailedPreconditionError,
  [Status.ABORTED]: ZdFailedPreconditionError,
  [Status.OUT_OF_RANGE]: ZdFailedPreconditionError,
  [Status.UNAVAILABLE]: ZdUnavailableError,
  [Status.PERMISSION_DENIED]: ZdPermissionError,
  [Status.UNAUTHENTICATED]: ZdUnauthenticatedError,
  [Status.RESOURCE_EXHAUSTED]: ZdResourceExhaustedError,
  [Status.DEADLINE_EXCEEDED]: ZdDeadlineExceededError,
  [Status.CANCELLED]: ZdCancelledError,
};

/** Protocol mismatches carry ZD_PROTOCOL_MISMATCH; older servers only say "protocol version". */
function isProtocolMismatch(code: string | undefined, details: string): boolean {
  return code === 'ZD_PROTOCOL_MISMATCH' || (code === undefined && /protocol version/i.test(details));
}

/**
 * The one mapping from a gRPC `ClientError` to a named `ZdError`. Anything
 * else (AbortError, programming errors, already-mapped errors) is returned as is.
 */
export function mapGrpcError(err: unknown): unknown {
  if (!(err instanceof ClientError)) return err;
  // grpc-js ends an unreachable target's text with a "Resolution note:" that is empty when DNS had nothing to say.
  const details = err.details.replace(/\s*Resolution note:\s*$/, '') || Status[err.code] || 'unknown error';
  const code = parseZdCode(details);
  let cls: ZdErrorClass = BY_STATUS[err.code] ?? ZdInternalError;
  if (err.code === Status.FAILED_PRECONDITION && isProtocolMismatch(code, details)) cls = ZdProtocolError;
  return new cls(details, err.code, { code, path: err.path, cause: err });
}
