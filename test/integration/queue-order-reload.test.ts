/**
 * A durable queue longer than the owner's heads window keeps its readyAt order
 * (DESIGN §4, phase 3: FIFO by readyAt) when a node loads it from Redis: a node
 * that takes over the partition reads the oldest entries first, so the Steps
 * that waited longest are offered first and are not left behind a window of
 * newer ones; and a Step that reaches the heads late (its sticky wait ended)
 * takes its readyAt place, ahead of Steps enqueued after it. A real node on a
 * real Redis (stopped and started again on the same keys), and a raw worker
 * slot that takes the Steps one at a time.
 */
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { HEADS_WINDOW } from '../../src/owner/heads';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const LATER = HEADS_WINDOW + 60; // more than one window of Steps behind the oldest

it('offers the oldest Step of a queue longer than the heads window first after the partition loads again', async () => {
  const prefix = uniquePrefix('order');
  const overrides = { 'cluster.partitions': 1, 'matching.syncMatchWait': '10ms' };
  t = await startTestNode(redis.url, prefix, overrides);
  const step = (i: number) => ({ tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: 'pack', step_execution_id: 's' });
  const [oldest] = (await t.matching.enqueueSteps({ steps: [step(0)] })).results;
  // a later readyAt for every other Step: the oldest is the one head whose place is certain
  await new Promise((r) => setTimeout(r, 5));
  for (let i = 1; i <= LATER; i += 100) {
    await t.matching.enqueueSteps({ steps: Array.from({ length: Math.min(100, LATER + 1 - i) }, (_, j) => step(i + j)) });
  }
  await t.close();

  // A node that owns the partition anew loads its heads from the queue in Redis.
  t = await startTestNode(redis.url, prefix, overrides);
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const enqueuedAt: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i <= LATER; i++) {
    const task = (await s.nextOf('step_task', 5000)).step_task!;
    ids.push(task.task_id!);
    enqueuedAt.push(Number(task.enqueued_at_ms));
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
  }
  expect(ids[0]).toBe(oldest!.task_id);
  // one slot, one partition: every Step after it in readyAt order too
  expect(enqueuedAt).toEqual([...enqueuedAt].sort((a, b) => a - b));
  expect(new Set(ids).size).toBe(LATER + 1);
  s.reset();
});

it('puts a Step whose sticky wait ended back in front of the Steps enqueued after it', async () => {
  t = await startTestNode(redis.url, uniquePrefix('order'), {
    'cluster.partitions': 1, 'matching.syncMatchWait': '10ms', 'matching.stickyWait': '300ms',
  });
  const step = (flow: string, sticky = '') => ({
    tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's', sticky_worker_id: sticky,
  });
  // The one slot of w1 takes a first Step and keeps it: w1 is connected but busy.
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  await t.matching.enqueueStep({ step: step('busy') });
  const held = (await s.nextOf('step_task', 5000)).step_task!;
  // A waits for w1, its sticky worker; B, enqueued after it, goes to the heads first.
  const { task_id: a } = await t.matching.enqueueStep({ step: step('a', 'w1') });
  await new Promise((r) => setTimeout(r, 5));
  const { task_id: b } = await t.matching.enqueueStep({ step: step('b') });
  await new Promise((r) => setTimeout(r, 600)); // past A's sticky wait: both are heads of the durable queue

  const order: string[] = [];
  let token = held.task_token;
  for (let i = 0; i < 2; i++) {
    s.send({ step_result: { task_token: token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
    const task = (await s.nextOf('step_task', 5000)).step_task!;
    order.push(task.task_id!);
    token = task.task_token;
  }
  expect(order).toEqual([a, b]);
  s.reset();
});
