/**
 * Operators list the outcome consumer groups and drop an abandoned one
 * (MatchingService.ListOutcomeGroups, DropOutcomeGroup; `zdmatch outcome-groups`;
 * docs/operations.md): a group nobody reads keeps the outcome streams from
 * being trimmed. A drop that matches nothing is NOT_FOUND and changes nothing;
 * a group read in the last 10 minutes is refused unless forced. An AckOutcomes
 * of a dropped group is NOT_FOUND: only a read makes the group again. The CLI part
 * needs `npm run build` (npm test does it).
 */
import { Status } from 'nice-grpc';
import { Client, ZdNotFoundError } from '../../src';
import { OutcomeStore } from '../../src/store/outcomes';
import { runCliAsync } from '../helpers/cli';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const P = 2;
let t: TestNode;
let prefix: string;
let client: Client;

beforeEach(async () => {
  prefix = uniquePrefix('groups');
  t = await startTestNode(redis.url, prefix, { 'cluster.partitions': P });
  client = new Client({ address: t.node.apiAddress });
});
afterEach(async () => {
  client.close();
  await t.close();
});

/** `n` outcomes: queued Steps of as many flows, cancelled (no worker needed). */
async function outcomes(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await client.enqueueStep({ tenant: 'acme', flowId: `f${i}`, flowType: 'order', stepType: 'charge', stepExecutionId: 's' });
    await client.cancelFlow('acme', `f${i}`);
  }
}

/** The consumer groups on each partition's outcome stream, as Redis has them. */
async function streamGroups(): Promise<string[][]> {
  return Promise.all(Array.from({ length: P }, async (_, p) => {
    const key = `${prefix}:{${p}}:out`;
    if (Number(await redis.command('EXISTS', key)) === 0) return [];
    return ((await redis.command('XINFO', 'GROUPS', key)) as unknown[][]).map((g) => String(g[1])).sort();
  }));
}

const registry = async () => ((await redis.command('SMEMBERS', `${prefix}:groups`)) as string[]).sort();

it('lists each group with its lag, unacked outcomes and consumers', async () => {
  await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 }); // registers it, on every partition
  await client.consumeOutcomes({ group: 'eng', tenant: 'acme', consumer: 'a1', maxCount: 1 });
  await outcomes(12);
  const read = await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 5 });
  expect(read).toHaveLength(5);

  const groups = await client.listOutcomeGroups();
  expect(groups.map((g) => [g.tenant, g.group])).toEqual([['', 'engine'], ['acme', 'eng']]);
  const engine = groups.find((g) => g.group === 'engine')!;
  expect(engine).toMatchObject({ lag: 7, pending: 5, consumers: 1, partitions: P, registered: true });
  expect(engine.idleMs).toBeLessThan(60_000);
  expect(groups.find((g) => g.group === 'eng')).toMatchObject({ tenant: 'acme', lag: 12, pending: 0, registered: true });

  const cli = await runCliAsync(['outcome-groups', 'list', '--address', t.node.apiAddress]);
  expect(cli.status).toBe(0);
  expect(cli.stdout).toMatch(/engine\s*│\s*7\s*│\s*5\s*│\s*1\s*│\s*\d+ s ago/);
  expect(cli.stdout).toMatch(/acme\s*│\s*eng\s*│\s*12\s*│\s*0\s*│/);
});

it('refuses to drop a group read in the last 10 minutes unless forced, then drops it everywhere', async () => {
  await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
  await client.consumeOutcomes({ group: 'old', consumer: 'o1', maxCount: 1 });
  await outcomes(6);
  expect(await client.consumeOutcomes({ group: 'old', consumer: 'o1', maxCount: 4 })).toHaveLength(4);
  const before = await streamGroups();

  const refused = await t.matching.dropOutcomeGroup({ group: 'old' }).catch((e: unknown) => e);
  expect(refused).toMatchObject({ code: Status.FAILED_PRECONDITION });
  expect((refused as Error).message).toMatch(/ZD_OUTCOME_GROUP_ACTIVE.*old/);
  expect(await streamGroups()).toEqual(before);
  expect(await registry()).toEqual(['engine', 'old']);

  const cli = await runCliAsync(['outcome-groups', 'drop', 'old', '--force', '--address', t.node.apiAddress]);
  expect(cli).toMatchObject({ status: 0, stdout: `dropped old from ${P} partitions (4 unacked outcomes it held will not be redelivered to it)\n` });
  expect(await registry()).toEqual(['engine']);
  for (const groups of await streamGroups()) expect(groups).not.toContain('old');
  expect((await client.listOutcomeGroups()).map((g) => g.group)).toEqual(['engine']);

  // Nothing left to drop: not a success, and nothing changes.
  const again = await runCliAsync(['outcome-groups', 'drop', 'old', '--force', '--address', t.node.apiAddress]);
  expect(again.status).toBe(1);
  expect(again.stderr).toMatch(/ZD_OUTCOME_GROUP_NOT_FOUND/);
  await expect(client.dropOutcomeGroup('engine', { tenant: 'acme', force: true })).rejects.toBeInstanceOf(ZdNotFoundError);
  expect(await registry()).toEqual(['engine']);
});

it('counts a group last read 5 minutes ago as active, and one last read 11 minutes ago as idle', async () => {
  const key = `${prefix}:{0}:out`;
  await redis.command('XGROUP', 'CREATE', key, 'nightly', '0', 'MKSTREAM');
  // Read by a consumer on some node 5 minutes ago (OutcomeStore.noteRead), not since.
  await redis.command('HSET', `${prefix}:groups:seen`, 'nightly', String(Date.now() - 5 * 60_000));
  const refused = await t.matching.dropOutcomeGroup({ group: 'nightly' }).catch((e: unknown) => e);
  expect(refused).toMatchObject({ code: Status.FAILED_PRECONDITION });
  expect((refused as Error).message).toMatch(/ZD_OUTCOME_GROUP_ACTIVE.*nightly/);
  expect((await streamGroups())[0]).toContain('nightly');

  await redis.command('HSET', `${prefix}:groups:seen`, 'nightly', String(Date.now() - 11 * 60_000));
  expect(await t.matching.dropOutcomeGroup({ group: 'nightly' })).toMatchObject({ partitions: 1, pending: 0 });
  expect((await streamGroups())[0]).not.toContain('nightly');
});

it('drops a group made by hand that never had a consumer without force, and trimming stops waiting for it', async () => {
  await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
  await outcomes(300);
  // The engine reads and acks everything; a group made by hand (not in the registry) read nothing.
  // XTRIM MINID ~ frees whole stream nodes (100 entries): the partition with the most outcomes has one.
  const counts = await perPartition();
  const p = Number(Object.keys(counts).sort((a, b) => counts[Number(b)]! - counts[Number(a)]!)[0]);
  expect(counts[p]).toBeGreaterThan(100);
  const key = `${prefix}:{${p}}:out`;
  await redis.command('XGROUP', 'CREATE', key, 'by-hand', '0');
  for (;;) {
    const got = await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1000 });
    if (got.length === 0) break;
    await client.ackOutcomes('engine', got.map((o) => o.outcomeId));
  }
  const store = new OutcomeStore(t.node.redis, t.node.keys, P);
  const length = async () => Number(await redis.command('XLEN', key));
  const full = await length();
  await store.trim(p, Date.now(), 86_400_000);
  expect(await length()).toBe(full); // the group made by hand holds every entry

  const listed = (await client.listOutcomeGroups()).find((g) => g.group === 'by-hand');
  expect(listed).toMatchObject({ consumers: 0, idleMs: undefined, partitions: 1, registered: false, pending: 0 });
  expect(await client.dropOutcomeGroup('by-hand')).toEqual({ partitions: 1, pending: 0 });
  await store.trim(p, Date.now(), 86_400_000);
  expect(await length()).toBeLessThan(full);
});

/** Outcomes per partition stream, by partition. */
async function perPartition(): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (let p = 0; p < P; p++) {
    const n = Number(await redis.command('XLEN', `${prefix}:{${p}}:out`));
    if (n > 0) out[p] = n;
  }
  return out;
}

it('counts a group that a consumer polls with empty reads as read, though Redis moves no consumer idle time for them', async () => {
  // Guards: a group long-polled through a quiet spell (or never handed an outcome) looked idle
  // (idle_ms -1 or growing), and a drop without force took it from the live engine.
  await client.consumeOutcomes({ group: 'quiet', consumer: 'e1', maxCount: 1 });
  await client.consumeOutcomes({ group: 'quiet', consumer: 'e1', maxCount: 1, waitMs: 100 });
  const listed = (await client.listOutcomeGroups()).find((g) => g.group === 'quiet');
  expect(listed?.idleMs).toBeDefined();
  expect(listed!.idleMs!).toBeLessThan(60_000);
  const refused = await t.matching.dropOutcomeGroup({ group: 'quiet' }).catch((e: unknown) => e);
  expect((refused as Error).message).toMatch(/ZD_OUTCOME_GROUP_ACTIVE.*quiet/);
  expect(await registry()).toEqual(['quiet']);
});

it('a consumer of a group dropped under it reads on, its acks of what it was handed before set aside', async () => {
  // Guards: the acks it carried matched nothing in the group now gone, ConsumeOutcomes answered
  // NOT_FOUND, and its every retry of the same request was refused the same: it never read again.
  await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
  await outcomes(2);
  const [first] = await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
  expect(await client.dropOutcomeGroup('engine', { force: true })).toMatchObject({ partitions: P });
  const again = await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 10, ack: [first!.outcomeId] });
  expect(again.map((o) => o.flowId).sort()).toEqual(['f0', 'f1']); // made again from the start: at least once
  expect(await registry()).toEqual(['engine']);
  // Acks of a group nobody dropped or made are still refused (a typo, a tenant's group without its tenant).
  const typo = await t.matching.consumeOutcomes({ group: 'engnie', consumer: 'e1', ack: [first!.outcomeId] }).catch((e: unknown) => e);
  expect((typo as Error).message).toMatch(/ZD_OUTCOME_GROUP_NOT_FOUND.*engnie/);
});

it('answers NOT_FOUND to an AckOutcomes of a dropped group, and makes no group again', async () => {
  // Guards: the acks a ConsumeOutcomes carries for a dropped group are set aside (its read makes the
  // group again); an AckOutcomes matched nothing there either, and answered OK with 0 acked.
  await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
  await outcomes(1);
  const [first] = await client.consumeOutcomes({ group: 'engine', consumer: 'e1', maxCount: 1 });
  expect(await client.dropOutcomeGroup('engine', { force: true })).toMatchObject({ partitions: P });
  const err = await t.matching.ackOutcomes({ group: 'engine', outcome_ids: [first!.outcomeId] }).catch((e: unknown) => e);
  expect((err as { code?: number }).code).toBe(Status.NOT_FOUND);
  expect((err as Error).message).toMatch(/ZD_OUTCOME_GROUP_NOT_FOUND.*engine/);
  expect(await registry()).toEqual([]);
  expect(await streamGroups()).toEqual(Array.from({ length: P }, () => []));
});
