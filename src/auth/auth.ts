/**
 * Who may call what (docs/security.md). Each public surface takes one kind of
 * bearer token:
 *
 *   WorkerTaskService, ExternalTaskService, HTTP fetch routes → worker tokens
 *   MatchingService                                          → client tokens
 *   OperatorService, MatchingService.DescribeCluster, ListOutcomeGroups, DropOutcomeGroup → client tokens with `operator: true`
 *   gRPC health                                              → none (probes send no token)
 *
 * The middleware authenticates (UNAUTHENTICATED) and hands the handlers a
 * Principal; the handlers check each tenant they touch (PERMISSION_DENIED, or
 * NOT_FOUND for a task of a tenant the token does not cover, so task ids of
 * other tenants cannot be probed). With `auth.enabled: false` every call gets
 * the UNRESTRICTED principal.
 */
import type { CallContext, ServerMiddlewareCall } from 'nice-grpc';
import type { Config } from '../config';
import { zdError } from '../errors';
import type { Logger } from '../util/logger';
import { covers, MAX_TOKEN_CHARS, TokenFile, UNRESTRICTED, type Principal, type TokenKind } from './tokens';

/** `Bearer <token>`: the token is what a tokens file may hold (tokens.ts). */
const BEARER = new RegExp(`^Bearer\\s+([\\x21-\\x7e]{1,${MAX_TOKEN_CHARS}})\\s*$`, 'i');

export { covers, UNRESTRICTED, type Principal, type TokenKind } from './tokens';

/** Method path prefixes that need no token. */
export const AUTH_EXEMPT: readonly string[] = ['/grpc.health.v1.Health/'];

/** The token kind each service takes; a service not listed is refused. */
const SERVICE_KIND: Record<string, TokenKind> = {
  'zdmatch.v1.WorkerTaskService': 'worker',
  'zdmatch.v1.ExternalTaskService': 'worker',
  'zdmatch.v1.MatchingService': 'client',
  'zdmatch.v1.OperatorService': 'client',
  // The schema only (the public services'), for buf curl and grpcurl: any client token.
  'grpc.reflection.v1.ServerReflection': 'client',
  'grpc.reflection.v1alpha.ServerReflection': 'client',
};

/** Methods that need the operator scope. */
const OPERATOR_METHODS = new Set([
  '/zdmatch.v1.MatchingService/DescribeCluster',
  '/zdmatch.v1.MatchingService/ListOutcomeGroups',
  '/zdmatch.v1.MatchingService/DropOutcomeGroup',
]);
const OPERATOR_SERVICES = new Set(['zdmatch.v1.OperatorService']);

export class Auth {
  readonly enabled: boolean;
  private readonly files: Record<TokenKind, TokenFile>;

  constructor(config: Config, private readonly log: Logger) {
    this.enabled = config.auth.enabled;
    this.files = {
      worker: new TokenFile('worker', config.auth.workerTokensFile, log, config.auth.reloadInterval),
      client: new TokenFile('client', config.auth.clientTokensFile, log, config.auth.reloadInterval),
    };
  }

  start(): void {
    if (!this.enabled) {
      this.log.warn(
        '!!! AUTH IS OFF (auth.enabled: false): every caller may act for every tenant. Never run like this outside a private network or `zdmatch dev`. !!!',
      );
      return;
    }
    this.files.worker.start();
    this.files.client.start();
  }

  stop(): void {
    this.files.worker.stop();
    this.files.client.stop();
  }

  /** A test seam: force a re-read now. */
  reload(): void {
    this.files.worker.reload();
    this.files.client.reload();
  }

  /** The principal of an `authorization` header value, for a surface taking `kind` tokens. */
  authenticate(kind: TokenKind, header: string | undefined): Principal {
    if (!this.enabled) return UNRESTRICTED;
    const m = header === undefined ? null : BEARER.exec(header);
    if (!m) throw zdError('ZD_UNAUTHENTICATED', { reason: 'a bearer token is required (authorization: Bearer <token>)' });
    const token = m[1]!;
    const p = this.files[kind].lookup(token);
    if (p) return p;
    const other: TokenKind = kind === 'worker' ? 'client' : 'worker';
    if (this.files[other].lookup(token)) {
      throw zdError('ZD_WRONG_CREDENTIAL_KIND', { kind: other, wanted: kind });
    }
    throw zdError('ZD_UNAUTHENTICATED', { reason: `the bearer token is not a valid ${kind} token` });
  }

  /**
   * A long-lived call's principal now: its bearer token checked against the
   * tokens as they are now, so a reload that revoked it stops the call's next
   * request (EnqueueStream checks every request this way).
   */
  recheck(kind: TokenKind, context: CallContext): Principal {
    if (!this.enabled) return UNRESTRICTED;
    const raw = context.metadata.get('authorization');
    return this.authenticate(kind, raw === undefined ? undefined : String(raw));
  }

  /** gRPC middleware: authenticates every call but health and puts the Principal on the context. */
  middleware() {
    const self = this;
    return async function* <Req, Res>(call: ServerMiddlewareCall<Req, Res>, context: CallContext) {
      const path = call.method.path;
      if (AUTH_EXEMPT.some((prefix) => path.startsWith(prefix))) return yield* call.next(call.request, context);
      const service = /^\/([^/]+)\//.exec(path)?.[1] ?? '';
      const kind = SERVICE_KIND[service];
      let principal: Principal;
      if (!self.enabled) principal = UNRESTRICTED;
      else if (!kind) throw zdError('ZD_UNAUTHENTICATED', { reason: `${path} is not a public method` });
      else {
        const raw = context.metadata.get('authorization');
        principal = self.authenticate(kind, raw === undefined ? undefined : String(raw));
        if ((OPERATOR_SERVICES.has(service) || OPERATOR_METHODS.has(path)) && !principal.operator) {
          throw zdError('ZD_OPERATOR_SCOPE_REQUIRED', { method: path });
        }
      }
      return yield* call.next(call.request, { ...context, [PRINCIPAL]: principal } as CallContext);
    };
  }
}

const PRINCIPAL = Symbol.for('zdmatch.principal');

/** The caller of a gRPC call; fails closed when the auth middleware did not run. */
export function principalOf(ctx: CallContext | undefined): Principal {
  const p = ctx ? (ctx as unknown as Record<symbol, Principal | undefined>)[PRINCIPAL] : undefined;
  if (!p) throw zdError('ZD_UNAUTHENTICATED', { reason: 'no credential was checked for this call' });
  return p;
}

/** PERMISSION_DENIED unless the principal covers `tenant`. */
export function requireTenant(p: Principal, tenant: string): void {
  if (!covers(p, tenant)) throw zdError('ZD_PERMISSION_DENIED', { tenant });
}

/** For reads and mutations of one task: a task of another tenant is NOT_FOUND, never a hint that it exists. */
export function requireTaskTenant(p: Principal, tenant: string | undefined, taskId: string): void {
  if (tenant !== undefined && !covers(p, tenant)) throw zdError('ZD_TASK_NOT_FOUND', { taskId });
}
