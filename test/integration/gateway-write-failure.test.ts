/**
 * Claimed-but-never-delivered must not happen: when the stream of the bound
 * slot can no longer be written, the started task goes back at once with the
 * same attempt (DESIGN §4), and the node limit on streams is enforced.
 */
import { Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('wf'), { 'matching.maxStreams': 2 });
});
afterEach(() => t.close());

it('returns a task unconsumed when the write to the worker stream fails', async () => {
  const g = t.node.gateway;
  // A slot whose outgoing stream is already gone, as when the connection drops between bind and write.
  const slot = g.register({ tenant: 'acme', appWorkerId: 'ghost', flowTypes: ['order'], kind: 'STEP_AND_RPC', taskLimit: 1, sdk: 'test', acceptsTaskAfterAck: false, acceptsTaskInAck: false });
  slot.out.close();
  const before = await t.node.metrics.registry.getSingleMetric('dexzd_matching_returned_attempts_total')!.get();
  const writeFailedBefore = before.values.find((v) => v.labels.reason === 'write_failed')?.value ?? 0;

  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  const after = await waitForMetric(() => t.node.metrics.registry.getSingleMetric('dexzd_matching_returned_attempts_total')!.get(), writeFailedBefore);
  expect(after).toBe(writeFailedBefore + 1);
  const task = (await t.matching.getTask({ task_id: r.task_id })).task!;
  expect(task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
  await g.unregister(slot, true);

  // A real worker then gets the same attempt.
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  expect((await s.nextOf('step_task')).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  s.reset();
});

it('returns a task unconsumed when the write fails on the owner\'s offer path too, and re-offers it', async () => {
  // Guards the offer path (gateway.offer → start → write): the Step is queued before any slot exists,
  // so it reaches the dead slot through the owner's placement, not through the start at enqueue.
  const g = t.node.gateway;
  const writeFailed = async () => (await t.node.metrics.registry.getSingleMetric('dexzd_matching_returned_attempts_total')!.get())
    .values.find((v) => v.labels.reason === 'write_failed')?.value ?? 0;
  const before = await writeFailed();
  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f2', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  expect((await t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });

  // A fetch of the topic hears of it too: the task is back in its queue.
  const abort = new AbortController();
  const bell = t.node.fetchBell.subscribe(['acme:order:s'], abort.signal);
  const slot = g.register({ tenant: 'acme', appWorkerId: 'ghost', flowTypes: ['order'], kind: 'STEP_AND_RPC', taskLimit: 1, sdk: 'test', acceptsTaskAfterAck: false, acceptsTaskInAck: false });
  slot.out.close();
  expect(await waitForMetric(() => t.node.metrics.registry.getSingleMetric('dexzd_matching_returned_attempts_total')!.get(), before)).toBeGreaterThan(before);
  expect(await bell.wait(1000)).toBe(true);
  bell.close();
  expect((await t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
  // Its offer was answered no-slot, so the owner kept the head to offer again.
  const noSlot = (await t.node.metrics.registry.getSingleMetric('dexzd_matching_offers_total')!.get()).values
    .find((v) => v.labels.result === 'no-slot')?.value ?? 0;
  expect(noSlot).toBeGreaterThanOrEqual(1);
  // The dead slot takes no more offers: the count settles instead of climbing with every re-offer.
  const settled = await writeFailed();
  await new Promise((res) => setTimeout(res, 200));
  expect(await writeFailed()).toBe(settled);
  await g.unregister(slot, true);

  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  expect((await s.nextOf('step_task')).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  s.reset();
});

it('refuses registrations past matching.maxStreams with RESOURCE_EXHAUSTED', async () => {
  const a = openSlot(t.worker, registerFrame({ app_worker_id: 'a' }));
  const b = openSlot(t.worker, registerFrame({ app_worker_id: 'b' }));
  await a.nextOf('registered');
  await b.nextOf('registered');
  const c = openSlot(t.worker, registerFrame({ app_worker_id: 'c' }));
  // Refused, the stream's first answer is its error; let in past the bound, it would be `registered`.
  const err = (await c.next(5000).then((f) => (c.reset(), new Error(`let in: ${String(f.frame)}`)), (e: unknown) => e)) as Error & { code?: Status };
  expect(err.code).toBe(Status.RESOURCE_EXHAUSTED);
  expect(err.message).toContain('matching.maxStreams');
  a.reset();
  b.reset();
});

async function waitForMetric(read: () => Promise<{ values: { labels: Record<string, unknown>; value: number }[] }>, from: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const m = await read();
    const v = m.values.find((x) => x.labels.reason === 'write_failed')?.value ?? 0;
    if (v > from) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  return from;
}
