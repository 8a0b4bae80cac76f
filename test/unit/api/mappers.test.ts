/**
 * Store records to wire messages: every field of an outcome and of a task's
 * hash reaches its wire field, each status and state maps to its own enum
 * value, and a task's last error shows when either its message or its type
 * was recorded.
 */
import { outcomeToWire, taskToWire } from '../../../src/api/mappers';
import type { StoredOutcome } from '../../../src/store/outcomes';
import { pb } from '../../../src/wire';

const stored = (over: Partial<StoredOutcome> = {}): StoredOutcome => ({
  outcomeId: '3-1700000000000-0', taskId: 'tk-1', tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge',
  stepExecutionId: 's1', status: 'COMPLETED', attempt: 2, appWorkerId: 'w1', output: Buffer.from('out'), error: null,
  finishedAt: 1_700_000_000_500, enqueuedAt: 1_700_000_000_100, ...over,
});

describe('outcomeToWire', () => {
  it('carries every field, with the task id as the idempotency key', () => {
    expect(outcomeToWire(stored())).toEqual({
      outcome_id: '3-1700000000000-0', task_id: 'tk-1', tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge',
      step_execution_id: 's1', status: pb.OutcomeStatus.COMPLETED, attempt: 2, app_worker_id: 'w1', output: Buffer.from('out'),
      error: null, idempotency_key: 'tk-1', finished_at_ms: 1_700_000_000_500, enqueued_at_ms: 1_700_000_000_100,
    });
  });

  it('maps each of the four statuses to its own value, and an unknown one to unspecified', () => {
    const statusOf = (status: string) => outcomeToWire(stored({ status })).status;
    expect(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].map(statusOf)).toEqual([
      pb.OutcomeStatus.COMPLETED, pb.OutcomeStatus.FAILED, pb.OutcomeStatus.CANCELLED, pb.OutcomeStatus.TIMED_OUT,
    ]);
    expect(statusOf('LOST')).toBe(pb.OutcomeStatus.OUTCOME_STATUS_UNSPECIFIED);
  });

  it('carries a failure with its type and non-retryable flag', () => {
    const error = { message: 'card declined', type: 'Declined', nonRetryable: true };
    expect(outcomeToWire(stored({ status: 'FAILED', error })).error).toEqual({ message: 'card declined', type: 'Declined', non_retryable: true });
    expect(outcomeToWire(stored({ status: 'FAILED', error: { ...error, nonRetryable: false } })).error).toMatchObject({ non_retryable: false });
  });
});

describe('taskToWire', () => {
  const hash = (fields: Record<string, string>) =>
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Buffer.from(v)])) as Record<string, Buffer>;

  it('carries every field of the hash', () => {
    const h = hash({
      state: 'running', tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', seid: 's1', attempt: '3',
      readyAt: '1700000000001', enqueuedAt: '1700000000002', worker: 'w1', node: 'n1', input: 'in', deadline: '1700000009000',
      maxAttempts: '5', errMsg: 'boom', errType: 'Oops',
    });
    expect(taskToWire('tk-1', 4, h)).toEqual({
      task_id: 'tk-1', partition: 4, state: pb.TaskState.RUNNING, tenant: 'acme', flow_id: 'f1', flow_type: 'order',
      step_type: 'charge', step_execution_id: 's1', attempt: 3, ready_at_ms: 1_700_000_000_001, enqueued_at_ms: 1_700_000_000_002,
      app_worker_id: 'w1', node_id: 'n1', input: Buffer.from('in'), flow_deadline_ms: 1_700_000_009_000, max_attempts: 5,
      last_error: { message: 'boom', type: 'Oops' },
    });
  });

  it('maps each state to its own value, and an unknown one to unspecified', () => {
    const stateOf = (state: string) => taskToWire('tk-1', 0, hash({ state })).state;
    expect(['queued', 'running', 'locked', 'terminal'].map(stateOf)).toEqual([
      pb.TaskState.QUEUED, pb.TaskState.RUNNING, pb.TaskState.LOCKED, pb.TaskState.TERMINAL,
    ]);
    expect(stateOf('gone')).toBe(pb.TaskState.TASK_STATE_UNSPECIFIED);
  });

  it('reads absent fields as empty or zero, and shows a last error recorded with a type alone', () => {
    expect(taskToWire('tk-1', 0, {})).toMatchObject({
      tenant: '', attempt: 0, ready_at_ms: 0, input: Buffer.alloc(0), max_attempts: 0, last_error: null,
    });
    expect(taskToWire('tk-1', 0, hash({ errType: 'Timeout' })).last_error).toEqual({ message: '', type: 'Timeout' });
    expect(taskToWire('tk-1', 0, hash({ errMsg: 'late' })).last_error).toEqual({ message: 'late', type: '' });
  });
});
