/** Store records → wire messages. */
import type { StoredOutcome } from '../store/outcomes';
import { pb } from '../wire';

const STATUS: Record<string, pb.OutcomeStatus> = {
  COMPLETED: pb.OutcomeStatus.COMPLETED,
  FAILED: pb.OutcomeStatus.FAILED,
  CANCELLED: pb.OutcomeStatus.CANCELLED,
  TIMED_OUT: pb.OutcomeStatus.TIMED_OUT,
};

export function outcomeToWire(o: StoredOutcome): pb.IOutcome {
  return {
    outcome_id: o.outcomeId, task_id: o.taskId, tenant: o.tenant, flow_id: o.flowId, flow_type: o.flowType,
    step_type: o.stepType, step_execution_id: o.stepExecutionId, status: STATUS[o.status] ?? pb.OutcomeStatus.OUTCOME_STATUS_UNSPECIFIED,
    attempt: o.attempt, app_worker_id: o.appWorkerId, output: o.output,
    error: o.error ? { message: o.error.message, type: o.error.type, non_retryable: o.error.nonRetryable } : null,
    idempotency_key: o.taskId, finished_at_ms: o.finishedAt, enqueued_at_ms: o.enqueuedAt,
  };
}

const STATE: Record<string, pb.TaskState> = {
  queued: pb.TaskState.QUEUED,
  running: pb.TaskState.RUNNING,
  locked: pb.TaskState.LOCKED,
  terminal: pb.TaskState.TERMINAL,
};

export function taskToWire(taskId: string, partition: number, h: Record<string, Buffer>): pb.ITaskInfo {
  const s = (k: string) => h[k]?.toString() ?? '';
  const n = (k: string) => Number(s(k) || 0);
  const errMsg = s('errMsg');
  const errType = s('errType');
  return {
    task_id: taskId, partition, state: STATE[s('state')] ?? pb.TaskState.TASK_STATE_UNSPECIFIED,
    tenant: s('tenant'), flow_id: s('flowId'), flow_type: s('flowType'), step_type: s('stepType'),
    step_execution_id: s('seid'), attempt: n('attempt'), ready_at_ms: n('readyAt'), enqueued_at_ms: n('enqueuedAt'),
    app_worker_id: s('worker'), node_id: s('node'), input: h.input ?? Buffer.alloc(0), flow_deadline_ms: n('deadline'),
    max_attempts: n('maxAttempts'), last_error: errMsg || errType ? { message: errMsg, type: errType } : null,
  };
}
