/**
 * Queue entries whose task is gone (the task hash deleted by hand, or evicted
 * by a Redis under a maxmemory policy that evicts keys without a TTL) must not
 * stop a queue: the owner's search for the next live task passes them, the
 * slot that found one gone removes it from the queue, and a run of them counts
 * dexzd_step_task_queue_incomplete_seeks_total (DESIGN §10: a steady rise
 * means cleanup falls behind).
 */
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { queueName } from '../../src/store/keys';
import { HEADS_WINDOW, STALE_RUN } from '../../src/owner/heads';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const STEPS = HEADS_WINDOW + 60;
const GONE = HEADS_WINDOW + 20; // more than a whole window of stale entries at the queue's head

it('passes a window of entries whose tasks are gone, starts the live ones and removes the stale ones', async () => {
  t = await startTestNode(redis.url, uniquePrefix('stale'), { 'cluster.partitions': 1, 'matching.syncMatchWait': '10ms' });
  const steps = Array.from({ length: STEPS }, (_, i) => ({
    tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: 'pack', step_execution_id: `s${i}`,
  }));
  for (let i = 0; i < STEPS; i += 100) await t.matching.enqueueSteps({ steps: steps.slice(i, i + 100) });
  const keys = t.node.keys;
  const queue = keys.queue(0, queueName('acme', 'order', 'pack'));
  expect(await redis.command('ZCARD', queue)).toBe(STEPS);
  // past their sync-match phase: every Step is a head of the durable queue
  await new Promise((r) => setTimeout(r, 200));

  const ids = (await redis.command('ZRANGE', queue, '0', '-1')) as string[];
  for (const id of ids.slice(0, GONE)) await redis.command('DEL', keys.task(0, id));
  const live = new Set(ids.slice(GONE));

  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const started: string[] = [];
  while (started.length < live.size) {
    const task = (await s.nextOf('step_task', 5000)).step_task!;
    started.push(task.task_id!);
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
  }
  expect(new Set(started)).toEqual(live);
  // the stale entries went with them
  expect(await redis.command('ZCARD', queue)).toBe(0);
  const seeks = await t.node.metrics.registry.getSingleMetric('dexzd_step_task_queue_incomplete_seeks_total')!.get();
  // one slot offers one head at a time; Steps enqueued in the same millisecond may
  // reach the heads in another order than the queue's, so a live one can break a run
  expect(seeks.values[0]!.value).toBeGreaterThanOrEqual(1);
  expect(seeks.values[0]!.value).toBeLessThanOrEqual(Math.floor(GONE / STALE_RUN));
  // Each offer counted by its result: every stale entry offered was gone, every live one taken.
  const offers = await t.node.metrics.registry.getSingleMetric('dexzd_matching_offers_total')!.get();
  const byResult = (r: string) => offers.values.find((v) => v.labels.result === r)?.value ?? 0;
  expect(byResult('gone')).toBe(GONE);
  expect(byResult('taken')).toBe(live.size);
  s.reset();
});
