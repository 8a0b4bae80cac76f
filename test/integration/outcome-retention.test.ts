/**
 * outcomes.retention as a node applies it (DESIGN §2, §8): an ended Step's
 * done record lives that long, a re-enqueue within it is refused as a
 * duplicate (created false, the same outcome), and once it has passed the
 * same Step execution id makes a new task. An outcome stream no consumer group
 * reads keeps its entries that long too (DESIGN §8), trimmed by the node that
 * owns the partition.
 */
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

it('keeps the outcome for outcomes.retention, and no longer', async () => {
  t = await startTestNode(redis.url, uniquePrefix('ret'), { 'outcomes.retention': '1500ms' });
  const step = { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 's' };
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const first = await t.matching.enqueueStep({ step });
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');

  const p = partitionOf('acme', 'f', t.config.cluster.partitions);
  const ttl = Number(await redis.command('PTTL', t.node.keys.done(p, first.task_id!)));
  expect(ttl).toBeGreaterThan(1000);
  expect(ttl).toBeLessThanOrEqual(1500);
  // within the retention: a duplicate, and the outcome is there
  expect(await t.matching.enqueueStep({ step })).toMatchObject({ task_id: first.task_id, created: false });
  expect((await t.matching.waitOutcome({ task_id: first.task_id, wait_ms: 10 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);

  await new Promise((r) => setTimeout(r, ttl + 100));
  const again = await t.matching.enqueueStep({ step });
  expect(again).toMatchObject({ task_id: first.task_id, created: true });
  expect((await s.nextOf('step_task')).step_task!.attempt).toBe(1);
  s.reset();
});

it('trims an owned partition\'s outcome stream that no group reads to outcomes.retention', async () => {
  t = await startTestNode(redis.url, uniquePrefix('retrim'), { 'cluster.partitions': 1, 'outcomes.retention': '1h' });
  const stream = t.node.keys.out(0);
  // 200 outcomes from long ago (two whole stream nodes: XTRIM MINID ~ frees whole nodes only) …
  const pipeline = t.node.redis.pipeline();
  for (let i = 1; i <= 200; i++) pipeline.xadd(stream, `${i}-0`, 'taskId', `old${i}`, 'o', 'x');
  await pipeline.exec();
  // … and one of now.
  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'nobody', step_type: 's', step_execution_id: 'now' } });
  expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f' })).toMatchObject({ cancelled_queued: 1 });
  expect(t.node.owner.owned().map((p) => p.partition)).toEqual([0]);

  // The node's periodic trim, run now rather than at its next round.
  await (t.node as unknown as { trimOutcomes(): Promise<void> }).trimOutcomes();
  const left = (await redis.command('XRANGE', stream, '-', '+')) as [string, string[]][];
  expect(left).toHaveLength(1);
  expect(left[0]![1]).toEqual(expect.arrayContaining(['taskId', r.task_id]));
});
