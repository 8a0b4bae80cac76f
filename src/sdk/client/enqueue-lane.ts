/**
 * The Client's enqueues over one long-lived MatchingService.EnqueueStream
 * call instead of a unary call each: on a busy producer a unary call costs
 * both ends far more CPU than the Steps in it (docs/benchmarks.md).
 *
 * - Opened on the first enqueue; each enqueue is one request, answered by
 *   its request id, so any number run at once.
 * - A failed request fails that enqueue alone, with the error the unary call
 *   would have had. A stream that fails fails the enqueues it carried, as a
 *   failed connection fails unary calls; the next enqueue opens a new one.
 * - An enqueue that may pass 64 KiB goes as a unary call: one request past the
 *   node's message limit would fail the whole stream (not the connection).
 *   Should one do so all the same, what the stream carried is sent again as
 *   unary calls, one each.
 * - A node that drains ends the stream with OK after answering what it read;
 *   what it did not read is sent again on a new stream (enqueue is idempotent).
 * - A credential that resolves to another token opens a new stream for it
 *   (the old one ends once its answers are in).
 * - A server without EnqueueStream (UNIMPLEMENTED) gets unary calls from then on.
 * - Deadlines are the lane's, not each call's: one timer for the earliest
 *   deadline of the enqueues in flight, and no AbortController or listener
 *   unless the caller passes a signal. A timer, a controller and an abort
 *   listener per call were ≈ 8 % of a producer's CPU at 500 enqueues a second
 *   (docs/benchmarks.md).
 */
import { ClientError, Status, type Client as GrpcClient, type Metadata } from 'nice-grpc';
import { MatchingServiceDefinition, type pb } from '../../wire';
import { Channel } from '../../util/channel';
import { timerDelayMs } from '../common/durations';
import { monotonicMs } from '../common/monotonic';

type Stub = GrpcClient<typeof MatchingServiceDefinition>;
type Results = pb.IEnqueueStepResponse[];

const PATH = MatchingServiceDefinition.enqueueStream.path;
/** Times an unanswered request is sent again after drains before it fails. */
const MAX_RESENDS = 3;
/**
 * After a node ended a stream by draining, enqueues go as unary calls for this long: a new
 * stream to a draining node ends at once (it reads nothing more), while a unary EnqueueSteps
 * is still served there, or balanced to another node, for the whole drain.
 */
const UNARY_AFTER_DRAIN_MS = 1000;
/**
 * An enqueue that may be this large or larger goes as a unary call of its own, never on
 * the shared stream. A node takes messages up to limits.maxPayloadBytes + 64 KiB, and one
 * request past that ends the whole stream (grpc-js): the requests the node had read and
 * written lost their answers, went again as unary calls, and answered created: false for
 * Steps they had created. Under 64 KiB a request fits whatever the node's limit.
 */
export const STREAM_REQUEST_MAX_BYTES = 64 * 1024;

/** At least the encoded size of these steps (strings counted at 3 bytes a character, the UTF-8 worst case). */
function boundOfBytes(steps: pb.IStepSpec[]): number {
  let n = 0;
  for (const s of steps) {
    n += 128 + (s.input?.length ?? 0) + 3 * ((s.tenant?.length ?? 0) + (s.flow_id?.length ?? 0) + (s.flow_type?.length ?? 0)
      + (s.step_type?.length ?? 0) + (s.step_execution_id?.length ?? 0) + (s.sticky_worker_id?.length ?? 0));
    for (const t of s.retry_policy?.non_retryable ?? []) n += 8 + 3 * t.length;
  }
  return n;
}

interface Pending {
  steps: pb.IStepSpec[];
  /** The stream carrying it, under this request id, and the request while it waits to be written. */
  stream?: LaneStream;
  id?: number;
  request?: pb.IEnqueueStreamRequest;
  /** Settle the enqueue; each also forgets it in the lane (deadline, abort listener). */
  resolve(r: Results): void;
  reject(err: unknown): void;
  resends: number;
  deadlineAt: number;
  /** Cancels its unary call (a server without EnqueueStream). */
  cancel?: () => void;
}

export interface LaneCall {
  /** The caller's resolved token ('' for none): a stream carries the calls of one token. */
  token: string;
  /** The metadata of a call with that token: built only to open a stream or make a unary call. */
  metadata(token: string): Metadata;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What an enqueue the lane gave up on at its deadline rejects with. */
export class LaneDeadlineError extends Error {
  constructor() {
    super('the enqueue did not finish before its deadline');
  }
}

export class EnqueueLane {
  private stream: LaneStream | undefined;
  /** Every stream still open: the current one, and older ones (a rotated token) ending once answered. */
  private readonly streams = new Set<LaneStream>();
  private unsupported = false;
  /** Until when enqueues go as unary calls (a node drained the last stream). */
  private unaryUntil = 0;
  private nextId = 1;
  private closed = false;
  /** Every enqueue not settled yet, oldest first. */
  private readonly inFlight = new Set<Pending>();
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineTimerAt = Infinity;

  constructor(
    private readonly stub: Stub,
    /** The unary EnqueueSteps call, for a server without the stream. */
    private readonly unary: (steps: pb.IStepSpec[], call: { signal: AbortSignal; metadata: Metadata }) => Promise<Results>,
  ) {}

  /**
   * `call.token` may still be resolving (a credential function or file): the enqueue's
   * deadline, signal and close() count from now, so a credential that never resolves
   * cannot hold the call past them.
   */
  send(steps: pb.IStepSpec[], call: Omit<LaneCall, 'token'> & { token: string | Promise<string> }): Promise<Results> {
    return new Promise<Results>((resolve, reject) => {
      const signal = call.signal;
      if (signal?.aborted) {
        // Nothing will wait for the token: its failure must not surface as an unhandled rejection.
        if (typeof call.token !== 'string') call.token.catch(() => undefined);
        return reject(signal.reason);
      }
      const onAbort = () => {
        p.stream?.forget(p);
        p.cancel?.();
        p.reject(signal!.reason);
      };
      const forget = () => {
        this.inFlight.delete(p);
        // Left armed (an enqueue a millisecond later would arm it again) but not keeping the process up.
        if (this.inFlight.size === 0) this.deadlineTimer?.unref();
        signal?.removeEventListener('abort', onAbort);
      };
      const p: Pending = {
        steps, resends: 0, deadlineAt: monotonicMs() + call.timeoutMs,
        resolve: (r) => {
          forget();
          resolve(r);
        },
        reject: (err) => {
          forget();
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.inFlight.add(p);
      if (p.deadlineAt < this.deadlineTimerAt) this.armDeadlineTimer(p.deadlineAt);
      else this.deadlineTimer?.ref();
      const token = call.token;
      if (typeof token === 'string') return this.dispatch(p, { token, metadata: call.metadata });
      // Sent only if it is still in flight once its token is known (not timed out, aborted or closed).
      token.then(
        (t) => this.inFlight.has(p) && this.dispatch(p, { token: t, metadata: call.metadata }),
        (err: unknown) => this.inFlight.has(p) && p.reject(err),
      );
    });
  }

  /** Ends the stream; enqueues still in flight fail. */
  close(): void {
    this.closed = true;
    // The older ones too: an unanswered request would hold its call open on the node.
    for (const s of this.streams) s.abort(new Error('EnqueueStream: the client is closed'));
    this.stream = undefined;
    for (const p of this.inFlight) {
      p.cancel?.();
      p.reject(new Error('EnqueueStream: the client is closed'));
    }
    this.clearDeadlineTimer();
  }

  /**
   * Armed for the earliest deadline in flight. It is not moved when that enqueue
   * settles: it fires, finds the deadlines still ahead, and is armed again for the
   * earliest of them (once per timeout, typically, for enqueues that settle in
   * time). With nothing in flight it stays armed, unreferenced.
   */
  private armDeadlineTimer(at: number): void {
    this.clearDeadlineTimer();
    this.deadlineTimerAt = at;
    // Never past what a timer holds (a longer one fires after 1 ms); fired early, expire() fails
    // only the enqueues whose deadline passed and arms it again for the rest.
    this.deadlineTimer = setTimeout(() => this.expire(), timerDelayMs(Math.max(0, at - monotonicMs())));
  }

  private clearDeadlineTimer(): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.deadlineTimerAt = Infinity;
  }

  private expire(): void {
    this.deadlineTimer = undefined;
    this.deadlineTimerAt = Infinity;
    const now = monotonicMs();
    let next = Infinity;
    for (const p of [...this.inFlight]) {
      if (p.deadlineAt <= now) {
        // Its answer, if one still comes, is ignored.
        p.stream?.forget(p);
        p.cancel?.();
        p.reject(new LaneDeadlineError());
      } else if (p.deadlineAt < next) {
        next = p.deadlineAt;
      }
    }
    if (next < Infinity) this.armDeadlineTimer(next);
  }

  private dispatch(p: Pending, call: Pick<LaneCall, 'token' | 'metadata'>): void {
    if (this.unsupported || monotonicMs() < this.unaryUntil || boundOfBytes(p.steps) >= STREAM_REQUEST_MAX_BYTES) {
      return this.sendUnary(p, call.metadata(call.token));
    }
    let s = this.stream;
    if (!s || s.ended || s.token !== call.token) {
      s?.finish(); // a rotated credential: the old stream ends once its answers are in
      s = this.stream = this.open(call.metadata(call.token), call.token);
    }
    s.request(this.nextId++, p);
  }

  private open(metadata: Metadata, token: string): LaneStream {
    const s = new LaneStream(token);
    this.streams.add(s);
    s.run(this.stub.enqueueStream(s.requests, { metadata, signal: s.signal }), (unread, err) => {
      this.streams.delete(s);
      if (this.stream === s) this.stream = undefined;
      if (err instanceof ClientError && err.code === Status.UNIMPLEMENTED) this.unsupported = true;
      // Ended with OK and requests unread: the node is draining (enqueue-stream.ts).
      if (err === undefined && unread.length > 0) this.unaryUntil = monotonicMs() + UNARY_AFTER_DRAIN_MS;
      // One request past the node's message limit ends the whole stream with RESOURCE_EXHAUSTED
      // (grpc-js, "larger than max"): each enqueue it carried goes again as a unary call of its
      // own (enqueue is idempotent), so only the oversized one fails, as with unary calls.
      const oversized = err instanceof ClientError && err.code === Status.RESOURCE_EXHAUSTED;
      for (const p of unread) {
        // Not read by a node that drained, or an older server: safe to send again.
        if (!this.closed && (this.unsupported || (err === undefined && p.resends++ < MAX_RESENDS))) this.dispatch(p, { token, metadata: () => metadata });
        else if (!this.closed && oversized && p.resends++ < MAX_RESENDS) this.sendUnary(p, metadata);
        else p.reject(err ?? new ClientError(PATH, Status.UNAVAILABLE, 'the enqueue stream ended without answering'));
      }
    });
    return s;
  }

  private sendUnary(p: Pending, metadata: Metadata): void {
    const controller = new AbortController();
    p.cancel = () => controller.abort();
    this.settleWith(p, this.unary(p.steps, { signal: controller.signal, metadata }));
  }

  private settleWith(p: Pending, r: Promise<Results>): void {
    r.then((v) => p.resolve(v), (err: unknown) => p.reject(err));
  }
}

/** One EnqueueStream call and the requests waiting for its answers. */
class LaneStream {
  readonly requests = new Channel<pb.IEnqueueStreamRequest>();
  private readonly pending = new Map<number, Pending>();
  private readonly controller = new AbortController();
  ended = false;
  /** Half-closed: no new requests; it ends once the pending ones are answered. */
  private finishing = false;

  constructor(readonly token: string) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  request(id: number, p: Pending): void {
    p.stream = this;
    p.id = id;
    this.pending.set(id, p);
    p.request = { request_id: id, steps: p.steps };
    this.requests.push(p.request);
  }

  /**
   * An enqueue whose caller gave up (timeout, abort): its answer is ignored, and a request
   * not written yet never is. While a node reads no more (it stops at 256 unanswered),
   * the requests of enqueues that timed out piled up here, payloads and all, and the node
   * ran every one of them when it read again.
   */
  forget(p: Pending): void {
    if (p.id !== undefined && this.pending.get(p.id) === p) this.pending.delete(p.id);
    if (p.request) this.requests.withdraw(p.request);
    p.request = undefined;
    this.maybeEnd();
  }

  finish(): void {
    this.finishing = true;
    this.maybeEnd();
  }

  abort(err: Error): void {
    this.ended = true;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.controller.abort();
  }

  run(responses: AsyncIterable<pb.EnqueueStreamResponse>, ended: (unread: Pending[], err?: unknown) => void): void {
    void (async () => {
      let error: unknown;
      try {
        for await (const res of responses) {
          const id = Number(res.request_id);
          const p = this.pending.get(id);
          if (!p) continue; // its caller gave up
          this.pending.delete(id);
          if (res.error) p.reject(new ClientError(PATH, res.error.code as Status, res.error.message ?? ''));
          else p.resolve(res.results);
          this.maybeEnd();
        }
      } catch (err) {
        error = err;
      }
      this.ended = true;
      this.requests.close();
      const unread = [...this.pending.values()];
      this.pending.clear();
      ended(unread, this.controller.signal.aborted ? undefined : error);
    })();
  }

  private maybeEnd(): void {
    if (this.finishing && this.pending.size === 0) this.requests.close();
  }
}
