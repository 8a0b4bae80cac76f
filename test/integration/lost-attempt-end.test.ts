/**
 * An attempt whose end Redis lost (DESIGN §11.3: every task gets exactly one
 * outcome). A completion Redis acknowledged can be gone after a failover to a
 * replica it had not reached, or a restart from an older snapshot: the task is
 * back to running in a slot of a node that lives on and has long freed that
 * slot. Owners fail only the attempts of node instances that are gone, and a
 * Step without a method or heartbeat timeout has no deadline: it ran for ever,
 * with no outcome, and its flow waited on it. The node's attempt audit fails
 * such an attempt as worker lost once two passes found no slot holding it; an
 * attempt a slot does hold is left alone. Redis's loss of the completion is
 * played here by putting back what the completion script changed. The same
 * pass sends Cancel to a slot whose attempt ended without it (a cancel or an
 * expiry whose one-way Cancel to this node was lost on its way).
 */
import { pb } from '../../src/wire';
import { partitionOfTaskId } from '../../src/store/keys';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { keepRunningAttempt } from '../helpers/lost-completion';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const step = (flow: string) => ({
  tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 3, initial_interval_ms: 10 },
});

/** The outcomes of the group "engine" for `taskId`, read until none come for a while. */
async function outcomesOf(taskId: string): Promise<pb.IOutcome[]> {
  const all: pb.IOutcome[] = [];
  for (;;) {
    const got = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 100, wait_ms: 300 })).outcomes;
    if (got.length === 0) return all.filter((o) => o.task_id === taskId);
    all.push(...got);
  }
}

it('fails as worker lost an attempt Redis holds as running here that no slot holds, and its retry ends it with one outcome', async () => {
  t = await startTestNode(redis.url, uniquePrefix('lost-end'));
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 1 }); // the group, before any outcome
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: step('f') });
  const task = (await s.nextOf('step_task')).step_task!;
  // What Redis holds of the running attempt, as a replica that did not get the completion would.
  const kept = await keepRunningAttempt(t, taskId!);

  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('first') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  // Redis loses the completion: the task runs again as attempt 1 in the slot, which is idle.
  await kept.loseCompletion();
  expect((await t.matching.getTask({ task_id: taskId })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });

  // Found once: not yet (a start or a result may be on its way); found again: failed, and retried.
  expect(await t.node.attemptAudit.runOnce()).toBe(0);
  expect(await t.node.attemptAudit.runOnce()).toBe(1);
  const retry = (await s.nextOf('step_task', 3000)).step_task!;
  expect(retry).toMatchObject({ task_id: taskId, attempt: 2 });
  s.send({ step_result: { task_token: retry.task_token, output: Buffer.from('second') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);

  const outcomes = await outcomesOf(taskId!);
  expect(outcomes).toHaveLength(1);
  expect(outcomes[0]).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 2 });
  s.reset();
});

it('leaves alone an attempt a slot holds, however many passes find it', async () => {
  t = await startTestNode(redis.url, uniquePrefix('held'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: step('h') });
  const task = (await s.nextOf('step_task')).step_task!;
  expect(await t.node.attemptAudit.runOnce()).toBe(0);
  expect(await t.node.attemptAudit.runOnce()).toBe(0);
  expect(await t.node.attemptAudit.runOnce()).toBe(0);
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await t.matching.waitOutcome({ task_id: taskId, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  s.reset();
});

it('fails an attempt Redis holds as running on a node instance that is gone, with no change of members to set off the sweep', async () => {
  t = await startTestNode(redis.url, uniquePrefix('gone-end'));
  // Queued first: no worker is connected yet.
  const { task_id: taskId } = await t.matching.enqueueStep({ step: step('g') });
  const p = partitionOfTaskId(taskId!, t.config.cluster.partitions)!;
  const r = t.node.redis;
  const k = t.node.keys;
  // Redis goes back to a state in which the Step ran on a node that died since (a restart from
  // an older snapshot): that node's death was seen, and swept, before.
  const queue = (await r.hget(k.task(p, taskId!), 'queue'))!;
  await r.zrem(k.queue(p, queue), taskId!);
  await r.hset(k.task(p, taskId!), 'state', 'running', 'worker', 'w0', 'nonce', 'gone-1', 'run', `gone/1\x1egone-node\x1eb0\x1e${Date.now()}`);
  await r.zadd(k.inflight(p), '9007199254740991', taskId!);

  await t.node.attemptAudit.runOnce();
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const retry = (await s.nextOf('step_task', 3000)).step_task!;
  expect(retry).toMatchObject({ task_id: taskId, attempt: 2 });
  s.send({ step_result: { task_token: retry.task_token, output: Buffer.from('done') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  s.reset();
});

it('leaves alone an attempt whose result the node is still retrying while Redis refuses it', async () => {
  t = await startTestNode(redis.url, uniquePrefix('retrying'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: step('r') });
  const task = (await s.nextOf('step_task')).step_task!;
  // The completion meets a Redis error until `down` is cleared: the node retries it in the background.
  const store = t.node.store as unknown as { complete: (...a: unknown[]) => Promise<unknown> };
  const real = store.complete.bind(store);
  let down = true;
  let calls = 0;
  store.complete = (...args: unknown[]) => (calls++, down ? Promise.reject(new Error('Connection is closed.')) : real(...args));
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('kept') } });
  await waitFor(() => calls >= 1, { description: 'the completion tried' });
  expect(await t.node.attemptAudit.runOnce()).toBe(0);
  expect(await t.node.attemptAudit.runOnce()).toBe(0);
  down = false;
  const outcome = (await t.matching.waitOutcome({ task_id: taskId, wait_ms: 10_000 })).outcome;
  expect(outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  expect(Buffer.from(outcome!.output!).toString()).toBe('kept');
  s.reset();
});

it('sends Cancel to a slot whose attempt was cancelled when the Cancel did not reach it', async () => {
  t = await startTestNode(redis.url, uniquePrefix('lost-cancel'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const { task_id: taskId } = await t.matching.enqueueStep({ step: step('c') });
  const task = (await s.nextOf('step_task')).step_task!;
  // The flow is cancelled, and the Cancel for this slot is lost on its way (the store's call alone).
  const p = partitionOfTaskId(taskId!, t.config.cluster.partitions)!;
  expect((await t.node.store.cancelFlow(p, 'acme', 'c', 'stop', Date.now())).running).toHaveLength(1);
  await expect(s.nextOf('cancel', 300)).rejects.toThrow(/no frame/);

  await t.node.attemptAudit.runOnce();
  expect((await s.nextOf('cancel', 2000)).cancel).toMatchObject({ task_token: task.task_token });
  // once: a later pass sends no second one
  await t.node.attemptAudit.runOnce();
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('late') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.REFUSED_CANCELLED);
  s.reset();
});
