/**
 * One stream lifetime of a slot: Register → Registered → tasks, until the
 * stream ends. Half-closing (ending the outbox) asks the server to end the
 * stream; a task that arrives after that is simply not run, and the server
 * returns it without consuming an attempt.
 */
import { abortable } from 'abort-controller-x';
import type { Client } from 'nice-grpc';
import { pb, type WorkerTaskServiceDefinition } from '../../wire';
import { authMetadata, CredentialError, SDK_NAME, SDK_VERSION, toNum, withProtocolVersion } from '../common';
import { RpcTaskContext, StepTaskContext } from './contexts';
import type { CompiledWorkerOptions } from './options';
import { Outbox } from './outbox';
import type { PongSweep } from './pongs';
import type { ReadinessTracker } from './readiness';
import { TaskRun, type Invoke, type TaskPhase } from './task';
import type { SlotKindName } from './types';
import { monotonicMs } from '../common/monotonic';

export type WorkerClient = Client<typeof WorkerTaskServiceDefinition>;

/** What a slot needs from its Worker. */
export interface SlotHost {
  readonly options: CompiledWorkerOptions;
  readonly client: WorkerClient;
  /** Which connection `client` is (it changes when the worker redials after a Reconnect). */
  readonly channelGen?: number;
  /** A node asked a stream opened on connection `gen` to reconnect, or refused it as draining: later streams go over a new one. */
  reconnectAsked?(gen: number): void;
  readonly readiness: ReadinessTracker;
  /** One Pong timer for all the worker's running tasks. */
  readonly pongs: PongSweep;
  /** Aborted when stop begins (ends backoff waits). */
  readonly stopSignal: AbortSignal;
  readonly stopping: boolean;
  /** Whether any stream of this worker has registered yet. */
  readonly hasRegistered: boolean;
  /** Checks a Registered frame; false means the worker is failing and the stream must not be used. */
  onRegistered(kind: SlotKindName, registered: pb.IRegistered): boolean;
  /** A fatal error: the worker drains and start() rejects with it. */
  fail(err: unknown): void;
}

export type SlotPhase = 'connecting' | 'idle' | TaskPhase;

/** How long stop() waits for the node to end a half-closed stream it never answered. */
const UNANSWERED_STOP_GRACE_MS = 2_000;
/**
 * The node pings an idle stream every ping interval (Registered.ping_interval_ms).
 * This many intervals without a frame mean the connection is gone although TCP
 * says nothing (a frozen node, a load balancer or network that black-holes it):
 * the stream is reset and the slot reconnects, rather than staying "registered"
 * on a dead connection while the node writes tasks into it.
 */
export const SILENT_PING_INTERVALS = 3;

const SLOT_KIND: Record<SlotKindName, pb.SlotKind> = {
  STEP_AND_RPC: pb.SlotKind.STEP_AND_RPC,
  RPC_ONLY: pb.SlotKind.RPC_ONLY,
};

export class Session {
  registered = false;
  reconnectRequested = false;
  /** The connection this session's stream went over (SlotHost.channelGen). */
  channelGen = 0;
  private registeredAt = 0;
  private unregisteredAt = 0;
  /**
   * The worker refused this stream's Registered (a cap below the task
   * limit): the stream half-closes instead of resetting, so a task the
   * server already sent returns without consuming an attempt.
   */
  private refusedRegistration = false;
  private unansweredTimer: NodeJS.Timeout | undefined;
  /** Warns of a stream that got no Registered within options.unregisteredWarnMs. */
  private unregisteredTimer: NodeJS.Timeout | undefined;
  private silenceTimer: NodeJS.Timeout | undefined;
  private lastFrameAt = 0;
  private readonly outbox = new Outbox<pb.IWorkerFrame>();
  private readonly call = new AbortController();
  private closing = false;
  private task: TaskRun | null = null;

  constructor(private readonly kind: SlotKindName, private readonly host: SlotHost) {}

  /** How long the stream stayed registered, in ms (so far, while it still is); 0 if it never was. */
  get registeredMs(): number {
    if (!this.registered) return 0;
    return (this.unregisteredAt || monotonicMs()) - this.registeredAt;
  }

  get phase(): SlotPhase {
    if (!this.registered) return 'connecting';
    return this.task?.phase === 'running' || this.task?.phase === 'flushing' ? this.task.phase : 'idle';
  }

  /** Log fields naming the slot's task, if it has one. */
  get taskLabels(): Record<string, unknown> | undefined {
    return this.task?.labels;
  }

  /** Resolves when the server ends the stream; rejects with its ClientError (or AbortError on reset). */
  async run(): Promise<void> {
    const { options } = this.host;
    let failure: unknown = null;
    try {
      // A credential function may never answer (a hung token service): the
      // stream's reset (stop's deadlines, drain's grace) must still end the session,
      // and so must its own deadline, or the slot waited for good, saying nothing.
      const auth = await abortable(this.call.signal, withinMs(authMetadata(options.credential), options.credentialTimeoutMs));
      // The connection is read after the credential: another slot's Reconnect may have
      // closed the one of before meanwhile, and a stream opened on it fails at once.
      const { client, channelGen } = this.host;
      this.channelGen = channelGen ?? 0;
      const metadata = withProtocolVersion(auth, options.protocolVersion);
      this.outbox.push({
        register: {
          protocol_version: options.protocolVersion,
          tenant: options.tenant,
          app_worker_id: options.appWorkerId,
          flow_types: Object.keys(options.flowTypes),
          slot_kind: SLOT_KIND[this.kind],
          task_limit: options.maxConcurrentTasks,
          sdk_name: SDK_NAME,
          sdk_version: SDK_VERSION,
          accepts_task_after_ack: true,
          accepts_task_in_ack: true,
        },
      });
      const responses = client.connect(this.outbox.frames(), { signal: this.call.signal, metadata });
      this.warnIfUnregistered();
      for await (const frame of responses) this.onFrame(frame);
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      clearTimeout(this.unansweredTimer);
      clearTimeout(this.unregisteredTimer);
      clearInterval(this.silenceTimer);
      this.outbox.end();
      if (this.registered) {
        this.unregisteredAt = monotonicMs();
        this.host.readiness.unregistered(this.kind);
      }
      // A handler whose stream is gone cannot deliver its result; stop it and
      // wait, so a reconnect never runs more tasks than the slot count.
      const task = this.task;
      if (task) {
        task.abandon(streamEnded(failure));
        await task.done;
      }
    }
  }

  /** Graceful stop: half-close now if idle, after the running task's ack otherwise. */
  drain(): void {
    this.closing = true;
    // Half-close even before Registered arrived: the node may already have
    // registered the stream and written a task behind its Registered. A
    // reset would fail that attempt; a half-close returns it unconsumed.
    if (!this.task) this.outbox.end();
    // A stream the node never answers (an unreachable node) must not hold
    // stop() for the whole stopDrainTimeout: reset it after a short grace.
    if (!this.registered && !this.refusedRegistration && !this.unansweredTimer) {
      this.unansweredTimer = setTimeout(() => this.call.abort(), UNANSWERED_STOP_GRACE_MS);
      this.unansweredTimer.unref();
    }
  }

  /** Forced stop: abort the handler and cancel the stream. */
  reset(reason: unknown): void {
    this.task?.abandon(reason);
    this.call.abort(reason);
  }

  private onFrame(frame: pb.ServerFrame): void {
    this.lastFrameAt = monotonicMs();
    if (!this.registered && !this.refusedRegistration && frame.frame !== 'registered') {
      throw new Error(`protocol error: expected Registered, got ${frame.frame ?? 'an empty frame'}`);
    }
    switch (frame.frame) {
      case 'registered':
        return this.onRegistered(frame.registered!);
      case 'step_task':
        return this.onStepTask(frame.step_task as pb.StepTask);
      case 'rpc_task':
        return this.onRpcTask(frame.rpc_task as pb.RpcTask);
      case 'cancel':
        if (this.task && this.task.token === frame.cancel!.task_token) this.task.cancel(frame.cancel!.reason ?? '');
        return;
      case 'ping':
        this.outbox.push({ pong: { sent_at_ms: toNum(frame.ping!.sent_at_ms) } }, 'pong');
        return;
      case 'reconnect':
        this.host.options.logger.info('server asked the slot to reconnect', { slotKind: this.kind, reason: frame.reconnect!.reason });
        this.reconnectRequested = true;
        this.host.reconnectAsked?.(this.channelGen);
        this.closing = true;
        if (!this.task) this.outbox.end();
        return;
      case 'result_ack': {
        const ack = frame.result_ack!;
        const task = this.task;
        // Only the ack of a result this slot sent frees it: an ack for a task still
        // running (a server bug, a duplicate) must not let a second task in.
        // A refused failure sent again keeps the slot until the ack of that one.
        if (task && task.token === ack.task_token && task.phase === 'flushing' && task.acked(ack)) {
          // Acknowledged, the result is the server's: the slot is free at once, for
          // a next task that may arrive right behind the ack (Register.accepts_task_after_ack)
          // or inside it (accepts_task_in_ack).
          this.task = null;
          if (this.closing) this.outbox.end(); // stop or Reconnect waited for this task
        }
        // Run (or refuse) exactly as a StepTask frame would be.
        if (ack.next_task) this.onStepTask(ack.next_task as pb.StepTask);
        return;
      }
      default:
        this.host.options.logger.debug('ignoring an unknown server frame', { frame: frame.frame });
    }
  }

  private onRegistered(reg: pb.IRegistered): void {
    if (this.registered || this.refusedRegistration) return;
    clearTimeout(this.unansweredTimer); // the node answers: it will end the half-closed stream itself
    clearTimeout(this.unregisteredTimer);
    if (!this.host.onRegistered(this.kind, reg)) {
      // Half-close, never reset: the server may have written a task right
      // after Registered; it is not run (refuse()) and the half-close
      // returns it unconsumed, where a reset would fail the attempt.
      this.refusedRegistration = true;
      this.closing = true;
      this.outbox.end();
      // The refusal may have begun stop(), whose drain() armed the unanswered-stream
      // reset on this stream; but the node answered, and ends the stream itself.
      clearTimeout(this.unansweredTimer);
      return;
    }
    this.registered = true;
    this.registeredAt = monotonicMs();
    this.host.readiness.registered(this.kind);
    if (this.closing) this.outbox.end();
    const pingMs = toNum(reg.ping_interval_ms);
    if (pingMs > 0) {
      this.silenceTimer = setInterval(() => this.checkSilence(pingMs), pingMs);
      this.silenceTimer.unref();
    }
  }

  /**
   * A stream the node has not answered after options.unregisteredWarnMs is said, once: it
   * most likely never opened. HTTP/2 holds back a connection's streams past the peer's
   * limit on concurrent streams (UNREGISTERED_WARN_MS), and the slots it held back sat
   * in silence for good; the reserved RPC slots open last, so with them held back the
   * worker never became ready, and nothing said why.
   */
  private warnIfUnregistered(): void {
    const { logger, unregisteredWarnMs, maxConcurrentTasks } = this.host.options;
    this.unregisteredTimer = setTimeout(() => {
      if (this.registered || this.refusedRegistration || this.closing) return;
      logger.warn('slot stream not answered: no Registered from the node', {
        slotKind: this.kind, waitedMs: unregisteredWarnMs, maxConcurrentTasks,
        hint: 'a limit on concurrent HTTP/2 streams per connection below maxConcurrentTasks holds it back (the node\'s '
          + 'limits.maxStreamsPerConnection, nginx http2_max_concurrent_streams, HAProxy tune.h2.max-concurrent-streams), '
          + 'or the node or a proxy on the way does not answer',
      });
    }, unregisteredWarnMs);
    this.unregisteredTimer.unref();
  }

  /** An idle stream that heard nothing for SILENT_PING_INTERVALS pings is reset (a busy one is not pinged). */
  private checkSilence(pingMs: number): void {
    if (this.task || this.closing) return;
    const silentMs = monotonicMs() - this.lastFrameAt;
    if (silentMs <= SILENT_PING_INTERVALS * pingMs) return;
    this.host.options.logger.warn('slot stream silent past its pings; reconnecting', { slotKind: this.kind, silentMs, pingIntervalMs: pingMs });
    this.call.abort(new Error(`no frame from the node for ${silentMs} ms (ping interval ${pingMs} ms)`));
  }

  /** Tasks we must not run: stopping/reconnecting, or a server that broke the slot contract. */
  private refuse(token: string): boolean {
    if (this.closing) return true; // not run; the half-close returns it
    if (this.task) {
      // A slot runs one task; decline without consuming the attempt rather than oversubscribe.
      this.host.options.logger.error('server sent a task to a busy slot; declining it', { slotKind: this.kind });
      this.outbox.push({ decline: { task_token: token, reason: pb.DeclineReason.NO_CAPACITY } });
      return true;
    }
    return false;
  }

  private decline(token: string, labels: Record<string, unknown>): void {
    this.host.options.logger.debug('declining a task of an unknown type', labels);
    this.outbox.push({ decline: { task_token: token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  }

  private onStepTask(t: pb.StepTask): void {
    if (this.refuse(t.task_token)) return;
    const labels = { taskId: t.task_id, flowId: t.flow_id, flowType: t.flow_type, stepType: t.step_type, attempt: t.attempt };
    if (this.kind === 'RPC_ONLY') {
      this.host.options.logger.error('server sent a Step to an RPC-only slot; declining it', labels);
      this.outbox.push({ decline: { task_token: t.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
      return;
    }
    const handler = lookup(lookup(this.host.options.flowTypes, t.flow_type)?.steps, t.step_type);
    if (!handler) return this.decline(t.task_token, labels);
    const invoke: Invoke = (task, heartbeat) => handler(new StepTaskContext(t, task, heartbeat));
    this.begin(new TaskRun(t.task_token, 'step', labels, this.io(), invoke, toNum(t.heartbeat_timeout_ms)));
  }

  private onRpcTask(t: pb.RpcTask): void {
    if (this.refuse(t.task_token)) return;
    const labels = { flowId: t.flow_id, flowType: t.flow_type, rpcName: t.rpc_name };
    const handler = lookup(lookup(this.host.options.flowTypes, t.flow_type)?.rpcs, t.rpc_name);
    if (!handler) return this.decline(t.task_token, labels);
    this.begin(new TaskRun(t.task_token, 'rpc', labels, this.io(), (task, heartbeat) => handler(new RpcTaskContext(t, task, heartbeat))));
  }

  private begin(task: TaskRun): void {
    this.task = task;
    void task.done.then(() => {
      // Not the slot's task any more once acknowledged: a next one may be running.
      if (this.task !== task) return;
      this.task = null;
      if (this.closing) this.outbox.end(); // stop or Reconnect waited for this task
    });
  }

  private io() {
    const { logger } = this.host.options;
    return { send: (frame: pb.IWorkerFrame, key?: string) => this.outbox.push(frame, key), logger, pongs: this.host.pongs };
  }
}

/** Why a task lost its stream: its handler's signal reason, and what the log says of its result. */
function streamEnded(failure: unknown): Error {
  if (failure === null) return new Error('the slot stream ended');
  return new Error(`the slot stream ended: ${failure instanceof Error ? failure.message : String(failure)}`, { cause: failure });
}

/**
 * The credential's metadata, or a CredentialError once `ms` passed: the slot logs it
 * and tries again after its backoff (a later call of a hung function may answer).
 */
async function withinMs<T>(credential: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CredentialError(`the credential did not resolve within ${ms} ms`)), ms);
    timer.unref(); // a stopped worker's hung credential must not hold the process up
  });
  credential.catch(() => undefined); // given up on: its late failure is no unhandled rejection
  try {
    return await Promise.race([credential, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Own-property lookup, so flow or step names like "constructor" never hit the prototype. */
function lookup<V>(table: Readonly<Record<string, V>> | undefined, key: string): V | undefined {
  return table && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

