/**
 * DropOutcomeGroup takes every group ListOutcomeGroups lists. A group made by
 * hand on an outcome stream (XGROUP CREATE, listed with registered false) may
 * have a name ConsumeOutcomes would refuse — a ':' or a space — and holds the
 * stream's trim just the same; the drop refused its name as INVALID_ARGUMENT,
 * so no operator could free what it held. The name is only looked up among the
 * groups that exist, never made; a missing one is still NOT_FOUND.
 * A group whose lag Redis cannot tell is listed with lag -1 (unknown), and a
 * tenant's group not found is named with its tenant.
 */
import { Status } from 'nice-grpc';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { failureOf } from '../helpers/fetch';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

it('drops a group made by hand whose name holds a colon or a space, as it is listed', async () => {
  t = await startTestNode(redis.url, uniquePrefix('by-hand'), { 'cluster.partitions': 2 });
  const key = `${t.config.redis.keyPrefix}:{1}:out`;
  await redis.command('XGROUP', 'CREATE', key, 'audit:v1', '0', 'MKSTREAM');
  await redis.command('XGROUP', 'CREATE', key, 'debug copy', '0', 'MKSTREAM');

  const listed = (await t.matching.listOutcomeGroups({})).groups.map((g) => [g.tenant, g.group]);
  expect(listed).toEqual([['', 'audit:v1'], ['', 'debug copy']]);
  expect(await t.matching.dropOutcomeGroup({ group: 'audit:v1' })).toMatchObject({ partitions: 1 });
  expect(await t.matching.dropOutcomeGroup({ group: 'debug copy' })).toMatchObject({ partitions: 1 });
  expect(await redis.command('XINFO', 'GROUPS', key)).toEqual([]);

  expect((await failureOf(t.matching.dropOutcomeGroup({ group: 'audit:v1' }))).code).toBe(Status.NOT_FOUND);
  // Still refused, naming the field: no name, and control characters.
  expect((await failureOf(t.matching.dropOutcomeGroup({ group: '' }))).details).toContain('group');
  expect((await failureOf(t.matching.dropOutcomeGroup({ group: 'a\nb' }))).code).toBe(Status.INVALID_ARGUMENT);
});

it('lists a group whose lag Redis cannot tell with lag -1, which reads as unknown, not as none', async () => {
  t = await startTestNode(redis.url, uniquePrefix('by-hand'), { 'cluster.partitions': 2 });
  const key = `${t.config.redis.keyPrefix}:{1}:out`;
  // An entry deleted ahead of the group's position: Redis reports its lag as nil.
  await redis.command('XADD', key, '*', 'a', '1');
  const deleted = String(await redis.command('XADD', key, '*', 'a', '2'));
  await redis.command('XDEL', key, deleted);
  await redis.command('XGROUP', 'CREATE', key, 'audit', '0');
  const [g] = (await t.matching.listOutcomeGroups({})).groups;
  expect(g).toMatchObject({ group: 'audit', lag: -1, idle_ms: -1, consumers: 0 });
});

it('names the tenant of a tenant\'s group it did not find', async () => {
  t = await startTestNode(redis.url, uniquePrefix('by-hand'), { 'cluster.partitions': 2 });
  const err = await failureOf(t.matching.dropOutcomeGroup({ tenant: 'acme', group: 'engine', force: true }));
  expect(err).toMatchObject({ code: Status.NOT_FOUND, details: 'ZD_OUTCOME_GROUP_NOT_FOUND: no outcome consumer group engine of tenant acme' });
});
