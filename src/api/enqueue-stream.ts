/**
 * MatchingService.EnqueueStream: a producer's enqueues over one long-lived
 * stream. Each request is an EnqueueSteps call answered by one response with
 * its request id; requests run concurrently, so a producer with many calls in
 * flight is not serialised behind the slowest. A unary call costs the node a
 * new HTTP/2 stream, its headers, trailers and call context; a message on an
 * open stream costs a fraction of that (docs/benchmarks.md).
 *
 * A failed request is answered with the status the unary call would have had
 * and the stream goes on (one whose text is no UTF-8 too; bytes that are no
 * request at all end it). Every request re-checks the caller's token, so a
 * revoked token stops enqueuing at once, not at the stream's next reconnect.
 * On drain the node stops reading, answers what it read, and ends the stream
 * with OK; the Client sends what was left unanswered again on a new stream.
 */
import { ServerError, type CallContext } from 'nice-grpc';
import type { Principal } from '../auth/auth';
import { invalidArgument, storeUnavailable, zdError } from '../errors';
import type { Logger } from '../util/logger';
import { Channel } from '../util/channel';
import { decodeProblem, hasInvalidText } from '../wire/adapter';
import type { pb } from '../wire';

/**
 * Requests of one stream read and not yet answered on the wire (being enqueued,
 * or answered but not written: a caller that does not read its answers); past
 * it the stream stops reading, and HTTP/2 flow control holds the rest.
 */
const MAX_UNANSWERED = 256;

export interface EnqueueStreamDeps {
  /** Validates, authorises and enqueues one request's Steps, as EnqueueSteps does. */
  enqueueSteps(principal: Principal, steps: pb.IStepSpec[]): Promise<pb.IEnqueueStepResponse[]>;
  /** The caller's principal now (its token re-checked against the current tokens). */
  principal(ctx: CallContext): Principal;
  log: Logger;
}

/** The open enqueue streams of a node, so a drain can end them. */
export class EnqueueStreams {
  private readonly open = new Set<AbortController>();
  private draining = false;

  /** Stop reading every stream; each ends once its read requests are answered. */
  drain(): void {
    this.draining = true;
    for (const stop of this.open) stop.abort();
  }

  get size(): number {
    return this.open.size;
  }

  handler(d: EnqueueStreamDeps) {
    const self = this;
    return async function* enqueueStream(
      requests: AsyncIterable<pb.EnqueueStreamRequest>, ctx: CallContext,
    ): AsyncIterable<pb.IEnqueueStreamResponse> {
      d.principal(ctx); // a bad token fails the call before anything is read
      const out = new Channel<pb.IEnqueueStreamResponse>();
      const stop = new AbortController();
      self.open.add(stop);
      let inFlight = 0; // being enqueued
      let unanswered = 0; // read, and not yet written back
      let readerDone = false;
      let readError: unknown;
      let resume: (() => void) | undefined;
      const endIfIdle = () => {
        if (readerDone && inFlight === 0) out.close();
      };
      const settle = () => {
        inFlight--;
        endIfIdle();
      };
      // A drain stops reading: the call ends once what was read is answered. A
      // request the reader is still waiting for when the call ends is never read.
      const stopReading = () => {
        readerDone = true;
        resume?.();
        endIfIdle();
      };
      stop.signal.addEventListener('abort', stopReading, { once: true });
      // Opened on a draining node: ends at once, as the streams open when the drain began
      // (aborted only now that the listener is there: an abort before it would go unheard).
      if (self.draining) stop.abort();
      const answer = async (req: pb.EnqueueStreamRequest, refused?: Error) => {
        try {
          if (refused) throw refused;
          const results = await d.enqueueSteps(d.principal(ctx), req.steps);
          out.push({ request_id: req.request_id, results });
        } catch (err) {
          out.push({ request_id: req.request_id, error: callError(err, d.log) });
        } finally {
          settle();
        }
      };
      void (async () => {
        const it = requests[Symbol.asyncIterator]();
        try {
          for (;;) {
            const r = await it.next();
            if (r.done || stop.signal.aborted) break;
            // Bytes that are no request end the call: its request id cannot be trusted. Text that is no
            // UTF-8 in a request that read otherwise is that request's refusal alone, as its unary call's
            // would be: ending the call failed every other enqueue the Client had on it.
            const undecoded = decodeProblem(r.value);
            if (undecoded && !hasInvalidText(r.value)) throw invalidArgument(undecoded.field, undecoded.reason);
            // 64-bit fields read as JavaScript numbers: an id past 2^53 - 1 would be answered under
            // another (2^64 - 1 as 0), and its caller wait for an answer that never comes.
            if (!Number.isSafeInteger(Number(r.value.request_id ?? 0))) {
              throw invalidArgument('request_id', `is past ${Number.MAX_SAFE_INTEGER} (2^53 - 1), the largest id this node answers exactly`);
            }
            inFlight++;
            unanswered++;
            void answer(r.value, undecoded && invalidArgument(undecoded.field, undecoded.reason));
            if (unanswered >= MAX_UNANSWERED) await new Promise<void>((resolve) => (resume = resolve));
          }
        } catch (err) {
          // A request that did not decode ends the call with its status; a reset ends it anyway.
          readError = err;
        } finally {
          stopReading();
        }
      })();
      try {
        for await (const res of out) {
          yield res;
          unanswered--;
          resume?.();
          resume = undefined;
        }
        if (readError !== undefined) throw readError;
      } finally {
        self.open.delete(stop);
        stop.abort();
      }
    };
  }
}

/** The status a unary EnqueueSteps would have ended with (errorMiddleware's rule). */
function callError(err: unknown, log: Logger): pb.ICallError {
  if (!(err instanceof ServerError)) {
    // Redis down or refusing: ZD_STORE_UNAVAILABLE (retry), as the unary call says, not a bug to report.
    const unavailable = storeUnavailable(err);
    if (unavailable) {
      log.warn({ method: 'EnqueueStream', err: (err as Error).message }, 'store unavailable');
      err = unavailable;
    } else {
      log.error({ method: 'EnqueueStream', err: err instanceof Error ? err.stack : String(err) }, 'unexpected error in handler');
      err = zdError('ZD_INTERNAL');
    }
  }
  const e = err as ServerError;
  return { code: e.code, message: e.details };
}
