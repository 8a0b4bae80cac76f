/**
 * CancelFlow that lands while a start is on its way: Redis has the attempt
 * running in a slot, but the node has not yet written the task to that slot's
 * stream. The running attempt still gets its Cancel, right behind its task
 * frame (DESIGN §6: "running ones get Cancel on their stream"; worker.proto:
 * a Cancel always follows the task frame it names).
 */
import { pb } from '../../src/wire';
import type { TaskStore } from '../../src/store/task-store';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'cstart');

function step(over: Partial<pb.IStepSpec> = {}): pb.IStepSpec {
  return { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in'), ...over };
}

/** Holds the reply of the node's next start (the start itself commits in Redis) until `release` is called. */
function holdNextStart(): { committed: Promise<void>; release: () => void } {
  const store = env.t.node.store as TaskStore & { start: TaskStore['start'] };
  const orig = store.start.bind(store);
  let committed!: () => void;
  let release!: () => void;
  const c = new Promise<void>((r) => (committed = r));
  const gate = new Promise<void>((r) => (release = r));
  store.start = async (...args: Parameters<TaskStore['start']>) => {
    store.start = orig;
    const r = await orig(...args);
    committed();
    await gate;
    return r;
  };
  return { committed: c, release };
}

it('sends Cancel behind the task frame of a start that committed before the cancel and was written after it', async () => {
  const r = await env.t.matching.enqueueStep({ step: step() });
  const held = holdNextStart();
  const s = env.slot();
  await s.nextOf('registered');
  await held.committed;
  expect((await env.t.matching.getTask({ task_id: r.task_id })).task!.state).toBe(pb.TaskState.RUNNING);

  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1', reason: 'user asked' })).toMatchObject({ cancelled_running: 1 });
  held.release();
  const task = (await s.nextOf('step_task')).step_task!;
  expect(task.task_id).toBe(r.task_id);
  const cancel = (await s.nextOf('cancel', 2000)).cancel!;
  expect(cancel).toMatchObject({ task_token: task.task_token, reason: 'user asked' });

  // Its late result is refused, never recorded, and the slot takes work again.
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('late') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.REFUSED_CANCELLED);
  expect((await env.t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 1000 })).outcome!.status).toBe(pb.OutcomeStatus.CANCELLED);
  const next = await env.t.matching.enqueueStep({ step: step({ flow_id: 'f2' }) });
  const nextTask = (await s.nextOf('step_task')).step_task!;
  expect(nextTask.task_id).toBe(next.task_id);
  // A cancel meant for the earlier attempt does not follow this one.
  await expect(s.nextOf('cancel', 300)).rejects.toThrow(/no frame/);
});

it('sends Cancel behind the task of a start on a slot freed early, though the attempt before it there was cancelled later', async () => {
  const s = await env.registeredSlot({ accepts_task_after_ack: true });
  const first = await env.t.matching.enqueueStep({ step: step({ flow_id: 'fA' }) });
  const a = (await s.nextOf('step_task')).step_task!;
  const second = await env.t.matching.enqueueStep({ step: step({ flow_id: 'fB', step_execution_id: 's2' }) });
  // The slot is free as A's result arrives: B's start commits there while A's completion waits.
  const held = holdNextStart();
  const store = env.t.node.store as TaskStore & { complete: TaskStore['complete'] };
  const complete = store.complete.bind(store);
  let completeNow!: () => void;
  const completion = new Promise<void>((r) => (completeNow = r));
  store.complete = async (...args: Parameters<TaskStore['complete']>) => {
    store.complete = complete;
    await completion;
    return complete(...args);
  };
  s.send({ step_result: { task_token: a.task_token, output: Buffer.from('out') } });
  await held.committed;
  expect((await env.t.matching.getTask({ task_id: second.task_id })).task!.state).toBe(pb.TaskState.RUNNING);

  // B's flow is cancelled first, then A's, whose attempt still runs in Redis on the same slot.
  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'fB', reason: 'B cancelled' })).toMatchObject({ cancelled_running: 1 });
  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'fA', reason: 'A cancelled' })).toMatchObject({ cancelled_running: 1 });
  held.release();
  completeNow();

  const ack = (await s.nextOf('result_ack')).result_ack!;
  expect(ack).toMatchObject({ task_token: a.task_token, verdict: pb.ResultVerdict.REFUSED_CANCELLED });
  const b = (await s.nextOf('step_task')).step_task!;
  expect(b.task_id).toBe(second.task_id);
  expect((await s.nextOf('cancel', 2000)).cancel).toMatchObject({ task_token: b.task_token, reason: 'B cancelled' });
  expect((await env.t.matching.waitOutcome({ task_id: first.task_id, wait_ms: 1000 })).outcome!.status).toBe(pb.OutcomeStatus.CANCELLED);
});
