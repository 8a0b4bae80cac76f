/**
 * ConsumeOutcomes shares a small max_count fairly over the partitions: each
 * call starts its read at another partition, so an outcome in one partition
 * is not held back behind another partition's backlog until that backlog is
 * drained (DESIGN §8: outcomes reach the engine, whichever partition they are in).
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeAll(async () => {
  t = await startTestNode(redis.url, uniquePrefix('fair'), { 'cluster.partitions': 2 });
});
afterAll(() => t.close());

const step = (flow: string, seid: string) => ({ tenant: 'acme', flow_id: flow, flow_type: 'nobody', step_type: 's', step_execution_id: seid });

/** A flow id whose Steps land in `partition` (the probe's Step is cancelled: an outcome there). */
async function flowIn(partition: number): Promise<string> {
  for (let i = 0; ; i++) {
    const flow = `p${partition}-${i}`;
    const probe = await t.matching.enqueueStep({ step: step(flow, 'probe') });
    await t.matching.cancelFlow({ tenant: 'acme', flow_id: flow });
    if (probe.partition === partition) return flow;
  }
}

/** `n` outcomes of `flow`, its queued Steps cancelled. */
async function cancelled(flow: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let x = 0; x < n; x++) ids.push((await t.matching.enqueueStep({ step: step(flow, `x${x}`) })).task_id!);
  expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: flow })).toMatchObject({ cancelled_queued: n });
  return ids;
}

it('hands out an outcome of one partition within a call or two while another partition holds a backlog', async () => {
  const consume = (ack: string[] = []) => t.matching.consumeOutcomes({ group: 'fair', consumer: 'c', max_count: 1, wait_ms: 0, ack });
  const [busy, quiet] = [await flowIn(0), await flowIn(1)];
  // The probes' outcomes go first, acked.
  let ack: string[] = [];
  for (;;) {
    const got = (await consume(ack)).outcomes;
    ack = got.map((o) => o.outcome_id!);
    if (got.length === 0) break;
  }
  const backlog = await cancelled(busy, 8);
  const [lone] = await cancelled(quiet, 1);
  const order: string[] = [];
  for (let call = 0; call < backlog.length + 1; call++) {
    const got = (await consume(ack)).outcomes;
    ack = got.map((o) => o.outcome_id!);
    order.push(...got.map((o) => o.task_id!));
  }
  expect([...order].sort()).toEqual([...backlog, lone!].sort());
  // Not behind the eight of partition 0: the second call at the latest starts at partition 1.
  const at = order.indexOf(lone!);
  expect(at).toBeLessThan(2);
});
