/**
 * AckOutcomes to a consumer group that does not exist matches nothing, and is
 * not a success (DESIGN §11.4). XACK answers 0 for an unknown group just as it
 * does for ids already acked, so an engine that named the group wrongly — a
 * tenant's group acked without its tenant, a typo — was answered acked: 0 with
 * OK, and its outcomes came back at every redelivery. An ack of ids already
 * acked, in a group that exists, is still 0 and OK (at-least-once: acks repeat).
 */
import { Status } from 'nice-grpc';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { failureOf } from '../helpers/fetch';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

/** One CANCELLED outcome, delivered to consumer c1 of acme's group "engine" and not acked. */
async function pendingOutcome(): Promise<string> {
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', tenant: 'acme' });
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'nobody', step_type: 's', step_execution_id: 'x' } });
  await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f' });
  const [o] = (await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', tenant: 'acme', wait_ms: 1000 })).outcomes;
  return o!.outcome_id!;
}

it('answers NOT_FOUND naming the group to an ack of a group that does not exist, and acks nothing', async () => {
  t = await startTestNode(redis.url, uniquePrefix('ack-group'), { 'cluster.partitions': 2 });
  const id = await pendingOutcome();

  // The tenant's group acked as a group over every tenant: another group, which nobody made.
  const untenanted = await failureOf(t.matching.ackOutcomes({ group: 'engine', outcome_ids: [id] }));
  expect(untenanted.code).toBe(Status.NOT_FOUND);
  expect(untenanted.details).toMatch(/ZD_OUTCOME_GROUP_NOT_FOUND.*engine/);
  const typo = await failureOf(t.matching.ackOutcomes({ group: 'engnie', tenant: 'acme', outcome_ids: [id] }));
  expect(typo.code).toBe(Status.NOT_FOUND);
  expect(typo.details).toMatch(/engnie of tenant acme/);
  // Neither made a group.
  expect(await redis.command('SMEMBERS', `${t.config.redis.keyPrefix}:groups`)).toEqual(['t:acme:engine']);

  // The group it belongs to acks it once; acked again, it matches nothing and that is no error.
  expect((await t.matching.ackOutcomes({ group: 'engine', tenant: 'acme', outcome_ids: [id] })).acked).toBe(1);
  expect((await t.matching.ackOutcomes({ group: 'engine', tenant: 'acme', outcome_ids: [id] })).acked).toBe(0);
});

it('takes an ack of a group made by hand on the streams, outside the registry, as one of a group that exists', async () => {
  t = await startTestNode(redis.url, uniquePrefix('ack-hand'), { 'cluster.partitions': 2 });
  for (let p = 0; p < 2; p++) await redis.command('XGROUP', 'CREATE', `${t.config.redis.keyPrefix}:{${p}}:out`, 'legacy', '0', 'MKSTREAM');
  expect((await t.matching.ackOutcomes({ group: 'legacy', outcome_ids: ['0-1-0', '1-1-0'] })).acked).toBe(0);
});

it('refuses the acks a ConsumeOutcomes carries for a group that does not exist, and makes no group', async () => {
  // Guards the acks riding on ConsumeOutcomes: the read made the group first, the acks matched
  // nothing, and the call answered OK with outcomes of every tenant and the outcome still pending.
  t = await startTestNode(redis.url, uniquePrefix('ack-consume'), { 'cluster.partitions': 2 });
  const id = await pendingOutcome();
  const refused = await failureOf(t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', ack: [id] }));
  expect(refused.code).toBe(Status.NOT_FOUND);
  expect(refused.details).toMatch(/ZD_OUTCOME_GROUP_NOT_FOUND.*engine/);
  expect(await redis.command('SMEMBERS', `${t.config.redis.keyPrefix}:groups`)).toEqual(['t:acme:engine']);
  // In the group it belongs to, the same ack rides along and takes it off the pending list.
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c1', tenant: 'acme', ack: [id] });
  const [p] = id.split('-');
  const pending = await redis.command('XPENDING', `${t.config.redis.keyPrefix}:{${p}}:out`, 't:acme:engine') as unknown[];
  expect(pending[0]).toBe(0);
});
