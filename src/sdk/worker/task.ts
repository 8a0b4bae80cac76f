/**
 * One task on a slot: runs the handler, sends Pongs while it runs, sends the
 * result and waits for its ResultAck. The session owns the stream; a task
 * only talks to it through `TaskIo`.
 */
import { pb } from '../../wire';
import { toBytes, type Payload, type SdkLogger } from '../common';
import { checkedPayload } from '../common/payloads';
import { toFailure } from './failure';
import { HeartbeatThrottle, heartbeatIntervalMs } from './heartbeats';
import { PongSweep } from './pongs';
import type { HandlerResult } from './types';

/** Pong cadence while a task runs (DESIGN §5), so proxies never see an idle stream. */
export const PONG_INTERVAL_MS = 20_000;

export interface TaskIo {
  /** Queues a frame; false when the stream is already closed. */
  send(frame: pb.IWorkerFrame, key?: string): boolean;
  readonly logger: SdkLogger;
  /** The worker's Pong timer; a task without one (tests) gets its own at `pongIntervalMs`. */
  readonly pongs?: PongSweep;
  /** Pong cadence while the task runs, without `pongs`. @default PONG_INTERVAL_MS */
  readonly pongIntervalMs?: number;
}

/** Calls the user's handler; `task.signal` is read only if the handler's context asks for it. */
export type Invoke = (task: { readonly signal: AbortSignal }, heartbeat: (details?: Payload) => void) => HandlerResult | Promise<HandlerResult>;

export type TaskKind = 'step' | 'rpc';
export type TaskPhase = 'running' | 'flushing' | 'done';

/** Raised in a handler's signal when the server cancels the task. */
export class TaskCancelledError extends Error {
  override name = 'TaskCancelledError';
}

export class TaskRun {
  phase: TaskPhase = 'running';
  readonly done: Promise<void>;
  /**
   * Created on first use of `signal`: most handlers never read it, and an
   * AbortController per task showed in worker profiles.
   */
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;
  private cancelled = false;
  private abandoned = false;
  /** Why the task lost its stream (the stream's end, stop's deadline); logged with a result it could not deliver. */
  private abandonReason: unknown;
  /** Created on a handler's first heartbeat: most never send one. */
  private heartbeats: HeartbeatThrottle | undefined;
  /** The result sent, once sent; a refused failure is sent again once, as one the node takes (acked). */
  private sent: pb.IStepResult | undefined;
  private resent = false;
  private resolveAck!: (ack: pb.IResultAck | null) => void;
  private readonly ack = new Promise<pb.IResultAck | null>((r) => (this.resolveAck = r));

  constructor(
    readonly token: string,
    readonly kind: TaskKind,
    /** Log fields naming the task. */
    readonly labels: Record<string, unknown>,
    private readonly io: TaskIo,
    invoke: Invoke,
    /** The attempt's heartbeat timeout (StepTask.heartbeat_timeout_ms; 0 = none): it sets the heartbeat throttle. */
    private readonly heartbeatTimeoutMs = 0,
  ) {
    this.done = this.run(invoke);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  /** Throttled (heartbeats.ts): at most one frame per a third of the heartbeat timeout, the latest details last. */
  heartbeat(details?: Payload): void {
    // Checked before anything else: protobufjs would send an object as empty details, at once or later.
    const bytes = checkedPayload('heartbeat', 'details', details);
    if (this.phase !== 'running') return;
    this.heartbeats ??= new HeartbeatThrottle(heartbeatIntervalMs(this.heartbeatTimeoutMs),
      (d) => this.io.send({ heartbeat: { task_token: this.token, details: d } }, 'heartbeat'));
    this.heartbeats.beat(bytes);
  }

  /** The server cancelled the attempt: the handler may still return; its result will be refused. */
  cancel(reason: string): void {
    this.cancelled = true;
    this.abort(new TaskCancelledError(reason || 'the task was cancelled'));
  }

  /** The stream is gone or being reset: abort the handler, stop waiting for an ack, send nothing. */
  abandon(reason: unknown): void {
    if (!this.abandoned) this.abandonReason = reason;
    this.abandoned = true;
    this.heartbeats?.stop();
    this.abort(reason);
    this.resolveAck(null);
  }

  /**
   * The server's verdict on the result sent; true when it ends the task (the slot is free). A failure
   * refused as invalid leaves the attempt the slot's (DESIGN §5; an output is refused only past
   * limits.maxPayloadBytes, and that fails the attempt): freed here, the slot took no task while the
   * node held the attempt until a timeout, if any. A failure the node takes is sent instead: it ends
   * the attempt through the retry policy, and its ack frees the slot.
   */
  acked(ack: pb.IResultAck): boolean {
    const refused = this.sent?.failure;
    if (ack.verdict === pb.ResultVerdict.REFUSED_INVALID && refused && !this.resent) {
      this.resent = true;
      this.io.logger.warn('failure refused as invalid; sending it as one the node takes', { ...this.labels, error: ack.error || undefined });
      const failure = toFailure(Object.assign(new Error(`the node refused the failure as sent (${(ack.error || 'no reason given').slice(0, 512)}): ${(refused.message ?? '').slice(0, 1024)}`), {
        type: 'invalid_result', nonRetryable: refused.non_retryable === true, retryAfterMs: Number(refused.retry_after_ms ?? 0),
      }));
      const result = { task_token: this.token, failure };
      if (this.io.send(this.kind === 'step' ? { step_result: result } : { rpc_result: result })) return false;
    }
    this.resolveAck(ack);
    return true;
  }

  /** Called by the Pong timer while the handler runs. */
  pong(now: number): void {
    this.io.send({ pong: { sent_at_ms: now } }, 'pong');
  }

  private async run(invoke: Invoke): Promise<void> {
    const pongs = this.io.pongs ?? new PongSweep(this.io.pongIntervalMs ?? PONG_INTERVAL_MS);
    pongs.add(this);
    let result: pb.IStepResult;
    try {
      result = { task_token: this.token, output: toOutput(await invoke(this, (d) => this.heartbeat(d))) };
    } catch (err) {
      result = { task_token: this.token, failure: toFailure(err) };
    } finally {
      pongs.delete(this);
      this.heartbeats?.stop();
    }
    if (this.abandoned) return this.lost('result not sent: the task lost its slot stream while the handler ran');
    this.phase = 'flushing';
    this.sent = result;
    const frame: pb.IWorkerFrame = this.kind === 'step' ? { step_result: result } : { rpc_result: result };
    if (!this.io.send(frame)) return this.lost('result not sent: the task lost its slot stream while the handler ran');
    const ack = await this.ack;
    if (!ack) return this.lost('result not acknowledged: the task lost its slot stream after sending it');
    this.finish();
    if (ack.verdict === pb.ResultVerdict.ACCEPTED) return;
    const verdict = pb.ResultVerdict[ack.verdict ?? 0] ?? String(ack.verdict);
    const fields = { ...this.labels, verdict, error: ack.error || undefined };
    // A refusal after our own Cancel frame is expected, not a problem: a cancelled Step's result
    // is REFUSED_CANCELLED, and an RPC's whose caller went away or whose deadline passed is
    // REFUSED_STALE (nobody waits for it any more).
    const expected = ack.verdict === pb.ResultVerdict.REFUSED_CANCELLED || (this.kind === 'rpc' && ack.verdict === pb.ResultVerdict.REFUSED_STALE);
    if (this.cancelled && expected) this.io.logger.info('result refused: task was cancelled', fields);
    else this.io.logger.warn('result not accepted', fields);
  }

  private finish(): void {
    this.phase = 'done';
  }

  /**
   * The result went down with the stream. It is never sent again: the attempt
   * was this stream's, and the node fails it through the retry policy (unless
   * it recorded the result before the stream ended). Said, so a retry has a cause.
   */
  private lost(msg: string): void {
    this.finish();
    const why = this.abandonReason;
    this.io.logger.warn(msg, { ...this.labels, error: why instanceof Error ? why.message : why === undefined ? undefined : String(why) });
  }
}

/** The output of a handler that returns nothing: most do, and the encoder only reads its length. */
const NO_OUTPUT = new Uint8Array(0);

/** Handler return values as output bytes; anything else is a handler bug, reported as a failure. */
function toOutput(value: HandlerResult): Uint8Array {
  if (value === undefined || value === null) return NO_OUTPUT;
  if (typeof value === 'string' || value instanceof Uint8Array) return toBytes(value);
  throw new TypeError(`a handler must return a string, Buffer, Uint8Array or nothing; got ${typeof value}`);
}
