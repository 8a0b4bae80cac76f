/** The one place that maps Client types to and from the proto messages. */
import { pb } from '../../wire';
import { fromEpochMs, toBuffer, toEpochMs, toNum } from '../common';
import { checkedPayload } from '../common/payloads';
import { wireText, wireTexts } from '../common/wire-values';
import { checkCount, UINT32_MAX } from '../common/counts';
import { checkDuration, type DurationBounds } from '../common/durations';
import type {
  ClusterInfo, EnqueueResult, FailureInfo, InvokeRpcRequest, Outcome, OutcomeGroupInfo, OutcomeStatus, QueueInfo, RetryPolicy,
  StepSpec, TaskInfo, TaskState, ConsumeOutcomesOptions,
} from './types';

/**
 * A duration the server bounds itself (0 = unset): a finite number ≥ 0, else a TypeError naming
 * it — protobufjs would send Infinity and NaN as 0 and a negative as a huge number.
 */
const SERVER_BOUNDED: DurationBounds = { zero: true, timer: false };
const wireMs = (what: string, field: string, value: number | undefined): number => checkDuration(what, field, value ?? 0, SERVER_BOUNDED);

/**
 * A time as epoch ms (0 = unset). protobufjs sends NaN (an invalid Date) and Infinity as 0, which
 * would enqueue the Step ready at once or without its flow deadline: refused, naming the field.
 */
function wireEpochMs(what: string, field: string, value: Date | number | undefined): number {
  const ms = toEpochMs(value);
  if (!Number.isFinite(ms) || ms < 0) throw new TypeError(`${what} option ${field}: must be a valid Date or epoch ms ≥ 0, got ${String(value)}`);
  return ms;
}

/**
 * An optional text field. protobufjs sends a number as '' and a string where a list belongs as its
 * letters: a sticky worker dropped, and `nonRetryable: 'ValidationError'` retried as 15 one-letter types.
 */
/** A uint32 count (0 = the server's default), refused when protobufjs would not send it as given. */
const wireCount = (what: string, field: string, value: number | undefined): number => checkCount(what, field, value ?? 0, UINT32_MAX);

export function toRetryPolicy(p: RetryPolicy | undefined, where = 'retryPolicy'): pb.IRetryPolicy | undefined {
  if (!p) return undefined;
  return {
    max_attempts: wireCount('StepSpec', `${where}.maxAttempts`, p.maxAttempts),
    initial_interval_ms: wireMs('StepSpec', `${where}.initialIntervalMs`, p.initialIntervalMs),
    backoff_coefficient: p.backoffCoefficient ?? 0,
    max_interval_ms: wireMs('StepSpec', `${where}.maxIntervalMs`, p.maxIntervalMs),
    non_retryable: wireTexts('StepSpec', `${where}.nonRetryable`, p.nonRetryable),
  };
}

/** `where` names the Step in errors: `step`, or `steps[i]` for one of a batch. */
export function toStepSpec(s: StepSpec, where = 'step'): pb.IStepSpec {
  return {
    tenant: wireText('StepSpec', `${where}.tenant`, s.tenant),
    flow_id: wireText('StepSpec', `${where}.flowId`, s.flowId),
    flow_type: wireText('StepSpec', `${where}.flowType`, s.flowType),
    step_type: wireText('StepSpec', `${where}.stepType`, s.stepType),
    step_execution_id: wireText('StepSpec', `${where}.stepExecutionId`, s.stepExecutionId),
    input: checkedPayload('StepSpec', `${where}.input`, s.input),
    ready_at_ms: wireEpochMs('StepSpec', `${where}.readyAt`, s.readyAt),
    flow_deadline_ms: wireEpochMs('StepSpec', `${where}.flowDeadline`, s.flowDeadline),
    method_timeout_ms: wireMs('StepSpec', `${where}.methodTimeoutMs`, s.methodTimeoutMs),
    heartbeat_timeout_ms: wireMs('StepSpec', `${where}.heartbeatTimeoutMs`, s.heartbeatTimeoutMs),
    retry_policy: toRetryPolicy(s.retryPolicy, `${where}.retryPolicy`),
    sticky_worker_id: wireText('StepSpec', `${where}.stickyWorkerId`, s.stickyWorkerId),
  };
}

export function toConsumeRequest(o: ConsumeOutcomesOptions): pb.IConsumeOutcomesRequest {
  return {
    group: wireText('consumeOutcomes', 'group', o.group),
    tenant: wireText('consumeOutcomes', 'tenant', o.tenant),
    consumer: wireText('consumeOutcomes', 'consumer', o.consumer),
    max_count: wireCount('consumeOutcomes', 'maxCount', o.maxCount),
    wait_ms: o.waitMs ?? 0,
    ack: wireTexts('consumeOutcomes', 'ack', o.ack),
    redeliver_after_ms: wireMs('consumeOutcomes', 'redeliverAfterMs', o.redeliverAfterMs),
  };
}

export function toInvokeRpc(r: InvokeRpcRequest): pb.IInvokeRpcRequest {
  return {
    tenant: wireText('invokeRpc', 'request.tenant', r.tenant),
    flow_id: wireText('invokeRpc', 'request.flowId', r.flowId),
    flow_type: wireText('invokeRpc', 'request.flowType', r.flowType),
    rpc_name: wireText('invokeRpc', 'request.rpcName', r.rpcName),
    input: checkedPayload('invokeRpc', 'request.input', r.input),
    sticky_worker_id: wireText('invokeRpc', 'request.stickyWorkerId', r.stickyWorkerId),
    // The server never waits for a worker past the caller's own budget.
    timeout_ms: r.timeoutMs ?? 0,
  };
}

export function fromEnqueue(r: pb.IEnqueueStepResponse): EnqueueResult {
  return { taskId: r.task_id ?? '', created: r.created ?? false, partition: r.partition ?? 0 };
}

export function fromFailure(f: pb.IFailure | null | undefined): FailureInfo | undefined {
  if (!f) return undefined;
  return { message: f.message ?? '', type: f.type ?? '', nonRetryable: f.non_retryable ?? false, retryAfterMs: toNum(f.retry_after_ms) };
}

/** Enum number → its proto name; unknown or unspecified values throw (a newer server, or a bug). */
function enumName<T extends string>(values: Record<number, string>, n: number | null | undefined, what: string): T {
  const name = n ? values[n] : undefined;
  if (!name) throw new Error(`unexpected ${what} ${n} from the server`);
  return name as T;
}

export function fromOutcome(o: pb.IOutcome): Outcome {
  return {
    outcomeId: o.outcome_id ?? '',
    taskId: o.task_id ?? '',
    tenant: o.tenant ?? '',
    flowId: o.flow_id ?? '',
    flowType: o.flow_type ?? '',
    stepType: o.step_type ?? '',
    stepExecutionId: o.step_execution_id ?? '',
    status: enumName<OutcomeStatus>(pb.OutcomeStatus, o.status, 'outcome status'),
    attempt: o.attempt ?? 0,
    appWorkerId: o.app_worker_id ?? '',
    output: toBuffer(o.output),
    error: fromFailure(o.error),
    idempotencyKey: o.idempotency_key ?? '',
    finishedAt: fromEpochMs(o.finished_at_ms),
    enqueuedAt: fromEpochMs(o.enqueued_at_ms),
  };
}

export function fromTaskInfo(t: pb.ITaskInfo): TaskInfo {
  return {
    taskId: t.task_id ?? '',
    partition: t.partition ?? 0,
    state: enumName<TaskState>(pb.TaskState, t.state, 'task state'),
    tenant: t.tenant ?? '',
    flowId: t.flow_id ?? '',
    flowType: t.flow_type ?? '',
    stepType: t.step_type ?? '',
    stepExecutionId: t.step_execution_id ?? '',
    attempt: t.attempt ?? 0,
    readyAt: fromEpochMs(t.ready_at_ms),
    enqueuedAt: fromEpochMs(t.enqueued_at_ms),
    appWorkerId: t.app_worker_id ?? '',
    nodeId: t.node_id ?? '',
    lastError: fromFailure(t.last_error),
    input: toBuffer(t.input),
    flowDeadline: fromEpochMs(t.flow_deadline_ms),
    maxAttempts: t.max_attempts ?? 0,
    outcome: t.outcome ? fromOutcome(t.outcome) : undefined,
  };
}

export function fromQueueInfo(q: pb.IQueueInfo): QueueInfo {
  return {
    tenant: q.tenant ?? '',
    flowType: q.flow_type ?? '',
    stepType: q.step_type ?? '',
    ready: toNum(q.ready),
    delayed: toNum(q.delayed),
    oldestReadyAt: fromEpochMs(q.oldest_ready_at_ms),
    running: toNum(q.running),
  };
}

export function fromOutcomeGroup(g: pb.IOutcomeGroupInfo): OutcomeGroupInfo {
  const lag = toNum(g.lag);
  const idle = toNum(g.idle_ms);
  return {
    tenant: g.tenant ?? '', group: g.group ?? '', lag: lag < 0 ? undefined : lag, pending: toNum(g.pending),
    consumers: g.consumers ?? 0, idleMs: idle < 0 ? undefined : idle, partitions: g.partitions ?? 0, registered: g.registered ?? false,
  };
}

export function fromCluster(c: pb.IDescribeClusterResponse): ClusterInfo {
  return {
    partitions: c.partitions ?? 0,
    nodes: (c.nodes ?? []).map((n) => ({
      nodeId: n.node_id ?? '',
      address: n.address ?? '',
      lastHeartbeat: fromEpochMs(n.last_heartbeat_ms),
      ownedPartitions: n.owned_partitions ?? 0,
      live: n.live ?? false,
    })),
    partitionOwners: (c.partition_owners ?? []).map((p) => ({ partition: p.partition ?? 0, owner: p.owner ?? '', epoch: toNum(p.epoch) })),
  };
}
