/**
 * The protocol check of every public call (DESIGN §5): a caller that sends
 * its protocol version in the `zd-protocol-version` header and speaks one
 * this server does not support fails at once with FAILED_PRECONDITION
 * (`ZD_PROTOCOL_MISMATCH`, naming both versions), before any handler runs —
 * so a new Client fails its first call and a new Worker fails its first
 * Connect with a clear error instead of a confusing one later.
 *
 * No header means an older caller that predates it: allowed (a worker's
 * Register still carries its version, checked in worker-service.ts).
 * Health checks are exempt: load balancers and probes send no version.
 */
import type { CallContext, ServerMiddlewareCall } from 'nice-grpc';
import { zdError } from '../errors';
import { PROTOCOL_VERSION } from '../wire';
import { MIN_PROTOCOL_VERSION } from './worker-service';

/** The header name; the SDKs send the same (sdk/common/version.ts, kept equal by a unit test). */
export const PROTOCOL_VERSION_HEADER = 'zd-protocol-version';

/** Method path prefixes never checked: gRPC health. */
export const PROTOCOL_CHECK_EXEMPT: readonly string[] = ['/grpc.health.v1.Health/'];

export interface ProtocolMiddlewareOptions {
  /** Oldest version served. @default MIN_PROTOCOL_VERSION */
  min?: number;
  /** Newest version served. @default PROTOCOL_VERSION */
  max?: number;
  /** Method path prefixes to skip. @default PROTOCOL_CHECK_EXEMPT */
  exempt?: readonly string[];
}

/** The version a header names, or the raw text (for the error) when it is not one. */
function parseVersion(raw: string): number | string {
  const text = raw.trim();
  return /^\d{1,9}$/.test(text) ? Number(text) : JSON.stringify(text.slice(0, 32));
}

export function protocolMiddleware(options: ProtocolMiddlewareOptions = {}) {
  const min = options.min ?? MIN_PROTOCOL_VERSION;
  const max = options.max ?? PROTOCOL_VERSION;
  const exempt = options.exempt ?? PROTOCOL_CHECK_EXEMPT;
  return async function* <Req, Res>(call: ServerMiddlewareCall<Req, Res>, context: CallContext) {
    if (!exempt.some((prefix) => call.method.path.startsWith(prefix))) {
      // Several values (a proxy that appended one) must all be supported. Node's HTTP/2 server
      // joins a header sent more than once into one value, "4, 4": each part is one version.
      for (const raw of context.metadata.getAll(PROTOCOL_VERSION_HEADER)) {
        for (const part of String(raw).split(',')) {
          const version = parseVersion(part);
          if (typeof version !== 'number' || version < min || version > max) {
            throw zdError('ZD_PROTOCOL_MISMATCH', { client: version, server: PROTOCOL_VERSION });
          }
        }
      }
    }
    return yield* call.next(call.request, context);
  };
}
