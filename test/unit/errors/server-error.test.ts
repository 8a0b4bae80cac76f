/**
 * A catalogued error on the wire: its gRPC status and HTTP status come from the
 * catalog, and its details open with the stable ZD_* code followed by the
 * message with its placeholders filled (a missing one left as written, so a
 * forgotten parameter shows rather than vanishes).
 */
import { Status } from 'nice-grpc';
import { ERROR_CATALOG, invalidArgument, zdError, ZdError } from '../../../src/errors';

it('takes its statuses from the catalog and opens its details with its code', () => {
  const e = zdError('ZD_TASK_NOT_FOUND', { taskId: 'tk-1' });
  expect(e).toBeInstanceOf(ZdError);
  expect(e).toMatchObject({ zdCode: 'ZD_TASK_NOT_FOUND', code: Status.NOT_FOUND, details: 'ZD_TASK_NOT_FOUND: task tk-1 not found' });
  expect(e.httpStatus).toBe(404);
  for (const [code, spec] of Object.entries(ERROR_CATALOG)) {
    const err = zdError(code as keyof typeof ERROR_CATALOG);
    expect([code, err.code, err.httpStatus]).toEqual([code, spec.grpc, spec.http]);
    expect(err.details.startsWith(`${code}: `)).toBe(true);
  }
});

it('fills every placeholder, numbers included, and leaves a missing one as written', () => {
  expect(zdError('ZD_TOO_MANY_STREAMS', { count: 7, cap: 0 }).details)
    .toBe('ZD_TOO_MANY_STREAMS: this node has 7 registered streams (matching.maxStreams = 0)');
  expect(zdError('ZD_RPC_NOT_FOUND', { rpcName: 'quote' }).details)
    .toBe('ZD_RPC_NOT_FOUND: no connected worker supports rpc quote of flow type {flowType}');
});

it('names the field and the reason of a bad argument', () => {
  expect(invalidArgument('steps[2].tenant', 'is empty')).toMatchObject({
    zdCode: 'ZD_INVALID_ARGUMENT', code: Status.INVALID_ARGUMENT, details: 'ZD_INVALID_ARGUMENT: steps[2].tenant: is empty',
  });
});

it('maps the statuses DESIGN names for protocol, capacity and store errors', () => {
  expect(zdError('ZD_PROTOCOL_MISMATCH').code).toBe(Status.FAILED_PRECONDITION);
  expect(zdError('ZD_TOO_MANY_STREAMS_PER_WORKER').code).toBe(Status.RESOURCE_EXHAUSTED);
  expect(zdError('ZD_STORE_UNAVAILABLE').httpStatus).toBe(503);
  expect(zdError('ZD_LOCKED_BY_OTHER').code).toBe(Status.ABORTED);
  expect(zdError('ZD_LOCK_EXPIRED').code).toBe(Status.OUT_OF_RANGE);
});

it('states a size limit with its unit', () => {
  const err = zdError('ZD_BODY_TOO_LARGE', { limit: 1048576 });
  expect([err.code, err.httpStatus, err.details]).toEqual([Status.RESOURCE_EXHAUSTED, 413, 'ZD_BODY_TOO_LARGE: the request body exceeds 1048576 bytes']);
});
