/**
 * ConsumeOutcomes never delivers more than max_count: entries it reads are
 * pending for the group, so reading past the budget would strand them until
 * redelivery. Small batches drain every partition without waiting. On one
 * Redis a round of reads over the partitions is one XREADGROUP. A batch stops
 * short of the 4 MiB a gRPC client receives, and what it read past that comes
 * with the next call. A call that leaves max_count unset gets at most 100.
 */
import { Client } from '../../src';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { BIG_OUTPUT, completeSteps } from '../helpers/outcomes';

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
  const N = 5;
  await completeSteps(t, N);
  const seen = new Set<string>();
  let ack: string[] = [];
  for (let call = 0; call < N; call++) {
    const got = await t.matching.consumeOutcomes({ group: 'single', consumer: 'c', max_count: 1, wait_ms: 0, ack });
    expect(got.outcomes.length).toBe(1); // never empty while an outcome is waiting somewhere
    seen.add(got.outcomes[0]!.task_id!);
    ack = [got.outcomes[0]!.outcome_id!];
  }
  expect(seen.size).toBe(N);
});

/** Calls of a command Redis has run, all clients together. */
async function calls(command: string): Promise<number> {
  const stats = String(await redis.command('INFO', 'commandstats'));
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

it('reads every partition of a single Redis in one XREADGROUP, and makes a group missing from one stream again', async () => {
  // Guards the multi-stream read: a waiting engine's call read each of the partitions with a command of its own.
  const t = await startTestNode(redis.url, uniquePrefix('ob1')); // a node and key prefix of its own: only its outcomes
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  await t.matching.consumeOutcomes({ group: 'one-call', consumer: 'c', max_count: 1 }); // the group, on every stream
  const N = 12;
  for (let i = 0; i < N; i++) {
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `m${i}`, flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
  }
  const before = await calls('xreadgroup');
  const got = await t.matching.consumeOutcomes({ group: 'one-call', consumer: 'c', max_count: 100 });
  expect(got.outcomes).toHaveLength(N);
  // 100 over 8 partitions: a share of 12 each, all read in the first round.
  expect((await calls('xreadgroup')) - before).toBe(1);

  // The group gone from one partition's stream: that round fails NOGROUP, the partitions are read
  // one by one, and the missing group is made again.
  const p = Number(got.outcomes[0]!.outcome_id!.split('-')[0]);
  const key = `${t.config.redis.keyPrefix}:{${p}}:out`;
  await redis.command('XGROUP', 'DESTROY', key, 'one-call');
  const flow = `again-${p}`;
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  const again = await t.matching.consumeOutcomes({ group: 'one-call', consumer: 'c', max_count: 100 });
  expect(again.outcomes.map((o) => o.flow_id)).toContain(flow);
  const groups = (await redis.command('XINFO', 'GROUPS', key)) as unknown[][];
  expect(groups.map((g) => String(g[1]))).toContain('one-call');
  s.reset();
  await t.close();
});

it('a waiting consumer woken by an outcome reads the partition it rang in, not every partition', async () => {
  // Guards the targeted read after a ring: on a Redis Cluster each partition read is a command of its own.
  const own = await startTestNode(redis.url, uniquePrefix('ob2'));
  const s = openSlot(own.worker, registerFrame());
  try {
    await s.nextOf('registered');
    await own.matching.consumeOutcomes({ group: 'woken', consumer: 'c', max_count: 1 });
    const outcomes = own.node.outcomes;
    const readNew = outcomes.readNew.bind(outcomes);
    const asked: number[][] = [];
    outcomes.readNew = (group, consumer, count, partitions) => (asked.push([...partitions]), readNew(group, consumer, count, partitions));
    const waiting = own.matching.consumeOutcomes({ group: 'woken', consumer: 'c', max_count: 10, wait_ms: 3000 });
    await new Promise((r) => setTimeout(r, 100));
    const r = await own.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'w1', flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    const got = await waiting;
    expect(got.outcomes.map((o) => o.task_id)).toEqual([r.task_id]);
    const p = Number(r.task_id!.split('-')[0]);
    expect(asked[0]).toHaveLength(own.config.cluster.partitions); // the first read: every partition
    expect(asked[asked.length - 1]).toEqual([p]); // woken by the ring: its partition only
    outcomes.readNew = readNew;
  } finally {
    s.reset();
    await own.close();
  }
});

it('answers with what one gRPC message carries and delivers the rest with the next calls', async () => {
  const ids = await completeSteps(t, 10, BIG_OUTPUT);
  // The SDK's client, with gRPC's default receive limit: ten such outcomes are 9 MB.
  const client = new Client({ address: t.node.apiAddress });
  try {
    const seen = new Set<string>();
    let ack: string[] = [];
    // Not after redeliver_after (30 s): the entries read past the answer come at once.
    for (let call = 0; call < 10 && seen.size < ids.size; call++) {
      const got = await client.consumeOutcomes({ group: 'big', consumer: 'c', maxCount: 10, waitMs: 200, ack });
      expect(got.reduce((n, o) => n + o.output.length, 0)).toBeLessThan(4 * 1024 * 1024);
      for (const o of got) {
        if (!ids.has(o.taskId)) continue; // the earlier tests' outcomes, in this new group too
        seen.add(o.taskId);
        expect(o.output.length).toBe(BIG_OUTPUT.length);
      }
      ack = got.map((o) => o.outcomeId);
    }
    expect(seen.size).toBe(ids.size);
  } finally {
    client.close();
  }
});

it('answers at most 100 outcomes to a call that leaves max_count unset, and the rest with the next', async () => {
  // A node of its own: the streams here hold the large outcomes of the tests above.
  const n = await startTestNode(redis.url, uniquePrefix('unset'));
  try {
    const flow = 'unset-count';
    const steps = Array.from({ length: 150 }, (_, i) => ({ tenant: 'acme', flow_id: flow, flow_type: 'nobody', step_type: 's', step_execution_id: `x${i}` }));
    await n.matching.enqueueSteps({ steps });
    expect(await n.matching.cancelFlow({ tenant: 'acme', flow_id: flow })).toMatchObject({ cancelled_queued: 150 });
    const first = await n.matching.consumeOutcomes({ group: 'unset', consumer: 'c', wait_ms: 0 });
    expect(first.outcomes).toHaveLength(100);
    const rest = await n.matching.consumeOutcomes({ group: 'unset', consumer: 'c', wait_ms: 0, ack: first.outcomes.map((o) => o.outcome_id!) });
    expect(rest.outcomes).toHaveLength(50);
  } finally {
    await n.close();
  }
});
