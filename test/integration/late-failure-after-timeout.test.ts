/**
 * A worker's failure for an attempt that its owner has already ended (a method
 * or heartbeat timeout, the node taken for lost): the attempt is no longer the
 * slot's, so the failure is refused as stale and changes nothing (DESIGN §6;
 * worker.proto REFUSED_STALE "timed out, reassigned, unknown"). Only the very
 * call run again answers as the first did.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'latefail');

const slot = () => env.registeredSlot();

function step(over: Partial<pb.IStepSpec> = {}): pb.IStepSpec {
  return {
    tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in'),
    heartbeat_timeout_ms: 200, ...over,
  };
}

it('refuses as stale a failure sent after a heartbeat timeout scheduled the retry, and keeps the timeout\'s record', async () => {
  const s = await slot();
  // A long backoff: the retry is still queued when the late failure arrives.
  const r = await env.t.matching.enqueueStep({ step: step({ retry_policy: { max_attempts: 3, initial_interval_ms: 60_000 } }) });
  const task = (await s.nextOf('step_task')).step_task!;
  expect(task.attempt).toBe(1);
  // No heartbeat: the owner fails the attempt and tells the slot.
  expect((await s.nextOf('cancel', 3000)).cancel!.task_token).toBe(task.task_token);
  expect((await env.t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 2 });

  s.send({ step_result: { task_token: task.task_token, failure: { message: 'late boom', type: 'Late', retry_after_ms: 10 } } });
  const ack = (await s.nextOf('result_ack')).result_ack!;
  expect(ack.verdict).toBe(pb.ResultVerdict.REFUSED_STALE);
  expect(ack.retry_scheduled).toBe(false);
  const after = (await env.t.matching.getTask({ task_id: r.task_id })).task!;
  expect(after).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 2 });
  expect(after.last_error!.message).toBe('attempt timed out');
});

it('refuses as stale a failure sent after a heartbeat timeout ended the task, and keeps the one FAILED outcome', async () => {
  const s = await slot();
  const r = await env.t.matching.enqueueStep({ step: step({ retry_policy: { max_attempts: 1 } }) });
  const task = (await s.nextOf('step_task')).step_task!;
  expect((await s.nextOf('cancel', 3000)).cancel!.task_token).toBe(task.task_token);
  const o = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1 });

  s.send({ step_result: { task_token: task.task_token, failure: { message: 'late boom', type: 'Late' } } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.REFUSED_STALE);
  const again = (await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 500 })).outcome!;
  expect(again.outcome_id).toBe(o.outcome_id);
  expect(again.error).toMatchObject({ message: 'attempt timed out', type: 'timeout' });
});

describe('failTask', () => {
  const fx = useTaskStore(redis, 'latefail-store');
  const newTask = taskBuilder();
  const LEASE = 'n0:1';
  const lost = { message: 'worker lost: node n1 is gone', type: 'worker_lost', nonRetryable: false, retryAfterMs: 0 };
  const late = { message: 'late boom', type: 'Late', nonRetryable: false, retryAfterMs: 0 };

  it('answers an owner\'s call run again as the first, and the slot\'s failure of that attempt as stale', async () => {
    const now = Date.now();
    for (const maxAttempts of [3, 1]) {
      const t = newTask({ maxAttempts });
      await fx.store.enqueue(t, now);
      await fx.store.start(t.partition, t.taskId, 1, testSlot, 'nonce-1', now);
      await fx.client.set(fx.keys.lease(t.partition), LEASE);
      const a = { partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' };
      const condition = { kind: 'node-lost', node: 'n1', boot: 'b1' } as const;
      const first = await fx.store.fail(a, lost, now, LEASE, condition);
      expect(first.kind).toBe(maxAttempts > 1 ? 'retry' : 'terminal');
      expect(await fx.store.fail(a, lost, now + 5, LEASE, condition)).toEqual(first);
      // The slot (it was not lost after all) sends its own failure of attempt 1.
      expect(await fx.store.fail(a, late, now + 10)).toEqual(maxAttempts > 1 ? { kind: 'stale' } : { kind: 'ended', status: 'FAILED' });
    }
  });
});
