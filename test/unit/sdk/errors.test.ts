import { AbortError } from 'abort-controller-x';
import { ClientError, Status } from 'nice-grpc';
import {
  mapGrpcError, parseZdCode, ZdDeadlineExceededError, ZdError, ZdFailedPreconditionError, ZdInternalError,
  ZdInvalidArgumentError, ZdNotFoundError, ZdPermissionError, ZdProtocolError, ZdResourceExhaustedError,
  ZdUnauthenticatedError, ZdUnavailableError,
} from '../../../src/sdk/common';
import { Client } from '../../../src/sdk/client';
import { LockedByOtherError, LockExpiredError, mapFetchError } from '../../../src/sdk/fetch';

const PATH = '/zdmatch.v1.MatchingService/EnqueueStep';
const ce = (status: Status, details: string) => new ClientError(PATH, status, details);

describe('mapGrpcError', () => {
  it.each([
    [Status.INVALID_ARGUMENT, 'ZD_INVALID_ARGUMENT: step.tenant: must not be empty', ZdInvalidArgumentError, 'ZD_INVALID_ARGUMENT'],
    [Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND: task abc not found', ZdNotFoundError, 'ZD_TASK_NOT_FOUND'],
    [Status.UNAVAILABLE, 'ZD_RPC_UNAVAILABLE: no worker took rpc x within 10000 ms', ZdUnavailableError, 'ZD_RPC_UNAVAILABLE'],
    [Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED: the credential does not cover tenant t', ZdPermissionError, 'ZD_PERMISSION_DENIED'],
    [Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED: missing bearer token', ZdUnauthenticatedError, 'ZD_UNAUTHENTICATED'],
    [Status.RESOURCE_EXHAUSTED, 'ZD_TOO_MANY_STREAMS: this node has 5 registered streams', ZdResourceExhaustedError, 'ZD_TOO_MANY_STREAMS'],
    [Status.FAILED_PRECONDITION, 'ZD_LOCK_EXPIRED: the lock of task x has expired', ZdFailedPreconditionError, 'ZD_LOCK_EXPIRED'],
    [Status.DEADLINE_EXCEEDED, 'Deadline exceeded', ZdDeadlineExceededError, undefined],
    [Status.INTERNAL, 'ZD_INTERNAL: internal error', ZdInternalError, 'ZD_INTERNAL'],
    [Status.UNKNOWN, 'boom', ZdInternalError, undefined],
  ])('status %p → named class, keeping the message and code', (status, details, cls, code) => {
    const err = mapGrpcError(ce(status, details)) as ZdError;
    expect(err).toBeInstanceOf(cls);
    expect(err).toBeInstanceOf(ZdError);
    expect(err.message).toBe(details);
    expect(err.code).toBe(code);
    expect(err.status).toBe(status);
    expect(err.path).toBe(PATH);
    expect(err.cause).toBeInstanceOf(ClientError);
  });

  it('maps a protocol mismatch to ZdProtocolError, naming both versions', () => {
    const msg = 'ZD_PROTOCOL_MISMATCH: worker protocol version 4 is not supported; this server speaks protocol version 3';
    const err = mapGrpcError(ce(Status.FAILED_PRECONDITION, msg));
    expect(err).toBeInstanceOf(ZdProtocolError);
    expect((err as Error).message).toMatch(/version 4.*version 3/);
    // An older server without ZD codes still says "protocol version".
    expect(mapGrpcError(ce(Status.FAILED_PRECONDITION, 'unsupported protocol version 4 (server: 3)'))).toBeInstanceOf(ZdProtocolError);
  });

  // The fetch verdicts LOCKED_BY_OTHER (ABORTED) and LOCK_EXPIRED (OUT_OF_RANGE) once shared
  // FAILED_PRECONDITION; a Client caller gets the class they had. Was: ZdInternalError for
  // ABORTED, ZdInvalidArgumentError ("fix the request") for OUT_OF_RANGE.
  it.each([
    [Status.ABORTED, 'ZD_LOCKED_BY_OTHER: task x is locked by another worker', 'ZD_LOCKED_BY_OTHER'],
    [Status.ABORTED, 'aborted by the proxy', undefined],
    [Status.OUT_OF_RANGE, 'ZD_LOCK_EXPIRED: the lock of task x has expired', 'ZD_LOCK_EXPIRED'],
    [Status.OUT_OF_RANGE, 'offset past the end', undefined],
  ])('maps status %p (%p) to ZdFailedPreconditionError', (status, details, code) => {
    const err = mapGrpcError(ce(status, details)) as ZdError;
    expect(err).toBeInstanceOf(ZdFailedPreconditionError);
    expect(err).not.toBeInstanceOf(ZdInternalError);
    expect(err).not.toBeInstanceOf(ZdInvalidArgumentError);
    expect(err).not.toBeInstanceOf(ZdProtocolError);
    expect([err.message, err.code, err.status]).toEqual([details, code, status]);
  });

  it('keeps the fetch verdicts of ABORTED and OUT_OF_RANGE, and the common class without a code', () => {
    const locked = mapFetchError(ce(Status.ABORTED, 'ZD_LOCKED_BY_OTHER: task x is locked by another worker'));
    expect(locked).toBeInstanceOf(LockedByOtherError);
    expect(mapFetchError(ce(Status.OUT_OF_RANGE, 'ZD_LOCK_EXPIRED: the lock of task x has expired'))).toBeInstanceOf(LockExpiredError);
    // The named verdict keeps what the common mapping gave: message, code, status, path and cause.
    const cause = ce(Status.ABORTED, 'ZD_LOCKED_BY_OTHER: task x is locked by another worker');
    expect(mapFetchError(cause)).toMatchObject({
      name: 'LockedByOtherError', message: cause.details, code: 'ZD_LOCKED_BY_OTHER', status: Status.ABORTED, path: PATH, cause,
    });
    const bare = mapFetchError(ce(Status.ABORTED, 'aborted by the proxy'));
    expect(bare).toBeInstanceOf(ZdFailedPreconditionError);
    expect(bare).not.toBeInstanceOf(LockedByOtherError);
  });

  it('drops the empty "Resolution note:" grpc-js ends an unreachable target\'s text with', async () => {
    const client = new Client({ address: '127.0.0.1:1' });
    try {
      const err = await client.getTask('t1', { timeoutMs: 5000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ZdUnavailableError);
      expect((err as Error).message).toMatch(/ECONNREFUSED 127\.0\.0\.1:1\.?$/);
    } finally {
      client.close();
    }
    expect(mapGrpcError(ce(Status.UNAVAILABLE, 'No connection established. Resolution note: no such host'))).toMatchObject({
      message: 'No connection established. Resolution note: no such host', // a note with words in it stays
    });
  });

  it('counts UNAUTHENTICATED as a permission error', () => {
    expect(mapGrpcError(ce(Status.UNAUTHENTICATED, 'x'))).toBeInstanceOf(ZdPermissionError);
  });

  it('passes other errors through unchanged', () => {
    const abort = new AbortError();
    expect(mapGrpcError(abort)).toBe(abort);
    const plain = new Error('x');
    expect(mapGrpcError(plain)).toBe(plain);
  });

  it('parses only a leading ZD code', () => {
    expect(parseZdCode('ZD_DRAINING: this node is draining')).toBe('ZD_DRAINING');
    expect(parseZdCode('see ZD_DRAINING')).toBeUndefined();
  });
});
