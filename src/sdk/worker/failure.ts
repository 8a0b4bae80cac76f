/** Turning handler throws into wire failures. */
import { FAILURE_LIMITS, type pb } from '../../wire';

export interface StepFailureOptions {
  /** Failure type matched against the retry policy's `nonRetryable` list. @default the error name */
  type?: string;
  /** End the task at once instead of retrying. @default false */
  nonRetryable?: boolean;
  /** Backoff hint for the next attempt, in ms; 0 = the retry policy's. @default 0 */
  retryAfterMs?: number;
  cause?: unknown;
}

/** Throw from a handler to control how the failure is retried. */
export class StepFailure extends Error {
  override name = 'StepFailure';
  readonly type: string | undefined;
  readonly nonRetryable: boolean;
  readonly retryAfterMs: number;

  constructor(message: string, options: StepFailureOptions = {}) {
    super(message, { cause: options.cause });
    this.type = options.type;
    this.nonRetryable = options.nonRetryable ?? false;
    this.retryAfterMs = options.retryAfterMs ?? 0;
  }
}

/**
 * Any thrown value as a Failure. Duck-typed on `type`, `nonRetryable` and
 * `retryAfterMs` so errors from other libraries can carry them too. Kept within
 * FAILURE_LIMITS, which the node refuses past (a long message is cut here, in
 * the worker, rather than the result refused there).
 */
export function toFailure(err: unknown): pb.IFailure {
  const L = FAILURE_LIMITS;
  const cut = (s: string, n: number) => wellFormed(s.length > n ? s.slice(0, n) : s);
  if (errorLike(err)) {
    try {
      const e = err as Error & { type?: unknown; nonRetryable?: unknown; retryAfterMs?: unknown };
      const retryAfter = typeof e.retryAfterMs === 'number' && Number.isFinite(e.retryAfterMs) ? Math.max(0, Math.round(e.retryAfterMs)) : 0;
      const name = typeof e.name === 'string' && e.name ? e.name : 'Error';
      return {
        message: cut(text(e.message), L.messageChars),
        type: cut(typeof e.type === 'string' && e.type ? e.type : name, L.typeChars),
        non_retryable: e.nonRetryable === true,
        retry_after_ms: Math.min(retryAfter, L.retryAfterMs),
      };
    } catch {
      // a getter that throws: taken as any other thrown value
    }
  }
  return { message: cut(text(err), L.messageChars), type: typeof err };
}

/**
 * An Error, or an object that reads as one (a string `message`): an Error made in another realm
 * (a `vm` context, a module run in a test sandbox) fails `instanceof Error`, and so did a thrown
 * `{ message, nonRetryable: true }`; both went out as text of type "object", their `nonRetryable`
 * and `type` lost, and were retried. Never throws (a throw here would leave the attempt running
 * and its slot busy for good).
 */
function errorLike(err: unknown): boolean {
  if (err instanceof Error) return true;
  if (typeof err !== 'object' || err === null) return false;
  try {
    return typeof (err as { message?: unknown }).message === 'string';
  } catch {
    return false;
  }
}

/**
 * Text the wire can carry: a lone surrogate (a cut inside a pair, or a string built
 * with one) becomes U+FFFD. As it was, protobufjs wrote bytes that are no UTF-8, the
 * node refused the whole frame and ended the stream, and the attempt failed as
 * worker lost, its own failure (and nonRetryable) lost with it.
 */
function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/**
 * A thrown value as text, never throwing itself: String() throws for
 * Object.create(null) or a toString that throws, and a throw here would
 * leave the attempt running and its slot busy for good.
 */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return String(value);
  } catch {
    return `a thrown ${typeof value} that cannot be converted to a string`;
  }
}
