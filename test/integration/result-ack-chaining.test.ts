/**
 * A worker that registers with accepts_task_after_ack gets its slot back when
 * its result arrives: the next task's start goes to Redis with the completion,
 * and the task frame waits behind the ack. The ack always comes first, a task
 * held behind an ack that the worker never saw returns unconsumed, and the
 * SDK (which registers that way) never declines a task that arrives right
 * behind an ack. Workers without the flag keep the old order.
 */
import { Client, Worker } from '../../src';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('chain'));
});
afterEach(() => t.close());

const step = (seid: string) => ({ tenant: 'acme', flow_id: `f-${seid}`, flow_type: 'order', step_type: 's', step_execution_id: seid });

async function returned(reason: string): Promise<number> {
  const m = await t.node.metrics.registry.getSingleMetric('dexzd_matching_returned_attempts_total')!.get();
  return m.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

for (const accepts of [true, false]) {
  it(`writes each ack before the next task (accepts_task_after_ack: ${accepts})`, async () => {
    const s = openSlot(t.worker, registerFrame({ accepts_task_after_ack: accepts }));
    await s.nextOf('registered');
    // a backlog, so that every result frees the slot for the next Step at once
    await t.matching.enqueueSteps({ steps: Array.from({ length: 30 }, (_, i) => step(`b${i}`)) });
    let task = (await s.nextOf('step_task')).step_task!;
    const seen = new Set<string>([task.task_id!]);
    for (let i = 1; i < 30; i++) {
      s.send({ step_result: { task_token: task.task_token, output: Buffer.from(`out-${i}`) } });
      const ack = (await s.nextOf('result_ack')).result_ack!; // throws if a step_task comes first
      expect(ack).toMatchObject({ task_token: task.task_token, verdict: pb.ResultVerdict.ACCEPTED });
      task = (await s.nextOf('step_task')).step_task!;
      seen.add(task.task_id!);
    }
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('last') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    expect(seen.size).toBe(30);
    s.reset();
  });
}

it('holds a task behind an unwritten ack, writes it after the ack, and returns it unconsumed if the stream ends first', async () => {
  const g = t.node.gateway;
  const reg = { tenant: 'acme', appWorkerId: 'held', flowTypes: ['order'], kind: 'STEP_AND_RPC' as const, taskLimit: 1, sdk: 'test', acceptsTaskAfterAck: true, acceptsTaskInAck: false };
  // a result came in on this slot and its ack is not written yet
  const slot = g.register(reg);
  const frames = slot.out[Symbol.asyncIterator]();
  expect((await frames.next()).value.registered).toBeTruthy();
  slot.awaitAck();
  const a = await t.matching.enqueueStep({ step: step('held-a') });
  await new Promise((r) => setTimeout(r, 100));
  expect(slot.holdsTask).toBe(true); // started in Redis, not written
  slot.send({ result_ack: { task_token: 'previous', verdict: pb.ResultVerdict.ACCEPTED } }, Date.now());
  slot.ackWritten();
  expect((await frames.next()).value.result_ack).toMatchObject({ task_token: 'previous' });
  expect((await frames.next()).value.step_task).toMatchObject({ task_id: a.task_id, attempt: 1 });
  expect(slot.holdsTask).toBe(false);
  await g.unregister(slot, true);

  // the stream ends while a task waits behind the ack: the worker never saw it
  const other = g.register({ ...reg, appWorkerId: 'held2' });
  other.awaitAck();
  const before = await returned('write_failed');
  const b = await t.matching.enqueueStep({ step: step('held-b') });
  await new Promise((r) => setTimeout(r, 100));
  expect(other.holdsTask).toBe(true);
  await g.unregister(other, false); // a reset, which fails a task the worker had
  expect(await returned('write_failed')).toBe(before + 1);
  expect((await t.matching.getTask({ task_id: b.task_id })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
});

it('sends an RPC held behind an unwritten ack to another slot when the stream resets: the worker never saw it', async () => {
  const g = t.node.gateway;
  const reg = { tenant: 'acme', appWorkerId: 'held-rpc', flowTypes: ['order'], kind: 'STEP_AND_RPC' as const, taskLimit: 1, sdk: 'test', acceptsTaskAfterAck: true, acceptsTaskInAck: false };
  const slot = g.register(reg);
  const frames = slot.out[Symbol.asyncIterator]();
  expect((await frames.next()).value.registered).toBeTruthy();
  slot.awaitAck(); // a result came in and its ack is not written yet
  const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'held-rpc', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 5000 });
  await waitFor(() => slot.holdsTask, { description: 'the rpc task held behind the ack' });
  // A second slot of the same worker, idle, then the first stream resets.
  const other = openSlot(t.worker, registerFrame({ app_worker_id: 'held-rpc-2' }));
  await other.nextOf('registered');
  await g.unregister(slot, false);
  const task = (await other.nextOf('rpc_task')).rpc_task!;
  other.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('ran elsewhere') } });
  expect(Buffer.from((await call).output!).toString()).toBe('ran elsewhere');
  other.reset();
});

it('the SDK takes a task that arrives right behind an ack: no declines, every Step runs once', async () => {
  const errors: string[] = [];
  const ran = new Map<string, number>();
  const worker = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 4, reservedRpcTasks: 0,
    logger: { debug() {}, info() {}, warn(m: string) { errors.push(m); }, error(m: string) { errors.push(m); } },
    flowTypes: { order: { steps: { s: async (ctx) => { ran.set(ctx.taskId, (ran.get(ctx.taskId) ?? 0) + 1); return 'ok'; } } } },
  });
  const running = worker.start();
  await worker.waitPullRegistered();
  const client = new Client({ address: t.node.apiAddress });
  try {
    const rs = await client.enqueueSteps(Array.from({ length: 400 }, (_, i) => ({ tenant: 'acme', flowId: `sdk-${i}`, flowType: 'order', stepType: 's', stepExecutionId: 'x' })));
    for (const r of rs) expect((await client.waitOutcome(r.taskId, { waitMs: 10_000 }))?.status).toBe('COMPLETED');
    expect(ran.size).toBe(400);
    expect([...ran.values()].every((n) => n === 1)).toBe(true);
    expect(await returned('legacy_no_capacity')).toBe(0);
    expect(errors).toEqual([]);
  } finally {
    client.close();
    await worker.stop();
    await running;
  }
});
