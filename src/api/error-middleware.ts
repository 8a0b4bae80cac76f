/**
 * The one place errors become statuses: catalogued ServerErrors and aborts
 * pass through; Redis out of reach becomes ZD_STORE_UNAVAILABLE (a WARN);
 * anything else is logged and becomes INTERNAL. A request
 * that did not decode is refused before any handler sees it, naming the
 * fields whose text is no UTF-8 when that is why.
 */
import { isAbortError } from 'abort-controller-x';
import { ServerError, Status, type CallContext, type ServerMiddlewareCall } from 'nice-grpc';
import { invalidArgument, storeUnavailable } from '../errors';
import type { Logger } from '../util/logger';
import { decodeProblem } from '../wire/adapter';

export function errorMiddleware(log: Logger) {
  return async function* <Req, Res>(call: ServerMiddlewareCall<Req, Res>, context: CallContext) {
    const undecoded = call.requestStream ? undefined : decodeProblem(call.request);
    if (undecoded) throw invalidArgument(undecoded.field, undecoded.reason);
    try {
      return yield* call.next(call.request, context);
    } catch (err) {
      if (err instanceof ServerError || isAbortError(err)) throw err;
      const unavailable = storeUnavailable(err);
      if (unavailable) {
        log.warn({ method: call.method.path, err: (err as Error).message }, 'store unavailable');
        throw unavailable;
      }
      log.error({ method: call.method.path, err: err instanceof Error ? err.stack : String(err) }, 'unexpected error in handler');
      throw new ServerError(Status.INTERNAL, 'ZD_INTERNAL: internal error');
    }
  };
}
