/**
 * The error catalog: every error a client can see, with a stable code, a
 * message template and its gRPC and HTTP statuses. Handlers throw
 * `zdError(code, params)`; one middleware maps it to the wire. docs/errors.md
 * documents every code (a test checks it).
 */
import { Status } from 'nice-grpc';

export interface ErrorSpec {
  readonly grpc: Status;
  readonly http: number;
  /** `{name}` placeholders are filled from the params. */
  readonly message: string;
}

export const ERROR_CATALOG = {
  ZD_INVALID_ARGUMENT: { grpc: Status.INVALID_ARGUMENT, http: 400, message: '{field}: {reason}' },
  ZD_PROTOCOL_MISMATCH: {
    grpc: Status.FAILED_PRECONDITION, http: 412,
    message: 'worker protocol version {client} is not supported; this server speaks protocol version {server}',
  },
  ZD_NOT_REGISTERED: { grpc: Status.FAILED_PRECONDITION, http: 412, message: 'the first frame of a stream must be Register' },
  ZD_TOO_MANY_STREAMS_PER_WORKER: {
    grpc: Status.RESOURCE_EXHAUSTED, http: 429,
    message: 'app worker id {appWorkerId} already has {count} streams on this node (matching.maxConcurrentTasksCap = {cap})',
  },
  ZD_TOO_MANY_STREAMS: {
    grpc: Status.RESOURCE_EXHAUSTED, http: 429, message: 'this node has {count} registered streams (matching.maxStreams = {cap})',
  },
  ZD_STREAM_NOT_READ: {
    grpc: Status.RESOURCE_EXHAUSTED, http: 429,
    message: 'the worker reads none of its stream: {count} frames wait for it (at most {cap})',
  },
  ZD_TASK_NOT_FOUND: { grpc: Status.NOT_FOUND, http: 404, message: 'task {taskId} not found' },
  ZD_RPC_NOT_FOUND: { grpc: Status.NOT_FOUND, http: 404, message: 'no connected worker supports rpc {rpcName} of flow type {flowType}' },
  // {reason} says what happened, a worker's run past the caller's timeout as well as no taker.
  ZD_RPC_UNAVAILABLE: { grpc: Status.UNAVAILABLE, http: 503, message: 'rpc {rpcName}: {reason}' },
  // The fetch surface's verdicts each have their own status (DESIGN §7): a worker
  // tells them apart by status alone. ABORTED: a conflict with another holder;
  // OUT_OF_RANGE: the lock's time has passed; FAILED_PRECONDITION: the task's state.
  ZD_OUTCOME_GROUP_NOT_FOUND: { grpc: Status.NOT_FOUND, http: 404, message: 'no outcome consumer group {group}' },
  ZD_OUTCOME_GROUP_ACTIVE: {
    grpc: Status.FAILED_PRECONDITION, http: 409,
    message: 'outcome consumer group {group} was read {idleMs} ms ago (less than {activeMs} ms): it looks in use; force the drop once no engine reads it',
  },
  ZD_LOCKED_BY_OTHER: { grpc: Status.ABORTED, http: 409, message: 'task {taskId} is locked by another worker' },
  ZD_LOCK_EXPIRED: { grpc: Status.OUT_OF_RANGE, http: 410, message: 'the lock of task {taskId} has expired' },
  ZD_TERMINAL: { grpc: Status.FAILED_PRECONDITION, http: 422, message: 'task {taskId} is terminal' },
  ZD_NOT_TERMINAL: { grpc: Status.FAILED_PRECONDITION, http: 409, message: 'task {taskId} is {state}, not terminal' },
  ZD_BODY_TOO_LARGE: { grpc: Status.RESOURCE_EXHAUSTED, http: 413, message: 'the request body exceeds {limit} bytes' },
  ZD_UNKNOWN_ROUTE: { grpc: Status.UNIMPLEMENTED, http: 404, message: 'no route {method} {path}' },
  ZD_METHOD_NOT_ALLOWED: { grpc: Status.UNIMPLEMENTED, http: 405, message: '{path} takes {allowed}, not {method}' },
  ZD_UNSUPPORTED_MEDIA_TYPE: { grpc: Status.INVALID_ARGUMENT, http: 415, message: 'content-type {got}: the body must be sent as application/json' },
  ZD_UNAUTHENTICATED: { grpc: Status.UNAUTHENTICATED, http: 401, message: '{reason}' },
  ZD_PERMISSION_DENIED: { grpc: Status.PERMISSION_DENIED, http: 403, message: 'the credential does not cover tenant {tenant}' },
  ZD_OPERATOR_SCOPE_REQUIRED: {
    grpc: Status.PERMISSION_DENIED, http: 403, message: '{method} needs a client token with the operator scope',
  },
  ZD_WRONG_CREDENTIAL_KIND: {
    grpc: Status.PERMISSION_DENIED, http: 403, message: 'a {kind} token cannot call this surface; it takes {wanted} tokens',
  },
  ZD_TOO_MANY_LONG_POLLS: {
    grpc: Status.RESOURCE_EXHAUSTED, http: 429,
    message: 'this node has {count} long polls in flight (limits.maxLongPolls = {cap}); retry with backoff',
  },
  ZD_REQUEST_TIMEOUT: { grpc: Status.DEADLINE_EXCEEDED, http: 408, message: 'the request did not arrive in time ({limit})' },
  ZD_HEADERS_TOO_LARGE: { grpc: Status.RESOURCE_EXHAUSTED, http: 431, message: 'the request headers are too large or too many: {limit}' },
  ZD_BAD_HTTP_REQUEST: { grpc: Status.INVALID_ARGUMENT, http: 400, message: 'the HTTP request is malformed ({reason})' },
  ZD_DRAINING: { grpc: Status.UNAVAILABLE, http: 503, message: 'this node is draining' },
  ZD_STORE_UNAVAILABLE: { grpc: Status.UNAVAILABLE, http: 503, message: 'the store is unavailable: {reason}' },
  ZD_INTERNAL: { grpc: Status.INTERNAL, http: 500, message: 'internal error' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
