/**
 * A queued Step whose flow deadline passes before a slot takes it ends TIMED_OUT
 * (DESIGN §6), or one whose flow is cancelled ends CANCELLED, and is no longer
 * queued: its owner drops its head. On a queue no
 * stream slot serves (a fetch-only queue, or workers not deployed yet), nothing
 * offers that head away, and the backlog gauges (DESIGN §10) and the queue's
 * backlog kept counting it for as long as the node owned the partition.
 */
import { queueName } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const QUEUE = queueName('acme', 'order', 'pack');

async function gauges(): Promise<{ entries: number; age: number }> {
  const r = t.node.metrics.registry;
  const of = async (name: string) => (await r.getSingleMetric(name)!.get()).values.find((v) => v.labels.step_type === 'pack')?.value ?? 0;
  return { entries: await of('dexzd_step_task_queue_entries'), age: await of('dexzd_step_task_queue_oldest_age_seconds') };
}

it('stops counting a queued Step that no slot took once its flow deadline passed', async () => {
  t = await startTestNode(redis.url, uniquePrefix('timed-out'), { 'cluster.partitions': 1, 'matching.syncMatchWait': '10ms' });
  await waitFor(() => t.node.owner.get(0)?.loaded, { timeoutMs: 5000, description: 'the partition is loaded' });
  const owner = t.node.owner.get(0)!;
  // Far enough out that the head and the gauge are read before it passes, on a loaded machine too.
  const step = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'pack', step_execution_id: 's1', flow_deadline_ms: Date.now() + 3000 };
  const r = await t.matching.enqueueStep({ step });
  const q = owner.queueFor(QUEUE);
  await waitFor(() => q.peek()?.taskId === r.task_id, { timeoutMs: 5000, description: 'the Step is a head of its queue' });
  await t.node.owner.backlog.count(owner);
  expect((await gauges()).entries).toBe(1);

  expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 })).outcome?.status).toBe(pb.OutcomeStatus.TIMED_OUT);

  // The next backlog count finds nothing queued: no entry, no age, no backlog.
  await t.node.owner.backlog.count(owner);
  expect(await gauges()).toEqual({ entries: 0, age: 0 });
  expect(q.size).toBe(0);
  expect(t.node.owner.backlogged(QUEUE)).toBe(false);
}, 15_000);

it('stops counting a queued Step whose flow was cancelled', async () => {
  t = await startTestNode(redis.url, uniquePrefix('cancelled'), { 'cluster.partitions': 1, 'matching.syncMatchWait': '10ms' });
  await waitFor(() => t.node.owner.get(0)?.loaded, { timeoutMs: 5000, description: 'the partition is loaded' });
  const owner = t.node.owner.get(0)!;
  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f2', flow_type: 'order', step_type: 'pack', step_execution_id: 's1' } });
  const q = owner.queueFor(QUEUE);
  await waitFor(() => q.peek()?.taskId === r.task_id, { timeoutMs: 5000, description: 'the Step is a head of its queue' });
  await t.node.owner.backlog.count(owner);
  expect((await gauges()).entries).toBe(1);

  expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f2' })).toMatchObject({ cancelled_queued: 1 });
  await waitFor(() => q.size === 0, { timeoutMs: 5000, description: 'the head is dropped' });
  await t.node.owner.backlog.count(owner);
  expect(await gauges()).toEqual({ entries: 0, age: 0 });
  expect(t.node.owner.backlogged(QUEUE)).toBe(false);
}, 15_000);
