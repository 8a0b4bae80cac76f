/**
 * A tenant's outcome group reads the outcome streams every tenant shares: the
 * other tenants' entries it reads are acked in that group at once, never left
 * pending. Left pending, each came back at every redelivery, the group's
 * unacked count (ListOutcomeGroups) grew with every foreign outcome, and the
 * streams were never trimmed below them (DESIGN §8: trimmed only after every
 * registered group acked them).
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeAll(async () => {
  t = await startTestNode(redis.url, uniquePrefix('tgroup'), { 'cluster.partitions': 2 });
});
afterAll(() => t.close());

/** One CANCELLED outcome of a flow of `tenant`. */
async function outcome(tenant: string, flow: string): Promise<string> {
  const r = await t.matching.enqueueStep({ step: { tenant, flow_id: flow, flow_type: 'nobody', step_type: 's', step_execution_id: 'x' } });
  expect(await t.matching.cancelFlow({ tenant, flow_id: flow })).toMatchObject({ cancelled_queued: 1 });
  return r.task_id!;
}

it("leaves nothing of another tenant's outcomes pending in a tenant's group once it acked its own", async () => {
  const consume = (ack: string[] = []) =>
    t.matching.consumeOutcomes({ tenant: 'acme', group: 'engine', consumer: 'c', max_count: 10, wait_ms: 0, ack });
  expect((await consume()).outcomes).toEqual([]); // the group, before the outcomes
  for (let i = 0; i < 5; i++) await outcome('globex', `g${i}`);
  const own = await outcome('acme', 'a0');
  const seen: string[] = [];
  let ack: string[] = [];
  for (let call = 0; call < 10 && !seen.includes(own); call++) {
    const got = (await consume()).outcomes;
    seen.push(...got.map((o) => o.task_id!));
    ack = got.map((o) => o.outcome_id!);
  }
  expect(seen).toEqual([own]);
  expect((await t.matching.ackOutcomes({ tenant: 'acme', group: 'engine', outcome_ids: ack })).acked).toBe(1);
  const group = (await t.matching.listOutcomeGroups({})).groups.find((g) => g.tenant === 'acme' && g.group === 'engine');
  expect(group).toMatchObject({ lag: 0, pending: 0 });
});
