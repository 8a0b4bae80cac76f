/**
 * ConsumeOutcomes never delivers more than max_count: entries it reads are
 * pending for the group, so reading past the budget would strand them until
 * redelivery. Small batches drain every partition without waiting.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeAll(async () => {
  t = await startTestNode(redis.url, uniquePrefix('ob'));
});
afterAll(() => t.close());

it('returns at most max_count per call and strands nothing', async () => {
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const N = 40;
  for (let i = 0; i < N; i++) {
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
  }
  for (let i = 0; i < N; i++) {
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  }
  const seen = new Set<string>();
  let ack: string[] = [];
  for (let call = 0; call < 20 && seen.size < N; call++) {
    const got = await t.matching.consumeOutcomes({ group: 'g', consumer: 'c', max_count: 5, wait_ms: 200, ack });
    expect(got.outcomes.length).toBeLessThanOrEqual(5);
    for (const o of got.outcomes) seen.add(o.task_id!);
    ack = got.outcomes.map((o) => o.outcome_id!);
  }
  expect(seen.size).toBe(N);
  // Nothing is left pending for the group once the last batch is acked.
  await t.matching.ackOutcomes({ group: 'g', outcome_ids: ack });
  let pending = 0;
  for (let p = 0; p < t.config.cluster.partitions; p++) {
    pending += Number(((await redis.command('XPENDING', `${t.config.redis.keyPrefix}:{${p}}:out`, 'g')) as unknown[])[0]);
  }
  expect(pending).toBe(0);
  s.reset();
});

it('finds an outcome in any partition even when max_count is smaller than the partition count', async () => {
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const N = 5;
  for (let i = 0; i < N; i++) {
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `one-${i}`, flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
  }
  const seen = new Set<string>();
  let ack: string[] = [];
  for (let call = 0; call < N; call++) {
    const got = await t.matching.consumeOutcomes({ group: 'single', consumer: 'c', max_count: 1, wait_ms: 0, ack });
    expect(got.outcomes.length).toBe(1); // never empty while an outcome is waiting somewhere
    seen.add(got.outcomes[0]!.task_id!);
    ack = [got.outcomes[0]!.outcome_id!];
  }
  expect(seen.size).toBe(N);
  s.reset();
});
