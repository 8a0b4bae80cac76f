/**
 * A ConsumeOutcomes or WaitOutcome whose caller has gone (it cancelled, its
 * deadline passed, its connection dropped) stops at once. Looping on until its
 * wait_ms, it read every partition again and again with nobody to answer
 * (waiting consumers are woken by completions, not by polling every partition
 * in a loop: DESIGN §8), and the outcomes such a read took were delivered to
 * a consumer that could not receive them: to no one until redelivery.
 */
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

/** Calls of a command Redis has run, all clients together. */
async function calls(command: string): Promise<number> {
  const stats = String(await redis.command('INFO', 'commandstats'));
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

async function cancelledAfter<T>(ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<void> {
  const ac = new AbortController();
  const running = call(ac.signal).catch(() => undefined);
  await sleep(ms);
  ac.abort();
  await running;
}

/** Enqueues a Step and completes it on a worker slot of its own: its outcome is written. Answers its task id. */
async function completeOne(): Promise<string> {
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const { task_id } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  s.reset();
  return task_id;
}

it('a cancelled ConsumeOutcomes reads the outcome streams no more', async () => {
  t = await startTestNode(redis.url, uniquePrefix('gone'));
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c0', max_count: 10 }); // the group
  await cancelledAfter(200, (signal) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer: 'gone', max_count: 10, wait_ms: 10_000 }, { signal }));
  await sleep(100); // the server has seen the cancel
  const before = await calls('xreadgroup');
  await sleep(500);
  // Nobody waits now: no read at all (a loop makes thousands).
  expect((await calls('xreadgroup')) - before).toBeLessThanOrEqual(2);
});

it('an outcome written after a ConsumeOutcomes was cancelled goes to the consumer still waiting, at once', async () => {
  t = await startTestNode(redis.url, uniquePrefix('gone-live'));
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c0', max_count: 10 }); // the group
  await cancelledAfter(200, (signal) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer: 'gone', max_count: 10, wait_ms: 10_000 }, { signal }));
  const waiting = t.matching.consumeOutcomes({ group: 'engine', consumer: 'live', max_count: 10, wait_ms: 3000 });
  await sleep(100);
  const task_id = await completeOne();
  // Not taken by the consumer that left (it would come back only after redeliver_after_ms, 30 s).
  expect((await waiting).outcomes.map((o) => o.task_id)).toEqual([task_id]);
});

it('outcomes read as the caller of a ConsumeOutcomes left go to the group\'s next call at once, not after redeliver_after_ms', async () => {
  t = await startTestNode(redis.url, uniquePrefix('gone-read'));
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c0', max_count: 10 }); // the group
  const task_id = await completeOne();
  // Redis holds the reads until the caller has gone: they deliver the outcome to a consumer nobody answers for.
  await redis.command('CLIENT', 'PAUSE', '600', 'WRITE');
  await cancelledAfter(200, (signal) =>
    t.matching.consumeOutcomes({ group: 'engine', consumer: 'gone', max_count: 10, wait_ms: 5000 }, { signal }));
  await sleep(700);
  const next = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'next', max_count: 10, redeliver_after_ms: 60_000 });
  expect(next.outcomes.map((o) => o.task_id)).toEqual([task_id]);
});

it('a cancelled WaitOutcome reads no more', async () => {
  t = await startTestNode(redis.url, uniquePrefix('gone-wait'));
  const { task_id } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'w', flow_type: 'nobody', step_type: 's', step_execution_id: 'x' } });
  await cancelledAfter(200, (signal) => t.matching.waitOutcome({ task_id, wait_ms: 10_000 }, { signal }));
  await sleep(100);
  const before = await calls('exists');
  await sleep(500);
  // The node's own periodic work may look at a few keys meanwhile; a loop makes thousands.
  expect((await calls('exists')) - before).toBeLessThanOrEqual(20);
});
