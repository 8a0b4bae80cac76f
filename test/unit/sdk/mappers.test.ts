import vm from 'node:vm';
import { pb } from '../../../src/wire';
import { fromOutcome, fromTaskInfo, fromQueueInfo, toStepSpec, toConsumeRequest, toInvokeRpc } from '../../../src/sdk/client/mappers';
import { toFailure, StepFailure } from '../../../src/sdk/worker/failure';
import { FAILURE_LIMITS } from '../../../src/wire';
import { toNum } from '../../../src/sdk/common';

/** Round-trips through the wire encoding, as the real client and server do. */
const wire = <T>(cls: { encode(m: T): { finish(): Uint8Array }; decode(b: Uint8Array): unknown }, m: T) => cls.decode(cls.encode(m).finish());

describe('client mappers', () => {
  it('maps a StepSpec to the snake_case proto, dates to epoch ms, strings to UTF-8', () => {
    const readyAt = new Date('2030-01-01T00:00:00Z');
    const step = toStepSpec({
      tenant: 't', flowId: 'f', flowType: 'order', stepType: 'charge', stepExecutionId: 's1', input: 'héllo',
      readyAt, flowDeadline: 1_900_000_000_000, methodTimeoutMs: 5000, heartbeatTimeoutMs: 1000,
      retryPolicy: { maxAttempts: 5, nonRetryable: ['Fatal'] }, stickyWorkerId: 'w1',
    });
    expect(step).toMatchObject({
      tenant: 't', flow_id: 'f', flow_type: 'order', step_type: 'charge', step_execution_id: 's1',
      ready_at_ms: readyAt.getTime(), flow_deadline_ms: 1_900_000_000_000, method_timeout_ms: 5000, heartbeat_timeout_ms: 1000,
      retry_policy: { max_attempts: 5, initial_interval_ms: 0, backoff_coefficient: 0, max_interval_ms: 0, non_retryable: ['Fatal'] },
      sticky_worker_id: 'w1',
    });
    expect(Buffer.from(step.input!).toString('utf8')).toBe('héllo');
    const decoded = wire(pb.StepSpec, step) as pb.StepSpec;
    expect(toNum(decoded.ready_at_ms)).toBe(readyAt.getTime());
  });

  // Infinity and NaN go out as 0 ("none", "the server's default"), a negative as a huge uint64: refused, naming the field.
  it.each([Infinity, NaN, -1])('refuses a Step duration of %p, naming the field', (ms) => {
    const s = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e' };
    expect(() => toStepSpec({ ...s, methodTimeoutMs: ms })).toThrow(/step\.methodTimeoutMs/);
    expect(() => toStepSpec({ ...s, heartbeatTimeoutMs: ms })).toThrow(/step\.heartbeatTimeoutMs/);
    expect(() => toStepSpec({ ...s, retryPolicy: { initialIntervalMs: ms } })).toThrow(/step\.retryPolicy\.initialIntervalMs/);
    expect(() => toStepSpec({ ...s, retryPolicy: { maxIntervalMs: ms } })).toThrow(/step\.retryPolicy\.maxIntervalMs/);
    expect(() => toConsumeRequest({ group: 'g', consumer: 'c', redeliverAfterMs: ms })).toThrow(/redeliverAfterMs/);
    // Durations the server bounds itself (up to a year) go out as given.
    expect(toStepSpec({ ...s, methodTimeoutMs: 2 ** 32 }).method_timeout_ms).toBe(2 ** 32);
  });

  it.each([1.5, 0.5])('refuses a Step duration of %p ms, not a whole number (protobufjs cut it)', (ms) => {
    const s = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e' };
    expect(() => toStepSpec({ ...s, methodTimeoutMs: ms })).toThrow(`StepSpec option step.methodTimeoutMs: must be a whole number of ms, got ${ms}`);
    expect(() => toStepSpec({ ...s, retryPolicy: { maxIntervalMs: ms } })).toThrow(/step\.retryPolicy\.maxIntervalMs: must be a whole number of ms/);
    expect(() => toConsumeRequest({ group: 'g', consumer: 'c', redeliverAfterMs: ms })).toThrow(/redeliverAfterMs: must be a whole number of ms/);
  });

  it('refuses a sticky worker that is no string and non-retryable types that are no array of strings, naming them', () => {
    // protobufjs sent the number as '' (the sticky preference dropped) and the string as its letters.
    const base = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e' };
    expect(() => toStepSpec({ ...base, stickyWorkerId: 42 as never })).toThrow(/StepSpec option step\.stickyWorkerId: must be a string/);
    expect(() => toStepSpec({ ...base, retryPolicy: { nonRetryable: 'ValidationError' as never } }))
      .toThrow(/step\.retryPolicy\.nonRetryable: must be an array of strings/);
    expect(() => toStepSpec({ ...base, retryPolicy: { nonRetryable: ['A', 7 as never] } }, 'steps[3]'))
      .toThrow(/steps\[3\]\.retryPolicy\.nonRetryable\[1\]: must be a string/);
    expect(toStepSpec({ ...base, stickyWorkerId: 'w', retryPolicy: { nonRetryable: ['A'] } })).toMatchObject({
      sticky_worker_id: 'w', retry_policy: { non_retryable: ['A'] },
    });
  });

  it('sends every retry policy field as given', () => {
    const step = toStepSpec({
      tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e',
      retryPolicy: { maxAttempts: 4, initialIntervalMs: 200, backoffCoefficient: 1.5, maxIntervalMs: 9000, nonRetryable: ['A', 'B'] },
    });
    expect(step.retry_policy).toEqual({ max_attempts: 4, initial_interval_ms: 200, backoff_coefficient: 1.5, max_interval_ms: 9000, non_retryable: ['A', 'B'] });
  });

  it('omits optional fields as proto zero values', () => {
    const step = toStepSpec({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e' });
    expect(step).toMatchObject({ ready_at_ms: 0, flow_deadline_ms: 0, method_timeout_ms: 0, sticky_worker_id: '', retry_policy: undefined });
    expect(step.input).toHaveLength(0);
  });

  it('maps consume and invoke requests', () => {
    expect(toConsumeRequest({ group: 'g', consumer: 'c', waitMs: 100, ack: ['0-1'] })).toEqual({
      group: 'g', tenant: '', consumer: 'c', max_count: 0, wait_ms: 100, ack: ['0-1'], redeliver_after_ms: 0,
    });
    expect(toInvokeRpc({ tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'get', input: Buffer.from([1]) })).toMatchObject({
      tenant: 't', flow_id: 'f', flow_type: 'o', rpc_name: 'get', sticky_worker_id: '',
    });
  });

  it('maps a decoded Outcome to camelCase with a string status and Buffer output', () => {
    const o = wire(pb.Outcome, {
      outcome_id: '3-1700000000000-0', task_id: 'tid', tenant: 't', flow_id: 'f', flow_type: 'o', step_type: 's',
      step_execution_id: 'e', status: pb.OutcomeStatus.FAILED, attempt: 2, app_worker_id: 'w',
      output: Buffer.from('out'), error: { message: 'bad', type: 'Boom', non_retryable: true, retry_after_ms: 50 },
      idempotency_key: 'k', finished_at_ms: 1_700_000_000_500, enqueued_at_ms: 1_700_000_000_000,
    }) as pb.Outcome;
    const out = fromOutcome(o);
    expect(out).toMatchObject({
      outcomeId: '3-1700000000000-0', taskId: 'tid', status: 'FAILED', attempt: 2, appWorkerId: 'w', idempotencyKey: 'k',
      error: { message: 'bad', type: 'Boom', nonRetryable: true, retryAfterMs: 50 },
    });
    expect(Buffer.isBuffer(out.output)).toBe(true);
    expect(out.output.toString()).toBe('out');
    expect(out.finishedAt).toEqual(new Date(1_700_000_000_500));
    for (const s of ['COMPLETED', 'CANCELLED', 'TIMED_OUT'] as const) {
      expect(fromOutcome({ status: pb.OutcomeStatus[s] }).status).toBe(s);
    }
    expect(() => fromOutcome({ status: 0 })).toThrow(/outcome status/);
  });

  it('maps TaskInfo (with its outcome) and QueueInfo', () => {
    const t = wire(pb.TaskInfo, {
      task_id: 'x', partition: 7, state: pb.TaskState.DONE, attempt: 1, ready_at_ms: 0, input: Buffer.from('i'),
      outcome: { task_id: 'x', status: pb.OutcomeStatus.COMPLETED },
    }) as pb.TaskInfo;
    const info = fromTaskInfo(t);
    expect(info).toMatchObject({ taskId: 'x', partition: 7, state: 'DONE', readyAt: undefined, lastError: undefined });
    expect(info.outcome?.status).toBe('COMPLETED');
    const q = fromQueueInfo(wire(pb.QueueInfo, { tenant: 't', ready: 3, delayed: 1, running: 2, oldest_ready_at_ms: 1000 }) as pb.QueueInfo);
    expect(q).toEqual({ tenant: 't', flowType: '', stepType: '', ready: 3, delayed: 1, running: 2, oldestReadyAt: new Date(1000) });
  });
});

describe('toFailure', () => {
  it('uses the StepFailure fields', () => {
    expect(toFailure(new StepFailure('card declined', { type: 'Declined', nonRetryable: true, retryAfterMs: 2500 }))).toEqual({
      message: 'card declined', type: 'Declined', non_retryable: true, retry_after_ms: 2500,
    });
  });

  it('falls back to the error name, and duck-types other errors', () => {
    expect(toFailure(new TypeError('x'))).toEqual({ message: 'x', type: 'TypeError', non_retryable: false, retry_after_ms: 0 });
    const e = Object.assign(new Error('y'), { type: 'Remote', nonRetryable: true, retryAfterMs: -5 });
    expect(toFailure(e)).toEqual({ message: 'y', type: 'Remote', non_retryable: true, retry_after_ms: 0 });
    expect(toFailure('plain')).toMatchObject({ message: 'plain', type: 'string' });
  });

  it('takes only nonRetryable: true as non-retryable, not a truthy string', () => {
    // nonRetryable: 'false' from a config or another library must not end the task for good.
    expect(toFailure(Object.assign(new Error('z'), { nonRetryable: 'false' })).non_retryable).toBe(false);
    expect(toFailure(Object.assign(new Error('z'), { nonRetryable: 1 })).non_retryable).toBe(false);
  });

  it('duck-types an Error of another realm and a thrown object with a message as errors', () => {
    const foreign = vm.runInNewContext("Object.assign(new TypeError('remote'), { nonRetryable: true })") as unknown;
    expect(foreign instanceof Error).toBe(false);
    expect(toFailure(foreign)).toEqual({ message: 'remote', type: 'TypeError', non_retryable: true, retry_after_ms: 0 });
    expect(toFailure({ message: 'card declined', type: 'Declined', nonRetryable: true, retryAfterMs: 100 })).toEqual({
      message: 'card declined', type: 'Declined', non_retryable: true, retry_after_ms: 100,
    });
    expect(toFailure({ message: 'bare' })).toEqual({ message: 'bare', type: 'Error', non_retryable: false, retry_after_ms: 0 });
    // a getter that throws makes it any other thrown value, never a throw
    const hostile = { message: 'm', get nonRetryable(): boolean { throw new Error('no'); } };
    expect(toFailure(hostile)).toMatchObject({ type: 'object' });
  });

  it('turns a thrown value String() cannot convert into a failure with a message, rather than throwing', () => {
    expect(toFailure(Object.create(null))).toEqual({ message: 'a thrown object that cannot be converted to a string', type: 'object' });
    expect(toFailure({ toString: () => { throw new Error('no text'); } })).toMatchObject({ type: 'object' });
    expect(toFailure(Object.assign(new Error(), { message: undefined }))).toMatchObject({ message: 'undefined', type: 'Error' });
  });

  it('keeps within the limits the node refuses past: long messages and types cut, the retry hint capped', () => {
    const f = toFailure(new StepFailure('m'.repeat(10_000), { type: 't'.repeat(300), retryAfterMs: 10 * FAILURE_LIMITS.retryAfterMs }));
    expect(f.message).toHaveLength(FAILURE_LIMITS.messageChars);
    expect(f.type).toHaveLength(FAILURE_LIMITS.typeChars);
    expect(f.retry_after_ms).toBe(FAILURE_LIMITS.retryAfterMs);
    expect(toFailure('s'.repeat(5000)).message).toHaveLength(FAILURE_LIMITS.messageChars);
  });
});
