/**
 * A worker that half-closes a stream is stopping (SDK stop()): it starts no new
 * tasks (DESIGN §5). Its other slots finish what they run, and are then offered
 * nothing: a queued Step waits for a worker that is not stopping, instead of
 * bouncing off the stopping one. A new stream of the same worker id says it was
 * not stopping after all, and its slots take work again.
 * One node, real gRPC and a real redis-server.
 */
import { pb } from '../../src/wire';
import { useSlotNode } from '../helpers/slot-node';
import { useEmbeddedRedis } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'stopping');

const slot = (over: Partial<pb.IRegister> = {}) => env.registeredSlot({ app_worker_id: 'w1', ...over });
const enqueue = (flow: string) =>
  env.t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });

/** Two slots of w1, each running a Step; then one of them half-closes (the worker stops). */
async function stoppingWorker(over: Partial<pb.IRegister> = {}) {
  const a = await slot(over);
  const b = await slot();
  await enqueue('run-a');
  const fa = (await a.nextOf('step_task')).step_task!;
  await enqueue('run-b');
  const fb = (await b.nextOf('step_task')).step_task!;
  b.send({ step_result: { task_token: fb.task_token, output: Buffer.from('x') } });
  await b.nextOf('result_ack');
  b.halfClose();
  await waitFor(() => env.t.node.gateway.streamCount === 1, { timeoutMs: 5000, description: "b's stream gone" });
  return { a, fa };
}

it.each([
  ['a task in the ack', { accepts_task_after_ack: true, accepts_task_in_ack: true }],
  ['a task after the ack', {}],
])('offers a stopping worker\'s freed slot no queued Step (%s)', async (_how, over) => {
  const { a, fa } = await stoppingWorker(over);
  const queued = await enqueue('waiting');
  await sleep(100);
  a.send({ step_result: { task_token: fa.task_token, output: Buffer.from('x') } });
  const ack = (await a.nextOf('result_ack')).result_ack!;
  expect(ack.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(ack.next_task).toBeFalsy();
  await expect(a.nextOf('step_task', 500)).rejects.toThrow();
  expect((await env.t.matching.getTask({ task_id: queued.task_id })).task!.attempt).toBe(1);

  // a worker that is not stopping takes it, on its first attempt
  const w2 = await env.registeredSlot({ app_worker_id: 'w2' });
  expect((await w2.nextOf('step_task')).step_task).toMatchObject({ task_id: queued.task_id, attempt: 1 });
});

it('lets a worker taken for stopping take work again when it opens a new stream', async () => {
  const { a, fa } = await stoppingWorker();
  a.send({ step_result: { task_token: fa.task_token, output: Buffer.from('x') } });
  await a.nextOf('result_ack');
  await slot(); // w1 again: it was not stopping
  // its old slot is offered work again, as the new one is
  const tasks = [await enqueue('again-1'), await enqueue('again-2')].map((r) => r.task_id);
  expect((await a.nextOf('step_task', 3000)).step_task!.task_id).toMatch(new RegExp(`^(${tasks.join('|')})$`));
});

it('clears the sticky entry naming a stopping worker when it completes a Step of the flow, and sets none', async () => {
  // Guards DESIGN §4 "a draining worker's sticky entries are cleared": its last completions
  // wrote the flow's entry for a worker that was leaving.
  const { a, fa } = await stoppingWorker();
  const tag = env.t.node.keys.tag(Number(fa.task_id!.split('-')[0]));
  const runA = `${tag}sticky:acme:run-a`;
  await redis.command('SET', runA, 'w1'); // an earlier Step of the flow ran on w1
  a.send({ step_result: { task_token: fa.task_token, output: Buffer.from('x') } });
  expect((await a.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(await redis.command('GET', runA)).toBeNull();
  // run-b's Step completed before w1 began to stop: its entry stays
  const fbTag = await redis.command('KEYS', `${env.t.config.redis.keyPrefix}*sticky:acme:run-b`);
  expect(fbTag).toHaveLength(1);
});

it('leaves a flow\'s sticky entry naming another worker when a stopping worker completes its Step', async () => {
  const { a, fa } = await stoppingWorker();
  const runA = `${env.t.node.keys.tag(Number(fa.task_id!.split('-')[0]))}sticky:acme:run-a`;
  await redis.command('SET', runA, 'w2');
  a.send({ step_result: { task_token: fa.task_token, output: Buffer.from('x') } });
  await a.nextOf('result_ack');
  expect(await redis.command('GET', runA)).toBe('w2');
});

it('does not take a worker that half-closes a stream on a draining node for stopping: its completions keep setting sticky entries', async () => {
  // A half-close while the node drains is a worker moving to another node (it was told to
  // reconnect), not one stopping: its flows stay with it.
  const a = await slot();
  const b = await slot();
  await enqueue('run-a');
  const fa = (await a.nextOf('step_task')).step_task!;
  await enqueue('run-b');
  await b.nextOf('step_task');
  env.t.node.gateway.startDrain();
  await a.nextOf('reconnect');
  b.halfClose(); // its Step goes back unconsumed
  await waitFor(() => env.t.node.gateway.streamCount === 1, { timeoutMs: 5000, description: "b's stream gone" });
  const runA = `${env.t.node.keys.tag(Number(fa.task_id!.split('-')[0]))}sticky:acme:run-a`;
  a.send({ step_result: { task_token: fa.task_token, output: Buffer.from('x') } });
  expect((await a.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(await redis.command('GET', runA)).toBe('w1');
});

it('refuses a decline without a reason, naming the field, and keeps the task on the slot', async () => {
  // Guards Decline.reason: 0 was read as UNKNOWN_TYPE, the task went back and the type was
  // no longer offered to this worker, on a frame that said neither.
  const a = await slot();
  await enqueue('no-reason');
  const task = (await a.nextOf('step_task')).step_task!;
  a.send({ decline: { task_token: task.task_token, reason: pb.DeclineReason.DECLINE_REASON_UNSPECIFIED } });
  const ack = (await a.nextOf('result_ack')).result_ack!;
  expect(ack).toMatchObject({ task_token: task.task_token, verdict: pb.ResultVerdict.REFUSED_INVALID });
  expect(ack.error).toMatch(/^decline\.reason: must be UNKNOWN_TYPE or NO_CAPACITY/);
  expect((await env.t.matching.getTask({ task_id: task.task_id })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });
  // the task is still the slot's: its result is taken
  a.send({ step_result: { task_token: task.task_token, output: Buffer.from('x') } });
  expect((await a.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
});

it('offers nothing to the idle slots a worker still has open once it half-closed one stream', async () => {
  // SDK stop() half-closes every idle stream, but not in one frame: a slot still open
  // after its sibling's half-close belongs to a worker that starts no new tasks.
  const a = await slot();
  const b = await slot();
  b.halfClose();
  await waitFor(() => env.t.node.gateway.streamCount === 1, { timeoutMs: 5000, description: "b's stream gone" });
  const queued = await enqueue('after-half-close');
  await expect(a.nextOf('step_task', 300)).rejects.toThrow();
  expect((await env.t.matching.getTask({ task_id: queued.task_id })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
  const w2 = await env.registeredSlot({ app_worker_id: 'w2' });
  expect((await w2.nextOf('step_task')).step_task).toMatchObject({ task_id: queued.task_id, attempt: 1 });
});
