/**
 * A ConsumeOutcomes answer stops short of the 4 MiB a gRPC client receives
 * (api/response-budget.ts) when its size is in the outcomes' text, not their
 * output: flow ids, step execution ids and a cancel reason are UTF-8 on the
 * wire, up to three bytes a character. Counted as characters, 800 CANCELLED
 * outcomes with long non-ASCII ids and reason went out as one 5 MB answer that
 * the client refused whole (RESOURCE_EXHAUSTED), and the same batch came back,
 * just as unreadable, at every redelivery.
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { BIG_OUTPUT, completeSteps } from '../helpers/outcomes';
import { RESPONSE_BYTES_MAX } from '../../src/api/response-budget';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const COUNT = 800;
// '界' is three bytes in UTF-8; ids are at most 512 characters, a cancel reason 1024.
const FLOW = '界'.repeat(512);
const REASON = '界'.repeat(1024);

it('answers with what one gRPC message carries when the outcomes hold long non-ASCII ids and errors', async () => {
  t = await startTestNode(redis.url, uniquePrefix('answer-bytes'), { 'cluster.partitions': 2 });
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c' }); // the group, before any outcome
  // In batches the server's receive limit (limits.maxPayloadBytes) takes.
  for (let from = 0; from < COUNT; from += 200) {
    const steps = Array.from({ length: 200 }, (_, i) => ({
      tenant: 'acme', flow_id: FLOW, flow_type: 'nobody', step_type: 's', step_execution_id: `${'界'.repeat(500)}${from + i}`,
    }));
    await t.matching.enqueueSteps({ steps });
  }
  expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: FLOW, reason: REASON })).toMatchObject({ cancelled_queued: COUNT });

  const seen = new Set<string>();
  let ack: string[] = [];
  for (let call = 0; call < 5 && seen.size < COUNT; call++) {
    // A client with gRPC's default receive limit (4 MiB) reads every answer.
    const got = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 1000, wait_ms: 200, ack })).outcomes;
    for (const o of got) {
      expect(o.error?.message).toBe(REASON);
      seen.add(o.task_id!);
    }
    ack = got.map((o) => o.outcome_id!);
  }
  expect(seen.size).toBe(COUNT);
});

it('reads about one answer of large outcomes per call once it has seen how large they are', async () => {
  // Guards the byte budget of the reads: a call of max_count 1 000 over 40 outputs of 900 KiB
  // read all 36 MB from Redis to answer four, put the rest back, and read them again on every
  // call after (quadratic in the backlog: 200 MB to drain these 37). The node's first read
  // knows no size yet and reads its count; every later one reads about what it answers.
  t = await startTestNode(redis.url, uniquePrefix('answer-bytes-big'), { 'cluster.partitions': 2 });
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c' });
  const N = 40;
  await completeSteps(t, N, BIG_OUTPUT);
  const sent = async () => Number(/total_net_output_bytes:(\d+)/.exec(String(await redis.command('INFO', 'stats')))![1]);
  const seen = new Set<string>();
  let ack: string[] = [];
  let calls = 0;
  let before = 0;
  while (seen.size < N && calls < 30) {
    calls++;
    const got = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 1000, wait_ms: 200, ack })).outcomes;
    expect(got.length).toBeGreaterThan(0);
    for (const o of got) seen.add(o.task_id!);
    ack = got.map((o) => o.outcome_id!);
    if (calls === 1) before = await sent();
  }
  expect(seen.size).toBe(N);
  // What the calls after the first read: each output left about once.
  expect((await sent()) - before).toBeLessThan((N - 4) * BIG_OUTPUT.length + RESPONSE_BYTES_MAX);
});
