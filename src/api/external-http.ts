/**
 * The fetch surface as HTTP/JSON on `http.listen` (docs/fetch.md), on
 * node:http — five POST routes do not earn a framework. Bodies are JSON
 * objects with camelCase fields; byte payloads are base64 strings. Errors use
 * the catalog: the HTTP status it gives, and a body `{code, message}`.
 *
 *   POST /v1/external-tasks/fetch-and-lock
 *   POST /v1/external-tasks/{taskId}/complete
 *   POST /v1/external-tasks/{taskId}/failure
 *   POST /v1/external-tasks/{taskId}/extend-lock
 *   POST /v1/external-tasks/{taskId}/unlock
 */
import http from 'node:http';
import { listenOn } from '../util/listen';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { UNRESTRICTED, type Auth } from '../auth/auth';
import type { Config } from '../config';
import { ERROR_CATALOG, invalidArgument, storeUnavailable, zdError, ZdError } from '../errors';
import type { ClaimedTask } from '../store/fetch-store';
import type { Logger } from '../util/logger';
import { MAX_TIMER_MS } from '../util/clock';
import { authorizeFetch, authorizeTask } from './external-service';
import type { ExternalTasks } from './external-tasks';
import {
  idempotencyKeyOf, lockDurationOf, parseFail, parseFetch, resultOf, taskRefOf, workerIdOf, type TaskRef,
} from './external-validation';

const PREFIX = '/v1/external-tasks/';
const TASK_ROUTES = new Set(['complete', 'failure', 'extend-lock', 'unlock']);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

type Body = Record<string, unknown>;

/**
 * The fields each route reads. JSON has no schema to refuse a misspelt field,
 * and one dropped silently changes what happens: `lock_duration_ms` taken for
 * an omitted lockDurationMs is a lock of the default 30 s, `retryCount` for
 * retries a terminal task. So any other field is refused, named.
 */
const FIELDS: Record<string, readonly string[]> = {
  'fetch-and-lock': ['workerId', 'topics', 'maxTasks', 'lockDurationMs', 'waitMs'],
  complete: ['workerId', 'result', 'idempotencyKey'],
  failure: ['workerId', 'failure', 'retries', 'retryTimeoutMs'],
  'extend-lock': ['workerId', 'lockDurationMs'],
  unlock: ['workerId'],
};
const TOPIC_FIELDS = ['tenant', 'flowType', 'stepType'];
const FAILURE_FIELDS = ['message', 'type'];

function refuseUnknown(where: string, o: unknown, known: readonly string[]): void {
  if (!o || typeof o !== 'object' || Array.isArray(o)) return; // the field's own check says what it must be
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) throw invalidArgument(`${where}${k}`, `is not a field of this request (its fields: ${known.join(', ')})`);
  }
}

function refuseUnknownFields(action: string, body: Body): void {
  refuseUnknown('', body, FIELDS[action]!);
  if (Array.isArray(body.topics)) body.topics.forEach((t, i) => refuseUnknown(`topics[${i}].`, t, TOPIC_FIELDS));
  if (action === 'failure') refuseUnknown('failure.', body.failure, FAILURE_FIELDS);
}

export function lockedTaskToJson(t: ClaimedTask) {
  return {
    taskId: t.taskId, topic: { tenant: t.tenant, flowType: t.flowType, stepType: t.stepType }, flowId: t.flowId,
    stepExecutionId: t.stepExecutionId, input: t.input.toString('base64'), lockUntilMs: t.lockUntil, retries: t.retries,
    attempt: t.attempt,
  };
}

/** Largest accepted body: a payload of limits.maxPayloadBytes as base64, plus room for the other fields. */
export function bodyLimit(c: Config): number {
  return Math.ceil(c.limits.maxPayloadBytes / 3) * 4 + 64 * 1024;
}

function base64Field(field: string, value: unknown): Buffer | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !BASE64.test(value)) throw invalidArgument(field, 'must be a base64 string');
  return Buffer.from(value, 'base64');
}

/** JSON text is UTF-8 (RFC 8259 §8.1); bytes that are not are refused, never read as U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** A UTF-16 surrogate without its pair: what a JSON escape such as "\ud800" makes, and no Unicode text. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Refuses a string (a member name or a value) holding a lone surrogate, naming where it is.
 * Redis would store it as U+FFFD: a worker id or a failure message other than the one sent.
 * gRPC refuses the same text (protobufjs reads strings as strict UTF-8).
 */
function refuseLoneSurrogates(value: unknown, path: string): void {
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) throw invalidArgument(path || 'body', 'holds a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair), which is no Unicode text');
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => refuseLoneSurrogates(v, `${path}[${i}]`));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (LONE_SURROGATE.test(k)) throw invalidArgument(path || 'body', 'has a member name holding a lone UTF-16 surrogate, which is no Unicode text');
      refuseLoneSurrogates(v, at(k));
    }
  }
}

/**
 * The first member name an object of `text` (valid JSON) gives twice, as a field path
 * (`failure.message`, `topics[0].tenant`); undefined when none does. JSON.parse keeps the
 * last one silently, and parsers differ on which one wins: `"retries": 3 … "retries": 0`
 * would make the task terminal where a proxy that read the first saw retries left.
 */
export function duplicateMember(text: string): string | undefined {
  interface Container { names?: Set<string>; path: string; name: string; index: number }
  const stack: Container[] = [];
  let nameNext = false;
  const pathIn = (c: Container | undefined): string => {
    if (!c) return '';
    if (!c.names) return `${c.path}[${c.index}]`;
    return c.path ? `${c.path}.${c.name}` : c.name;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      // The closing quote: the next one not escaped (preceded by an even run of backslashes).
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c /* \ */) slashes++;
        if (slashes % 2 === 0) break;
      }
      const top = stack[stack.length - 1];
      if (nameNext && top?.names) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.names.has(name)) return top.path ? `${top.path}.${name}` : name;
        top.names.add(name);
        top.name = name;
        nameNext = false;
      }
      i = end;
    } else if (ch === 0x7b /* { */) {
      stack.push({ names: new Set(), path: pathIn(stack[stack.length - 1]), name: '', index: 0 });
      nameNext = true;
    } else if (ch === 0x5b /* [ */) {
      stack.push({ path: pathIn(stack[stack.length - 1]), name: '', index: 0 });
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      stack.pop();
    } else if (ch === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.names) nameNext = true;
      else if (top) top.index++;
    }
  }
  return undefined;
}

/** The request stream failed before its end: the caller reset or closed the connection mid-body. Nobody to answer. */
class CallerGone extends Error {}

function readBody(req: http.IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(zdError('ZD_BODY_TOO_LARGE', { limit }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!failed) reject(new CallerGone((err as Error).message));
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      let text: string;
      try {
        text = UTF8.decode(Buffer.concat(chunks));
      } catch {
        reject(invalidArgument('body', 'is not valid UTF-8 (JSON text is UTF-8, RFC 8259)'));
        return;
      }
      if (text.trim() === '') {
        resolve({});
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        reject(invalidArgument('body', `is not valid JSON (${(err as Error).message})`));
        return;
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        reject(invalidArgument('body', 'must be a JSON object'));
        return;
      }
      const twice = duplicateMember(text);
      if (twice !== undefined) {
        reject(invalidArgument(twice, 'is given twice; each member of a JSON object is named once'));
        return;
      }
      try {
        refuseLoneSurrogates(parsed, '');
      } catch (err) {
        reject(err);
        return;
      }
      resolve(parsed as Body);
    });
  });
}

/**
 * Writes a JSON response; false when it did not reach the socket whole. A client that reads
 * none of it within `writeTimeoutMs` loses the connection: it held the socket and the
 * response's memory for good (and, for a fetch, locks it never sees until they lapse).
 */
function sendJson(
  res: http.ServerResponse, status: number, body: unknown, writeTimeoutMs: number, close = false, headers: Record<string, string> = {},
): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) {
      resolve(false);
      return;
    }
    const text = JSON.stringify(body);
    // Destroyed, the response may still emit 'finish' (Node ends it with the socket): not written.
    let stalledOut = false;
    const stalled = setTimeout(() => {
      stalledOut = true;
      res.destroy();
    }, Math.min(writeTimeoutMs, MAX_TIMER_MS));
    stalled.unref();
    res.once('finish', () => {
      clearTimeout(stalled);
      resolve(!stalledOut);
    });
    res.once('close', () => {
      clearTimeout(stalled);
      resolve(!stalledOut && res.writableFinished);
    });
    res.writeHead(status, {
      ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...(close ? { connection: 'close' } : {}),
    });
    res.end(text);
  });
}

function errorBody(err: ZdError): { code: string; message: string } {
  // ServerError.details is "<code>: <message>"
  const prefix = `${err.zdCode}: `;
  return { code: err.zdCode, message: err.details.startsWith(prefix) ? err.details.slice(prefix.length) : err.details };
}

/** Headers HTTP requires with a status (RFC 9110 §15.5.6, §11.6.1): clients and proxies act on them, not on our body. */
function errorHeaders(err: ZdError): Record<string, string> {
  if (err.zdCode === 'ZD_METHOD_NOT_ALLOWED') return { allow: String(err.params.allowed) };
  if (err.zdCode === 'ZD_UNAUTHENTICATED') return { 'www-authenticate': 'Bearer realm="zdmatch"' };
  return {};
}

/**
 * The path of a request target. A server must accept the absolute-form too (RFC 9112 §3.2.2):
 * proxies forward `POST http://node:8802/v1/…` as they received it.
 */
function pathOf(target: string): string {
  const origin = /^https?:\/\/[^/?#]*/i.exec(target);
  const path = origin ? target.slice(origin[0].length) : target;
  return path.split('?')[0] || '/';
}

export interface ExternalHttpOptions {
  /** Bearer tokens (worker tokens); none = auth off. */
  auth?: Auth;
  /** Serve HTTPS with this PEM certificate and key. */
  tls?: { cert: Buffer; key: Buffer };
}

type TaskCall = (surface: ExternalTasks, ref: TaskRef, workerId: string) => Promise<unknown>;

/** Validates the body of a task route; returns the call it makes (nothing runs until the task is authorised). */
function parseTaskRoute(action: string, body: Body, c: Config): TaskCall {
  switch (action) {
    case 'complete': {
      const result = resultOf('http', base64Field('result', body.result), c);
      const key = idempotencyKeyOf('http', body.idempotencyKey);
      return async (surface, ref, workerId) => {
        await surface.complete(ref, workerId, result, key);
        return {};
      };
    }
    case 'failure': {
      const failure = body.failure === undefined || body.failure === null ? {} : body.failure;
      if (typeof failure !== 'object' || Array.isArray(failure)) throw invalidArgument('failure', 'must be an object {message, type}');
      // JSON can leave it out, and taken as 0 a missing count would make the task terminal (gRPC cannot tell the two apart).
      if (body.retries === undefined || body.retries === null || body.retries === '') {
        throw invalidArgument('retries', 'is required: the fetch retries left after this failure (0 makes the task terminal)');
      }
      const f = parseFail('http', failure as { message?: unknown; type?: unknown }, body.retries, body.retryTimeoutMs);
      return async (surface, ref, workerId) => ({ terminal: await surface.fail(ref, workerId, f) });
    }
    case 'extend-lock': {
      const lockMs = lockDurationOf('http', body.lockDurationMs, c);
      return async (surface, ref, workerId) => ({ lockUntilMs: await surface.extendLock(ref, workerId, lockMs) });
    }
    default:
      return async (surface, ref, workerId) => {
        await surface.unlock(ref, workerId);
        return {};
      };
  }
}

export function externalHttpHandler(surface: ExternalTasks, c: Config, log: Logger, opts: ExternalHttpOptions = {}) {
  const limit = bodyLimit(c);

  async function route(req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal, state: { bodyRead: boolean }): Promise<void> {
    // Node's parser keeps the first maxHeadersCount headers and drops the rest without a word; it keeps
    // one more than limits.httpMaxHeaders (startExternalHttp), so seeing that one means too many were sent.
    if (req.rawHeaders.length / 2 > c.limits.httpMaxHeaders) {
      throw zdError('ZD_HEADERS_TOO_LARGE', { limit: `more than limits.httpMaxHeaders (${c.limits.httpMaxHeaders}) headers` });
    }
    // Node's own check is off (startExternalHttp): a Host dropped with the headers past the count was answered a bare 400.
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
      throw zdError('ZD_BAD_HTTP_REQUEST', { reason: 'no Host header' });
    }
    const path = pathOf(req.url ?? '/');
    const method = req.method ?? 'GET';
    let action: string;
    let taskId: string | undefined;
    if (path === `${PREFIX}fetch-and-lock`) {
      action = 'fetch-and-lock';
    } else {
      const m = path.startsWith(PREFIX) ? /^([^/]+)\/([a-z-]+)$/.exec(path.slice(PREFIX.length)) : null;
      if (!m || !TASK_ROUTES.has(m[2]!)) throw zdError('ZD_UNKNOWN_ROUTE', { method, path });
      try {
        taskId = decodeURIComponent(m[1]!);
      } catch {
        throw invalidArgument('taskId', 'is not a valid percent-encoded path segment');
      }
      action = m[2]!;
    }
    if (method !== 'POST') throw zdError('ZD_METHOD_NOT_ALLOWED', { path, method, allowed: 'POST' });
    // Authenticate before reading a body: an anonymous caller gets no buffer of ours.
    const principal = opts.auth ? opts.auth.authenticate('worker', req.headers.authorization) : UNRESTRICTED;
    requireJsonContentType(req.headers['content-type']);
    const body = await readBody(req, limit);
    state.bodyRead = true;
    refuseUnknownFields(action, body);

    if (action === 'fetch-and-lock') {
      const r = parseFetch('http', body, c);
      authorizeFetch(principal, r);
      const tasks = await surface.fetchAndLock(r, signal);
      const written = await sendJson(res, 200, { tasks: tasks.map(lockedTaskToJson) }, c.limits.httpRequestTimeout);
      // Claimed for a response that never reached the caller: give the locks back at once.
      if (!written && tasks.length > 0) await surface.unlockClaimed(r.workerId, tasks);
      return;
    }
    const ref = taskRefOf('http', taskId, c);
    const workerId = workerIdOf('http', body.workerId, c);
    // Every field is checked before the task's tenant is: checked after, a bad field would answer
    // INVALID_ARGUMENT for a task id that does not exist and TASK_NOT_FOUND for one of another
    // tenant, telling a foreign worker which ids exist (docs/security.md). gRPC checks in this order too.
    const run = parseTaskRoute(action, body, c);
    await authorizeTask(principal, surface, ref);
    await sendJson(res, 200, await run(surface, ref, workerId), c.limits.httpRequestTimeout);
  }

  return (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const ac = new AbortController();
    // The caller has gone when the connection closes before our response finished.
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    const state = { bodyRead: false };
    route(req, res, ac.signal, state).catch((err: unknown) => {
      if (err instanceof CallerGone) {
        // A client that goes away mid-body is no fault of ours (and no ERROR any client could make us log).
        log.debug({ url: req.url, err: err.message }, 'HTTP caller went away before its body ended');
        res.destroy();
        return;
      }
      let e: ZdError;
      const unavailable = err instanceof ZdError ? undefined : storeUnavailable(err);
      if (err instanceof ZdError) {
        e = err;
      } else if (unavailable) {
        log.warn({ url: req.url, err: (err as Error).message }, 'store unavailable');
        e = unavailable;
      } else {
        log.error({ url: req.url, err: err instanceof Error ? err.stack : String(err) }, 'unexpected error in HTTP handler');
        e = zdError('ZD_INTERNAL');
      }
      // A body not read to its end (refused early, or too large): close the connection after answering.
      void sendJson(res, ERROR_CATALOG[e.zdCode].http, errorBody(e), c.limits.httpRequestTimeout, !state.bodyRead && req.readableEnded === false, errorHeaders(e));
    });
  };
}

/**
 * Only application/json bodies: a browser page may POST text/plain or a form
 * to any address without asking first (a "simple" cross-origin request), but
 * must ask (CORS preflight, which this listener never grants) to send JSON.
 * With auth off (`zdmatch dev`), that keeps a web page from completing or
 * failing tasks on a node it can reach.
 */
function requireJsonContentType(header: string | undefined): void {
  const type = (header ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw zdError('ZD_UNSUPPORTED_MEDIA_TYPE', { got: header ? JSON.stringify(header) : '(none)' });
}

/** Answers what Node's HTTP parser refuses (timeouts, oversized headers, garbage) with a catalogued JSON error. */
function onClientError(c: Config) {
  return (err: NodeJS.ErrnoException, socket: Duplex): void => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    let e: ZdError;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      e = zdError('ZD_REQUEST_TIMEOUT', {
        limit: `limits.httpHeadersTimeout ${c.limits.httpHeadersTimeout} ms, limits.httpRequestTimeout ${c.limits.httpRequestTimeout} ms`,
      });
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      e = zdError('ZD_HEADERS_TOO_LARGE', { limit: `more than ${http.maxHeaderSize} bytes of headers` });
    } else {
      e = zdError('ZD_BAD_HTTP_REQUEST', { reason: String(err.code ?? 'parse error').slice(0, 64) });
    }
    const status = ERROR_CATALOG[e.zdCode].http;
    const text = JSON.stringify(errorBody(e));
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\n`
      + `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  };
}

export function startExternalHttp(
  listen: string, surface: ExternalTasks, c: Config, log: Logger, opts: ExternalHttpOptions = {},
): Promise<{ server: http.Server; address: string }> {
  const handler = externalHttpHandler(surface, c, log, opts);
  // Node enforces the two timeouts on a sweep every connectionsCheckingInterval (30s by default): sweep often enough.
  // No Host check of Node's: the handler makes it, after its count of the headers (see route()).
  const serverOpts = {
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(c.limits.httpHeadersTimeout / 4))), requireHostHeader: false,
  };
  const server: http.Server = opts.tls
    ? https.createServer({ ...serverOpts, cert: opts.tls.cert, key: opts.tls.key }, handler)
    : http.createServer(serverOpts, handler);
  // Slow-loris bounds (limits.http*); long polls are not cut: the request timeout covers receiving the request only.
  server.headersTimeout = c.limits.httpHeadersTimeout;
  server.requestTimeout = c.limits.httpRequestTimeout;
  // Above the load balancer's idle timeout: a connection it reuses must not be closed under it (a 502 for that request).
  server.keepAliveTimeout = c.limits.httpKeepAliveTimeout;
  // One past the bound, which the handler refuses: at the bound itself Node would drop the extra headers and serve the request.
  server.maxHeadersCount = c.limits.httpMaxHeaders + 1;
  server.on('clientError', onClientError(c));
  return listenOn(server, listen, 'http.listen').then((address) => ({ server, address }));
}
