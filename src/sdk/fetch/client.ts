/**
 * Fetch-and-lock workers' client of ExternalTaskService (DESIGN §7, docs/fetch.md),
 * and operators' client of OperatorService (terminal tasks). camelCase in and
 * out; refused mutations throw the named verdict errors of ./errors.
 */
import { abortable } from 'abort-controller-x';
import { createClient, Status, type Channel, type Client as GrpcClient, type Metadata } from 'nice-grpc';
import { ExternalTaskServiceDefinition, OperatorServiceDefinition, PROTOCOL_VERSION, type pb } from '../../wire';
import {
  authMetadata, createSdkChannel, fromEpochMs, toBuffer, toNum, withProtocolVersion, ZdDeadlineExceededError,
  type Credential, type Payload, type TlsOptions,
} from '../common';
import type { BackoffOptions } from '../common/backoff';
import { checkedReconnectBackoff } from '../common/reconnect';
import { checkedCredential } from '../common/credential-option';
import { CallSignal } from '../common/call-signal';
import { checkCount, INT32_MAX, UINT32_MAX } from '../common/counts';
import { checkedPayload } from '../common/payloads';
import { kindOf } from '../common/kind-of';
import { checkDuration, timerDelayMs, type DurationBounds } from '../common/durations';
import { mapFetchError } from './errors';
import type { FetchCallOptions, FailOptions, FetchOptions, LockedTask, TerminalTask, TerminalTaskList, Topic } from './types';
import { sharedAbortController } from '../common/shared-signal';
import { wireText } from '../common/wire-values';

interface BaseOptions {
  /** Server address, `host:port`. */
  address: string;
  /**
   * Bearer token sent as `authorization` metadata: a string, `{ file }` (re-read when it changes) or a
   * function; resolved at each call, and a failure fails the call before it is sent.
   * One that can never resolve (a string that is no token, trailing newline included) is a TypeError here. @default none
   */
  credential?: Credential;
  /** TLS: `true` for the system roots, or `{ ca }` (file path or PEM). @default plaintext */
  tls?: TlsOptions | boolean;
  /**
   * Timeout of a call, in whole ms: > 0 and at most 2^31 - 1 (MAX_TIMER_MS, what a Node.js timer holds).
   * Long polls add their wait to it. @default 30000
   */
  defaultTimeoutMs?: number;
  /**
   * Backoff between redials of the connection while the node cannot be reached (calls fail at
   * once meanwhile, as UNAVAILABLE). @default { initialMs: 100, maxMs: 10000 }
   */
  reconnectBackoff?: Pick<BackoffOptions, 'initialMs' | 'maxMs'>;
}

/** A long poll's wait: the SDK's timer allows for it, so it must be one a timer holds. */
const WAIT: DurationBounds = { zero: true };
/** A lock duration or retry timeout (0 = the server's default): the server bounds it, not a timer of ours. */
const SERVER_BOUNDED: DurationBounds = { zero: true, timer: false };

export interface FetchClientOptions extends BaseOptions {
  /** This worker's id: its locks are held in this name. */
  workerId: string;
}

const fromTopic = (t: pb.ITopic | null | undefined): Topic => ({ tenant: t?.tenant ?? '', flowType: t?.flow_type ?? '', stepType: t?.step_type ?? '' });

function fromLocked(t: pb.ILockedTask): LockedTask {
  return {
    taskId: t.task_id ?? '', topic: fromTopic(t.topic), flowId: t.flow_id ?? '', stepExecutionId: t.step_execution_id ?? '',
    input: toBuffer(t.input), lockUntil: new Date(toNum(t.lock_until_ms)), retries: t.retries ?? 0, attempt: t.attempt ?? 0,
  };
}

/**
 * The topics as sent; a TypeError naming the option or field (`topics[1].flowType`) when they
 * are not an array of { tenant, flowType, stepType } strings (plain JavaScript callers).
 * An empty list or name is the server's to refuse, naming its bound.
 */
function wireTopics(what: string, topics: unknown): pb.ITopic[] {
  if (!Array.isArray(topics)) throw new TypeError(`${what} option topics: must be an array of { tenant, flowType, stepType }, got ${kindOf(topics)}`);
  return topics.map((t: unknown, i) => {
    if (typeof t !== 'object' || t === null) throw new TypeError(`${what} option topics[${i}]: must be a { tenant, flowType, stepType }, got ${kindOf(t)}`);
    const topic = t as Record<keyof Topic, unknown>;
    for (const field of ['tenant', 'flowType', 'stepType'] as const) {
      if (typeof topic[field] !== 'string') throw new TypeError(`${what} option topics[${i}].${field}: must be a string, got ${kindOf(topic[field])}`);
    }
    return { tenant: topic.tenant as string, flow_type: topic.flowType as string, step_type: topic.stepType as string };
  });
}

abstract class BaseClient {
  protected readonly channel: Channel;
  private readonly credential: Credential | undefined;
  private readonly defaultTimeoutMs: number;
  /** Aborted by close(): ends every call in flight, so a closed FetchClient's long poll locks nothing. */
  private readonly closing = sharedAbortController();

  constructor(options: BaseOptions, private readonly what: string) {
    if (!options.address) throw new TypeError(`${what} option address: is required`);
    // Past MAX_TIMER_MS (Infinity included) every call's timer would fire after 1 ms.
    this.defaultTimeoutMs = checkDuration(what, 'defaultTimeoutMs', options.defaultTimeoutMs ?? 30_000, { zero: false });
    this.credential = checkedCredential(what, options.credential);
    this.channel = createSdkChannel(options.address, options.tls, undefined, checkedReconnectBackoff(what, options.reconnectBackoff));
  }

  /**
   * Adds credentials, the protocol version header and a timeout (a
   * ZdDeadlineExceededError past it, as Client calls), ends with close(), and
   * maps errors. A caller's abort rejects with its reason, unmapped.
   */
  protected async call<T>(
    method: string, fn: (o: { signal: AbortSignal; metadata: Metadata }) => Promise<T>, opts: FetchCallOptions = {}, waitMs = 0,
  ): Promise<T> {
    if (this.closing.signal.aborted) throw this.closedError(method);
    const own = checkDuration(`${this.what}.${method}`, 'timeoutMs', opts.timeoutMs, { zero: false }) ?? this.defaultTimeoutMs;
    // Each is at most MAX_TIMER_MS; their sum need not be.
    const timeoutMs = timerDelayMs(own + waitMs);
    const call = new CallSignal(timeoutMs, [this.closing.signal, opts.signal]);
    try {
      // Within the call's timeout, signal and close(): a credential that never answers must not hold it.
      const metadata = withProtocolVersion(await abortable(call.signal, authMetadata(this.credential)), PROTOCOL_VERSION);
      return await fn({ signal: call.signal, metadata });
    } catch (err) {
      if (call.timedOut) throw new ZdDeadlineExceededError(`${method} did not finish within ${timeoutMs} ms`, Status.DEADLINE_EXCEEDED);
      if (call.cause === this.closing.signal) throw this.closedError(method, err);
      throw mapFetchError(err);
    } finally {
      call.dispose();
    }
  }

  /** Ends the calls in flight (they reject: the client is closed) and closes the channel; idempotent. Calls made afterwards fail. */
  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    this.channel.close();
  }

  private closedError(method: string, cause?: unknown): Error {
    return new Error(`${this.what}.${method}: the client is closed`, { cause });
  }
}

export class FetchClient extends BaseClient {
  readonly workerId: string;
  private readonly stub: GrpcClient<typeof ExternalTaskServiceDefinition>;

  constructor(options: FetchClientOptions) {
    super(options, 'FetchClient');
    if (!options.workerId) throw new TypeError('FetchClient option workerId: is required');
    wireText('FetchClient', 'workerId', options.workerId);
    this.workerId = options.workerId;
    this.stub = createClient(ExternalTaskServiceDefinition, this.channel);
  }

  /** Claims up to maxTasks tasks of the topics, long-polling up to waitMs; [] when the wait ends empty. */
  async fetchAndLock(options: FetchOptions, opts?: FetchCallOptions): Promise<LockedTask[]> {
    options ??= {} as FetchOptions; // plain JavaScript: no options at all are missing topics
    const topics = wireTopics('FetchClient.fetchAndLock', options.topics);
    const waitMs = checkDuration('FetchClient.fetchAndLock', 'waitMs', options.waitMs ?? 0, WAIT);
    const lockDurationMs = checkDuration('FetchClient.fetchAndLock', 'lockDurationMs', options.lockDurationMs ?? 0, SERVER_BOUNDED);
    const maxTasks = checkCount('FetchClient.fetchAndLock', 'maxTasks', options.maxTasks ?? 0, UINT32_MAX);
    const req: pb.IFetchAndLockRequest = {
      worker_id: this.workerId, max_tasks: maxTasks, lock_duration_ms: lockDurationMs,
      wait_ms: waitMs, topics,
    };
    // an omitted wait is the server's fetch.wait (≤ fetch.maxWait, 60s by default): allow for it
    const res = await this.call('fetchAndLock', (o) => this.stub.fetchAndLock(req, o), opts, waitMs || 60_000);
    return (res.tasks ?? []).map(fromLocked);
  }

  /**
   * Completes a locked task. Without `result` the outcome carries the task's input.
   * Pass an `idempotencyKey` to make a retried completion (a lost reply) answer success.
   */
  async complete(taskId: string, options: { result?: Payload; idempotencyKey?: string } = {}, opts?: FetchCallOptions): Promise<void> {
    const has = options.result != null; // null too: plain JavaScript, or JSON passed through, means no result
    const result = checkedPayload('FetchClient.complete', 'result', options.result);
    await this.call('complete', (o) => this.stub.complete({
      task_id: wireText('FetchClient.complete', 'taskId', taskId), worker_id: this.workerId, has_result: has, result,
      idempotency_key: wireText('FetchClient.complete', 'idempotencyKey', options.idempotencyKey),
    }, o), opts);
  }

  /** Reports a failure on the fetch budget (never a step attempt). Returns whether the task turned terminal. */
  async fail(taskId: string, options: FailOptions, opts?: FetchCallOptions): Promise<boolean> {
    // Plain JavaScript may leave the options out: the error names the count they must carry, not "of undefined".
    options ??= {} as FailOptions;
    const retryTimeoutMs = checkDuration('FetchClient.fail', 'retryTimeoutMs', options.retryTimeoutMs ?? 0, SERVER_BOUNDED);
    // Required, no default: a missing or NaN count would go out as 0, which makes the task terminal.
    const retries = checkCount('FetchClient.fail', 'retries', options.retries, INT32_MAX);
    const res = await this.call('fail', (o) => this.stub.fail({
      task_id: wireText('FetchClient.fail', 'taskId', taskId), worker_id: this.workerId,
      failure: { message: wireText('FetchClient.fail', 'message', options.message), type: wireText('FetchClient.fail', 'type', options.type) },
      retries, retry_timeout_ms: retryTimeoutMs,
    }, o), opts);
    return res.terminal ?? false;
  }

  /** Extends this worker's live lock to now + lockDurationMs (0 = the server's default); returns the new lockUntil. */
  async extendLock(taskId: string, lockDurationMs = 0, opts?: FetchCallOptions): Promise<Date> {
    checkDuration('FetchClient.extendLock', 'lockDurationMs', lockDurationMs, SERVER_BOUNDED);
    const res = await this.call('extendLock', (o) => this.stub.extendLock({ task_id: wireText('FetchClient.extendLock', 'taskId', taskId), worker_id: this.workerId, lock_duration_ms: lockDurationMs }, o), opts);
    return new Date(toNum(res.lock_until_ms));
  }

  /** Gives the lock back: the task is fetchable again at once. */
  async unlock(taskId: string, opts?: FetchCallOptions): Promise<void> {
    await this.call('unlock', (o) => this.stub.unlock({ task_id: wireText('FetchClient.unlock', 'taskId', taskId), worker_id: this.workerId }, o), opts);
  }
}

export type TerminalTasksClientOptions = BaseOptions;

/** Operators: list, retry and abandon the fetch surface's terminal tasks. */
export class TerminalTasksClient extends BaseClient {
  private readonly stub: GrpcClient<typeof OperatorServiceDefinition>;

  constructor(options: TerminalTasksClientOptions) {
    super(options, 'TerminalTasksClient');
    this.stub = createClient(OperatorServiceDefinition, this.channel);
  }

  async list(tenant: string, filter: { flowType?: string; stepType?: string; limit?: number } = {}, opts?: FetchCallOptions): Promise<TerminalTaskList> {
    const limit = checkCount('TerminalTasksClient.list', 'limit', filter.limit ?? 0, UINT32_MAX);
    const res = await this.call('list', (o) => this.stub.listTerminalTasks({
      tenant: wireText('TerminalTasksClient.list', 'tenant', tenant), flow_type: wireText('TerminalTasksClient.list', 'flowType', filter.flowType),
      step_type: wireText('TerminalTasksClient.list', 'stepType', filter.stepType), limit,
    }, o), opts);
    const tasks = (res.tasks ?? []).map((t): TerminalTask => ({
      taskId: t.task_id ?? '', partition: t.partition ?? 0, topic: fromTopic(t.topic), flowId: t.flow_id ?? '',
      stepExecutionId: t.step_execution_id ?? '', attempt: t.attempt ?? 0, reason: t.reason ?? '',
      terminalAt: fromEpochMs(t.terminal_at_ms), lockExpiries: t.lock_expiries ?? 0,
      lastError: t.last_error ? { message: t.last_error.message ?? '', type: t.last_error.type ?? '' } : undefined,
    }));
    return { tasks, incomplete: res.incomplete === true };
  }

  /** Queued again with `retries` fetch retries (0 = unset) and no lock expiries. */
  async retry(taskId: string, retries = 0, opts?: FetchCallOptions): Promise<void> {
    checkCount('TerminalTasksClient.retry', 'retries', retries, INT32_MAX);
    await this.call('retry', (o) => this.stub.retryTerminalTask({ task_id: wireText('TerminalTasksClient.retry', 'taskId', taskId), retries }, o), opts);
  }

  /** Ends the task with a FAILED outcome carrying the reason; returns the outcome id. */
  async abandon(taskId: string, reason = '', opts?: FetchCallOptions): Promise<string> {
    const res = await this.call('abandon', (o) => this.stub.abandonTerminalTask({
      task_id: wireText('TerminalTasksClient.abandon', 'taskId', taskId), reason: wireText('TerminalTasksClient.abandon', 'reason', reason),
    }, o), opts);
    return res.outcome_id ?? '';
  }
}
