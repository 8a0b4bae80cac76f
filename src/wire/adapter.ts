/**
 * The one adapter between protobufjs static classes and nice-grpc: it turns a
 * table of `(path, request class, response class, streaming flags)` into a
 * nice-grpc ServiceDefinition, so handlers and clients are typed by the
 * generated classes and nothing else touches the wire encoding.
 */
import $protobuf from 'protobufjs/minimal';
import type { MethodDefinition } from 'nice-grpc';

/** Marks a request that did not decode; see `decodeErrorOf`. */
export const DECODE_ERROR = Symbol('zdmatch.decodeError');

/**
 * Marks a request that did not decode only because a string field held bytes that
 * are no UTF-8 (protobufjs reads proto3 strings strictly): it carries what a lenient
 * read gave (invalid bytes as U+FFFD), so a worker stream can refuse that one frame,
 * naming it, instead of ending. It carries DECODE_ERROR too: everything else refuses it.
 */
export const INVALID_TEXT = Symbol('zdmatch.invalidText');

export function hasInvalidText(request: unknown): boolean {
  return request !== null && typeof request === 'object' && INVALID_TEXT in request;
}

/** protobufjs's strict string read, switched to its lenient one for a second read of a refused message. */
const strictString = $protobuf.Reader.prototype.stringVerify;
let readLeniently = false;
$protobuf.Reader.prototype.stringVerify = function stringVerifyUnlessLenient(this: $protobuf.Reader): string {
  return readLeniently ? this.string() : strictString.call(this);
};

function leniently<D>(decode: () => D): D | undefined {
  readLeniently = true;
  try {
    return decode();
  } catch {
    return undefined;
  } finally {
    readLeniently = false;
  }
}

/**
 * The string fields of a leniently read message that hold U+FFFD, as paths
 * ("steps[0].tenant", "register.flow_types[1]"): where its bytes that are no
 * UTF-8 were. A field whose valid text holds U+FFFD itself is named too.
 */
export function invalidTextFields(message: unknown, at = ''): string[] {
  if (typeof message === 'string') return message.includes('\uFFFD') ? [at] : [];
  if (message === null || typeof message !== 'object' || message instanceof Uint8Array) return [];
  if (Array.isArray(message)) return message.flatMap((v, i) => invalidTextFields(v, `${at}[${i}]`));
  return Object.entries(message).flatMap(([k, v]) => (k.startsWith('$') ? [] : invalidTextFields(v, at ? `${at}.${k}` : k)));
}

/**
 * Why a request did not decode, as the field to name and the reason: the fields
 * whose text is no UTF-8 when that was all, else the whole message (`whole`,
 * a `what`) and protobufjs's words.
 */
export function decodeProblem(
  request: unknown, whole = 'request', what = 'protobuf message',
): { field: string; reason: string } | undefined {
  const error = decodeErrorOf(request);
  if (error === undefined) return undefined;
  const fields = hasInvalidText(request) ? invalidTextFields(request) : [];
  if (fields.length > 0) return { field: fields.join(', '), reason: 'is not valid UTF-8 text' };
  return { field: whole, reason: `is not a valid ${what} (${error})` };
}

/** The decode error of a request, or undefined when it decoded. */
export function decodeErrorOf(request: unknown): string | undefined {
  return request !== null && typeof request === 'object' && DECODE_ERROR in request
    ? String((request as Record<symbol, unknown>)[DECODE_ERROR])
    : undefined;
}

/** What a generated message class offers the adapter. */
export interface MessageClass<Props, Decoded> {
  encode(message: Props): { finish(): Uint8Array };
  decode(bytes: Uint8Array): Decoded;
}

export type Method<Req, ReqOut, Res, ResOut, RS extends boolean, RespS extends boolean> =
  MethodDefinition<Req, ReqOut, Res, ResOut, RS, RespS>;

/** Builds one method definition; `fullService` is "package.Service". */
export function method<ReqP, ReqD, ResP, ResD, RS extends boolean, RespS extends boolean>(
  fullService: string,
  name: string,
  request: MessageClass<ReqP, ReqD>,
  response: MessageClass<ResP, ResD>,
  requestStream: RS,
  responseStream: RespS,
): MethodDefinition<ReqP, ReqD, ResP, ResD, RS, RespS> {
  return {
    path: `/${fullService}/${name}`,
    requestStream,
    responseStream,
    requestSerialize: (value: ReqP) => request.encode(value).finish(),
    // grpc-js answers an undecodable request with a bare INTERNAL; hand the
    // server a marked empty request instead so it can name the problem.
    requestDeserialize: (bytes: Uint8Array) => {
      try {
        return request.decode(bytes);
      } catch (err) {
        const message = (err as Error).message;
        const lenient = /utf-?8/i.test(message) ? leniently(() => request.decode(bytes)) : undefined;
        if (lenient !== undefined && lenient !== null && typeof lenient === 'object') {
          return Object.assign(lenient, { [DECODE_ERROR]: message, [INVALID_TEXT]: true });
        }
        return { [DECODE_ERROR]: message } as unknown as ReqD;
      }
    },
    responseSerialize: (value: ResP) => response.encode(value).finish(),
    responseDeserialize: (bytes: Uint8Array) => response.decode(bytes),
    options: {},
  };
}

/** Shorthands for the two shapes this protocol uses. */
export function unary<ReqP, ReqD, ResP, ResD>(
  svc: string, name: string, req: MessageClass<ReqP, ReqD>, res: MessageClass<ResP, ResD>,
) {
  return method(svc, name, req, res, false as const, false as const);
}

export function bidi<ReqP, ReqD, ResP, ResD>(
  svc: string, name: string, req: MessageClass<ReqP, ReqD>, res: MessageClass<ResP, ResD>,
) {
  return method(svc, name, req, res, true as const, true as const);
}
