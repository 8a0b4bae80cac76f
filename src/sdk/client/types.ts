/** The Client's camelCase view of MatchingService messages (proto: matching.proto). */
import type { Payload } from '../common';

export interface RetryPolicy {
  /** Attempts in all, the first included; 0 = server default (3). */
  maxAttempts?: number;
  /** 0 = server default (1 s). */
  initialIntervalMs?: number;
  /** 0 = server default (2). */
  backoffCoefficient?: number;
  /** 0 = server default (100 s). */
  maxIntervalMs?: number;
  /** Failure types that end the task at once. */
  nonRetryable?: string[];
}

/** A Step to enqueue; (tenant, flowId, stepExecutionId) names it, so re-enqueueing is idempotent. */
export interface StepSpec {
  tenant: string;
  flowId: string;
  flowType: string;
  stepType: string;
  stepExecutionId: string;
  input?: Payload;
  /** When the Step becomes ready (Date or epoch ms). @default now */
  readyAt?: Date | number;
  /** A queued Step past it ends TIMED_OUT. @default none */
  flowDeadline?: Date | number;
  /** Per-attempt method timeout. @default none */
  methodTimeoutMs?: number;
  /** Per-attempt heartbeat timeout. @default none */
  heartbeatTimeoutMs?: number;
  /** @default the server's policy */
  retryPolicy?: RetryPolicy;
  /** Prefer this app worker id. @default the one remembered for the flow */
  stickyWorkerId?: string;
}

export interface EnqueueResult {
  taskId: string;
  /** False when the Step already existed (or ended within outcomes.retention). */
  created: boolean;
  partition: number;
}

export interface FailureInfo {
  message: string;
  type: string;
  nonRetryable: boolean;
  retryAfterMs: number;
}

export type OutcomeStatus = 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';
export type TaskState = 'QUEUED' | 'RUNNING' | 'LOCKED' | 'TERMINAL' | 'DONE';

export interface Outcome {
  /** The handle to ack it with. */
  outcomeId: string;
  taskId: string;
  tenant: string;
  flowId: string;
  flowType: string;
  stepType: string;
  stepExecutionId: string;
  status: OutcomeStatus;
  attempt: number;
  appWorkerId: string;
  output: Buffer;
  error: FailureInfo | undefined;
  /** Stable per task: deduplicate redelivered outcomes with it. */
  idempotencyKey: string;
  finishedAt: Date | undefined;
  enqueuedAt: Date | undefined;
}

export interface TaskInfo {
  taskId: string;
  partition: number;
  state: TaskState;
  tenant: string;
  flowId: string;
  flowType: string;
  stepType: string;
  stepExecutionId: string;
  attempt: number;
  readyAt: Date | undefined;
  enqueuedAt: Date | undefined;
  appWorkerId: string;
  nodeId: string;
  lastError: FailureInfo | undefined;
  input: Buffer;
  flowDeadline: Date | undefined;
  maxAttempts: number;
  /** Set when state is DONE. */
  outcome: Outcome | undefined;
}

export interface ConsumeOutcomesOptions {
  group: string;
  /**
   * Read this tenant's outcomes only, in a group of that tenant's own (needed with a credential bound
   * to some tenants). Omitted: a group over every tenant. @default all tenants
   */
  tenant?: string;
  consumer: string;
  /** @default the server's */
  maxCount?: number;
  /** How long to wait for outcomes, in ms (at most the server's limits.maxWait). @default 0 (answer at once) */
  waitMs?: number;
  /** Outcome ids to ack before reading. */
  ack?: string[];
  /** Redeliver unacked outcomes idle longer than this. @default 30000 (server side) */
  redeliverAfterMs?: number;
}

export interface CancelFlowResult {
  cancelledQueued: number;
  cancelledRunning: number;
}

export interface QueueInfo {
  tenant: string;
  flowType: string;
  stepType: string;
  ready: number;
  delayed: number;
  oldestReadyAt: Date | undefined;
  running: number;
}

export interface NodeInfo {
  nodeId: string;
  address: string;
  lastHeartbeat: Date | undefined;
  ownedPartitions: number;
  live: boolean;
}

export interface ClusterInfo {
  partitions: number;
  nodes: NodeInfo[];
  partitionOwners: Array<{ partition: number; owner: string; epoch: number }>;
}

/** An outcome consumer group (MatchingService.ListOutcomeGroups, operators). */
export interface OutcomeGroupInfo {
  /** The tenant of a tenant's own group; "" for a group over every tenant. */
  tenant: string;
  group: string;
  /** Outcomes not yet delivered to it; undefined when Redis cannot tell. */
  lag: number | undefined;
  /** Delivered and not acked. */
  pending: number;
  consumers: number;
  /** Since a consumer last read it, ms; undefined when it never had a consumer. */
  idleMs: number | undefined;
  /** Partitions whose outcome stream has it. */
  partitions: number;
  /** In the registry trimming follows. */
  registered: boolean;
}

export interface DroppedOutcomeGroup {
  /** Partitions whose stream held it. */
  partitions: number;
  /** Outcomes it had delivered and not acked. */
  pending: number;
}

export interface InvokeRpcRequest {
  tenant: string;
  flowId: string;
  flowType: string;
  rpcName: string;
  input?: Payload;
  stickyWorkerId?: string;
  /**
   * The caller's budget for the whole call, sent to the server, which stops
   * looking for a worker at it (or at matching.dispatchWait if sooner) with
   * UNAVAILABLE. `CallOptions.timeoutMs` counts the same way; the smaller wins.
   * In whole ms, at most 2^31 - 1 (MAX_TIMER_MS); 0 = unset.
   * @default the client's defaultTimeoutMs
   */
  timeoutMs?: number;
}

export interface RpcResponse {
  output: Buffer;
  appWorkerId: string;
}

/** Per-call options, the last argument of every Client method. */
export interface CallOptions {
  signal?: AbortSignal;
  /**
   * The whole call's timeout, a whole number of ms > 0 and at most 2^31 - 1 (MAX_TIMER_MS, what a Node.js timer
   * holds), else the call rejects with a TypeError naming it. (invokeRpc: 0 = unset.)
   * @default the client's defaultTimeoutMs (plus the wait of long polls)
   */
  timeoutMs?: number;
}
