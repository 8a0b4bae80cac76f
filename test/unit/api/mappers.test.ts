/**
 * Store records to wire messages: every field of an outcome and of a task's
 * hash reaches its wire field, each status and state maps to its own enum
 * value, and a task's last error shows when either its message or its type
 * was recorded.
 */
import { outcomeToWire, taskToWire } from '../../../src/api/mappers';
import { lockedTaskToWire, terminalTaskToWire } from '../../../src/api/external-service';
import type { ClaimedTask, TerminalTaskRecord } from '../../../src/store/fetch-store';
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

describe('lockedTaskToWire', () => {
  const claimed = (over: Partial<ClaimedTask> = {}): ClaimedTask => ({
    partition: 3, taskId: 'tk-1', queue: 'q', tenant: 'acme', flowType: 'order', stepType: 'charge', flowId: 'f1',
    stepExecutionId: 's1', input: Buffer.from('in'), lockUntil: 1_700_000_030_000, retries: 4, attempt: 2, ...over,
  });

  it('carries every field a fetch worker reads, the topic from the task\'s own tenant and types', () => {
    expect(lockedTaskToWire(claimed())).toEqual({
      task_id: 'tk-1', topic: { tenant: 'acme', flow_type: 'order', step_type: 'charge' }, flow_id: 'f1', step_execution_id: 's1',
      input: Buffer.from('in'), lock_until_ms: 1_700_000_030_000, retries: 4, attempt: 2,
    });
  });
});

describe('terminalTaskToWire', () => {
  const terminal = (over: Partial<TerminalTaskRecord> = {}): TerminalTaskRecord => ({
    partition: 5, taskId: 'tk-2', tenant: 'acme', flowType: 'order', stepType: 'charge', flowId: 'f2', stepExecutionId: 's2',
    attempt: 3, reason: 'retries exhausted', terminalAt: 1_700_000_040_000, errMsg: 'boom', errType: 'Oops', lockExpiries: 2, ...over,
  });

  it('carries every field an operator reads, with the partition and lock expiries', () => {
    expect(terminalTaskToWire(terminal())).toEqual({
      task_id: 'tk-2', topic: { tenant: 'acme', flow_type: 'order', step_type: 'charge' }, flow_id: 'f2', step_execution_id: 's2',
      attempt: 3, reason: 'retries exhausted', terminal_at_ms: 1_700_000_040_000, last_error: { message: 'boom', type: 'Oops' },
      lock_expiries: 2, partition: 5,
    });
  });

  it('shows a last error recorded with a message or a type alone, and none when neither was', () => {
    expect(terminalTaskToWire(terminal({ errMsg: '', errType: '' })).last_error).toBeNull();
    expect(terminalTaskToWire(terminal({ errMsg: '', errType: 'Timeout' })).last_error).toEqual({ message: '', type: 'Timeout' });
    expect(terminalTaskToWire(terminal({ errMsg: 'late', errType: '' })).last_error).toEqual({ message: 'late', type: '' });
  });
});
