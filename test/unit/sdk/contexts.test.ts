/**
 * The handler contexts: every field from the task frame, the signal read from
 * the task only when a handler asks for it, and nothing of the task exposed.
 */
import { pb } from '../../../src/wire';
import { RpcTaskContext, StepTaskContext } from '../../../src/sdk/worker/contexts';

/** A task whose signal counts how often it was asked for. */
function countingTask() {
  const controller = new AbortController();
  const task = {
    reads: 0,
    get signal() {
      task.reads++;
      return controller.signal;
    },
  };
  return task;
}

describe('StepTaskContext', () => {
  const frame = pb.StepTask.create({
    task_token: 'tok', task_id: '3-abc', tenant: 'acme', flow_id: 'order-1', flow_type: 'order', step_type: 'charge',
    step_execution_id: 'charge#1', attempt: 2, input: Buffer.from('{"a":1}'), enqueued_at_ms: 1_700_000_000_000,
    started_at_ms: 1_700_000_000_250, method_timeout_ms: 30_000, heartbeat_timeout_ms: 5_000, flow_deadline_ms: 0,
  });

  test('carries every field of the StepTask', () => {
    const heartbeat = jest.fn();
    const ctx = new StepTaskContext(frame, countingTask(), heartbeat);
    expect({ ...ctx, input: ctx.input.toString() }).toEqual({
      taskId: '3-abc', tenant: 'acme', flowId: 'order-1', flowType: 'order', stepType: 'charge', stepExecutionId: 'charge#1',
      attempt: 2, input: '{"a":1}', enqueuedAt: new Date(1_700_000_000_000), startedAt: new Date(1_700_000_000_250),
      methodTimeoutMs: 30_000, heartbeatTimeoutMs: 5_000, flowDeadline: undefined, heartbeat,
    });
    ctx.heartbeat('progress');
    expect(heartbeat).toHaveBeenCalledWith('progress');
  });

  test('reads the signal from its task only when asked, and each time', () => {
    const task = countingTask();
    const ctx = new StepTaskContext(frame, task, () => undefined);
    expect(task.reads).toBe(0);
    expect(ctx.signal.aborted).toBe(false);
    expect(ctx.signal).toBe(ctx.signal);
    expect(task.reads).toBe(3);
  });

  test('an input the frame lacks is an empty Buffer', () => {
    const ctx = new StepTaskContext(pb.StepTask.create({ task_id: 'x' }), countingTask(), () => undefined);
    expect(Buffer.isBuffer(ctx.input)).toBe(true);
    expect(ctx.input.length).toBe(0);
    expect(ctx.enqueuedAt).toBeUndefined();
  });
});

describe('RpcTaskContext', () => {
  test('carries every field of the RpcTask and reads the signal lazily', () => {
    const task = countingTask();
    const heartbeat = jest.fn();
    const ctx = new RpcTaskContext(pb.RpcTask.create({
      task_token: 'tok', tenant: 'acme', flow_id: 'order-1', flow_type: 'order', rpc_name: 'quote', input: Buffer.from('q'),
      deadline_ms: 1_700_000_001_000,
    }), task, heartbeat);
    expect({ ...ctx, input: ctx.input.toString() }).toEqual({
      tenant: 'acme', flowId: 'order-1', flowType: 'order', rpcName: 'quote', input: 'q', deadline: new Date(1_700_000_001_000), heartbeat,
    });
    expect(task.reads).toBe(0);
    expect(ctx.signal.aborted).toBe(false);
    expect(task.reads).toBe(1);
  });
});
