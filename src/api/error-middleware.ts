/**
 * The one place errors become statuses: catalogued ServerErrors and aborts
 * pass through; anything else is logged and becomes INTERNAL.
 */
import { isAbortError } from 'abort-controller-x';
import { ServerError, Status, type CallContext, type ServerMiddlewareCall } from 'nice-grpc';
import type { Logger } from '../util/logger';

export function errorMiddleware(log: Logger) {
  return async function* <Req, Res>(call: ServerMiddlewareCall<Req, Res>, context: CallContext) {
    try {
      return yield* call.next(call.request, context);
    } catch (err) {
      if (err instanceof ServerError || isAbortError(err)) throw err;
      log.error({ method: call.method.path, err: err instanceof Error ? err.stack : String(err) }, 'unexpected error in handler');
      throw new ServerError(Status.INTERNAL, 'ZD_INTERNAL: internal error');
    }
  };
}
