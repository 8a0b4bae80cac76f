/**
 * Producers', engines' and operators' client of MatchingService: one method
 * per RPC, camelCase types in, camelCase plain objects out, gRPC failures as
 * the named errors of sdk/common (`mapGrpcError`).
 */
import { abortable } from 'abort-controller-x';
import { createClient, Status, type Channel, type Client as GrpcClient } from 'nice-grpc';
import { MatchingServiceDefinition, PROTOCOL_VERSION, type pb } from '../../wire';
import {
  authMetadata, createSdkChannel, mapGrpcError, metadataFor, resolveCredential, toNum, withProtocolVersion, ZdDeadlineExceededError,
  type Credential, type TlsOptions,
} from '../common';
import type { BackoffOptions } from '../common/backoff';
import { checkedReconnectBackoff } from '../common/reconnect';
import { checkedCredential } from '../common/credential-option';
import { CallSignal } from '../common/call-signal';
import { checkDuration, timerDelayMs } from '../common/durations';
import { RpcFailedError } from './errors';
import { EnqueueLane, LaneDeadlineError } from './enqueue-lane';
import {
  fromCluster, fromEnqueue, fromFailure, fromOutcome, fromOutcomeGroup, fromQueueInfo, fromTaskInfo, toConsumeRequest,
  toInvokeRpc, toStepSpec,
} from './mappers';
import type {
  CallOptions, CancelFlowResult, ClusterInfo, ConsumeOutcomesOptions, DroppedOutcomeGroup, EnqueueResult, InvokeRpcRequest,
  Outcome, OutcomeGroupInfo, QueueInfo, RpcResponse, StepSpec, TaskInfo,
} from './types';
import { sharedAbortController } from '../common/shared-signal';
import { wireFlag, wireText, wireTexts } from '../common/wire-values';

export interface ClientOptions {
  /** Server address, `host:port` (or `https://host:port` for TLS). */
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
   * Timeout of a call that sets none, in whole ms: > 0 and at most 2^31 - 1 (MAX_TIMER_MS, what a Node.js
   * timer holds). Long polls add their wait to it. @default 30000
   */
  defaultTimeoutMs?: number;
  /**
   * Backoff between redials of the connection while the node cannot be reached (calls fail at
   * once meanwhile, as UNAVAILABLE). @default { initialMs: 100, maxMs: 10000 }
   */
  reconnectBackoff?: Pick<BackoffOptions, 'initialMs' | 'maxMs'>;
  /**
   * @internal Not part of the public API and not documented: lets tests of
   * the server's protocol check send another protocol version.
   */
  _internal?: { protocolVersion?: number };
}

type Stub = GrpcClient<typeof MatchingServiceDefinition>;
type Grpc = { signal: AbortSignal; metadata: Awaited<ReturnType<typeof authMetadata>> };

/**
 * invokeRpc's own deadline is the caller's timeout plus this, so the server,
 * which gives up finding a worker at that timeout, answers UNAVAILABLE first.
 */
const RPC_DEADLINE_MARGIN_MS = 1_000;

export class Client {
  private readonly channel: Channel;
  private readonly stub: Stub;
  /** Enqueues go over one long-lived EnqueueStream call (enqueue-lane.ts). */
  private readonly lane: EnqueueLane;
  private readonly credential: Credential | undefined;
  private readonly defaultTimeoutMs: number;
  /** Sent in the `zd-protocol-version` header of every call. */
  private readonly protocolVersion: number;
  private closed = false;
  /** Aborted by close(): ends every call in flight. */
  private readonly closing = sharedAbortController();

  constructor(options: ClientOptions) {
    if (!options.address) throw new TypeError('Client option address: is required');
    // Past MAX_TIMER_MS (Infinity included) every call's timer would fire after 1 ms.
    this.defaultTimeoutMs = checkDuration('Client', 'defaultTimeoutMs', options.defaultTimeoutMs ?? 30_000, { zero: false });
    this.credential = checkedCredential('Client', options.credential);
    this.protocolVersion = options._internal?.protocolVersion ?? PROTOCOL_VERSION;
    this.channel = createSdkChannel(options.address, options.tls, undefined, checkedReconnectBackoff('Client', options.reconnectBackoff));
    this.stub = createClient(MatchingServiceDefinition, this.channel);
    this.lane = new EnqueueLane(this.stub, async (steps, o) => (await this.stub.enqueueSteps({ steps }, o)).results);
  }

  async enqueueStep(spec: StepSpec, opts?: CallOptions): Promise<EnqueueResult> {
    const [r] = await this.enqueue('enqueueStep', [toStepSpec(spec)], opts);
    if (!r) throw new Error('EnqueueStep: the server answered without a result');
    return fromEnqueue(r);
  }

  async enqueueSteps(specs: StepSpec[], opts?: CallOptions): Promise<EnqueueResult[]> {
    const results = await this.enqueue('enqueueSteps', specs.map((s, i) => toStepSpec(s, `steps[${i}]`)), opts);
    return results.map(fromEnqueue);
  }

  async getTask(taskId: string, opts?: CallOptions): Promise<TaskInfo> {
    const res = await this.call('getTask', (o) => this.stub.getTask({ task_id: wireText('getTask', 'taskId', taskId) }, o), opts);
    if (!res.task) throw new Error(`GetTask ${taskId}: the server answered without a task`);
    return fromTaskInfo(res.task);
  }

  /** Long-polls one task's outcome; null when the wait ended without one. */
  async waitOutcome(taskId: string, options: { waitMs?: number } = {}, opts?: CallOptions): Promise<Outcome | null> {
    const waitMs = checkDuration('waitOutcome', 'waitMs', options.waitMs ?? 0, { zero: true });
    const res = await this.call('waitOutcome', (o) => this.stub.waitOutcome({ task_id: wireText('waitOutcome', 'taskId', taskId), wait_ms: waitMs }, o), opts, waitMs);
    return res.outcome ? fromOutcome(res.outcome) : null;
  }

  async consumeOutcomes(options: ConsumeOutcomesOptions, opts?: CallOptions): Promise<Outcome[]> {
    const waitMs = checkDuration('consumeOutcomes', 'waitMs', options.waitMs ?? 0, { zero: true });
    const req = toConsumeRequest(options);
    const res = await this.call('consumeOutcomes', (o) => this.stub.consumeOutcomes(req, o), opts, waitMs);
    return res.outcomes.map(fromOutcome);
  }

  /**
   * Returns how many outcomes were acked (ids acked before count 0). `tenant`: as given to
   * consumeOutcomes; a group that does not exist (under that tenant) is ZdNotFoundError.
   */
  async ackOutcomes(group: string, outcomeIds: string[], opts?: CallOptions & { tenant?: string }): Promise<number> {
    const req = {
      group: wireText('ackOutcomes', 'group', group), outcome_ids: wireTexts('ackOutcomes', 'outcomeIds', outcomeIds),
      tenant: wireText('ackOutcomes', 'tenant', opts?.tenant),
    };
    const res = await this.call('ackOutcomes', (o) => this.stub.ackOutcomes(req, o), opts);
    return res.acked;
  }

  /**
   * Cancels every task of a flow; the counts are what this call cancelled. A retry of a call whose
   * reply was lost answers 0 and 0 (the first call cancelled them; the node cannot tell a retry from
   * a second cancel): read what ended from the tasks' CANCELLED outcomes.
   */
  async cancelFlow(tenant: string, flowId: string, reason = '', opts?: CallOptions): Promise<CancelFlowResult> {
    const req = {
      tenant: wireText('cancelFlow', 'tenant', tenant), flow_id: wireText('cancelFlow', 'flowId', flowId), reason: wireText('cancelFlow', 'reason', reason),
    };
    const res = await this.call('cancelFlow', (o) => this.stub.cancelFlow(req, o), opts);
    return { cancelledQueued: res.cancelled_queued, cancelledRunning: res.cancelled_running };
  }

  async describeQueues(tenant: string, flowType = '', opts?: CallOptions): Promise<QueueInfo[]> {
    const req = { tenant: wireText('describeQueues', 'tenant', tenant), flow_type: wireText('describeQueues', 'flowType', flowType) };
    const res = await this.call('describeQueues', (o) => this.stub.describeQueues(req, o), opts);
    return res.queues.map(fromQueueInfo);
  }

  async describeCluster(opts?: CallOptions): Promise<ClusterInfo> {
    return fromCluster(await this.call('describeCluster', (o) => this.stub.describeCluster({}, o), opts));
  }

  /** Operators: every outcome consumer group and how far behind it is. */
  async listOutcomeGroups(opts?: CallOptions): Promise<OutcomeGroupInfo[]> {
    const res = await this.call('listOutcomeGroups', (o) => this.stub.listOutcomeGroups({}, o), opts);
    return res.groups.map(fromOutcomeGroup);
  }

  /**
   * Operators: drops an abandoned outcome consumer group everywhere. Throws
   * ZdNotFoundError when there is none; refuses one a consumer read in the
   * last 10 minutes unless `force`.
   */
  async dropOutcomeGroup(group: string, options: { tenant?: string; force?: boolean } = {}, opts?: CallOptions): Promise<DroppedOutcomeGroup> {
    const req = {
      group: wireText('dropOutcomeGroup', 'group', group), tenant: wireText('dropOutcomeGroup', 'tenant', options.tenant),
      force: wireFlag('dropOutcomeGroup', 'force', options.force),
    };
    const res = await this.call('dropOutcomeGroup', (o) => this.stub.dropOutcomeGroup(req, o), opts);
    return { partitions: res.partitions, pending: toNum(res.pending) };
  }

  /**
   * Calls an RPC on a worker of the flow type. Throws RpcFailedError when
   * the handler failed, ZdUnavailableError when no worker took it in time,
   * ZdNotFoundError when no connected worker supports the name. The timeout
   * (the smaller of `request.timeoutMs` and `opts.timeoutMs`, else the
   * client's default) bounds the server's search for a worker too. Here a
   * timeout of 0 is unset, as in the request sent.
   */
  async invokeRpc(request: InvokeRpcRequest, opts: CallOptions = {}): Promise<RpcResponse> {
    const given = [
      checkDuration('invokeRpc', 'request.timeoutMs', request.timeoutMs, { zero: true }),
      checkDuration('invokeRpc', 'timeoutMs', opts.timeoutMs, { zero: true }),
    ].filter((ms): ms is number => ms !== undefined && ms > 0);
    const budget = given.length > 0 ? Math.min(...given) : this.defaultTimeoutMs;
    const req = toInvokeRpc({ ...request, timeoutMs: budget });
    // The margin may not take a budget near MAX_TIMER_MS past what a timer holds.
    const callOpts = { ...opts, timeoutMs: timerDelayMs(budget + RPC_DEADLINE_MARGIN_MS) };
    const res = await this.call('invokeRpc', (o) => this.stub.invokeRpc(req, o), callOpts);
    if (res.result === 'failure') throw new RpcFailedError(fromFailure(res.failure)!, res.app_worker_id);
    return { output: Buffer.from(res.output ?? new Uint8Array(0)), appWorkerId: res.app_worker_id };
  }

  /** Ends the calls in flight (they reject: the client is closed) and closes the channel; idempotent. Calls made afterwards fail. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    this.lane.close();
    this.channel.close();
  }

  /** `call` for the enqueue lane, which keeps the deadlines itself (enqueue-lane.ts). */
  private async enqueue(method: string, steps: pb.IStepSpec[], opts: CallOptions = {}): Promise<pb.IEnqueueStepResponse[]> {
    if (this.closed) throw new Error(`${method}: the client is closed`);
    const timeoutMs = checkDuration(method, 'timeoutMs', opts.timeoutMs, { zero: false }) ?? this.defaultTimeoutMs;
    try {
      // Resolved inside the lane's deadline: a credential that never answers must not hold the call.
      const token = resolveCredential(this.credential);
      const metadata = (t: string) => withProtocolVersion(metadataFor(t), this.protocolVersion);
      return await this.lane.send(steps, { token, metadata, timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) });
    } catch (err) {
      if (err instanceof LaneDeadlineError) throw new ZdDeadlineExceededError(`${method} did not finish within ${timeoutMs} ms`, Status.DEADLINE_EXCEEDED);
      throw mapGrpcError(err);
    }
  }

  /**
   * Adds credentials, the protocol version header and a timeout (nice-grpc
   * has no deadline of its own), ends with close(), and maps errors.
   */
  private async call<T>(method: string, fn: (o: Grpc) => Promise<T>, opts: CallOptions = {}, waitMs = 0): Promise<T> {
    if (this.closed) throw new Error(`${method}: the client is closed`);
    // A given timeout is the whole call's; the default gets the long poll's wait added, capped at
    // what a timer holds (each is at most MAX_TIMER_MS, their sum need not be).
    const timeoutMs = checkDuration(method, 'timeoutMs', opts.timeoutMs, { zero: false }) ?? timerDelayMs(this.defaultTimeoutMs + waitMs);
    const call = new CallSignal(timeoutMs, [this.closing.signal, opts.signal]);
    try {
      // Within the call's timeout, signal and close(): a credential that never answers must not hold it.
      const metadata = withProtocolVersion(await abortable(call.signal, authMetadata(this.credential)), this.protocolVersion);
      return await fn({ signal: call.signal, metadata });
    } catch (err) {
      if (call.timedOut) throw new ZdDeadlineExceededError(`${method} did not finish within ${timeoutMs} ms`, Status.DEADLINE_EXCEEDED);
      if (call.cause === this.closing.signal) throw new Error(`${method}: the client is closed`, { cause: err });
      throw mapGrpcError(err);
    } finally {
      call.dispose();
    }
  }
}
