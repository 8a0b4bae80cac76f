/**
 * Lease renewal on a Redis Cluster whose partitions spread over several
 * primaries (DESIGN §2, §3): while one primary stops answering (a frozen
 * process, a network that black-holes it), the leases on the other primaries
 * are still renewed every third of cluster.leaseTtl. A renewal that never
 * comes back must not hold up the renewal of every other lease.
 */
import calculateSlot from 'cluster-key-slot';
import { LeaseManager } from '../../src/cluster/leases';
import { startRedisCluster, sendCommand, type RedisCluster } from '../../src/store/embedded-redis';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { createLogger } from '../../src/util/logger';
import { uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const TTL = 900;
const PARTITIONS = 16;
const log = createLogger('silent');

let cluster: RedisCluster;
let client: RedisClient;
let stopped: number | undefined;
let manager: LeaseManager | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
});

afterEach(() => {
  if (stopped !== undefined) cluster.nodes[stopped]!.kill('SIGCONT');
  stopped = undefined;
  manager?.stop();
  manager = undefined;
  client?.disconnect();
});

afterAll(async () => {
  if (stopped !== undefined) cluster.nodes[stopped]!.kill('SIGCONT');
  await cluster?.stop();
});

/** The index (in cluster.nodes) of the primary that serves `key`. */
async function primaryOf(key: string): Promise<number> {
  const slot = calculateSlot(key);
  const slots = (await sendCommand(cluster.nodes[0]!.port, ['CLUSTER', 'SLOTS'])) as unknown as [number, number, [string, number]][];
  const range = slots.find(([from, to]) => slot >= from && slot <= to)!;
  return cluster.nodes.findIndex((n) => n.port === Number(range[2][1]));
}

/**
 * Node "a" holding every partition's lease; then the primary of partition 0
 * freezes: its connection stays open, and nothing it is sent is answered.
 * Returns the leases on the primaries that still answer.
 */
async function holdAllThenFreezeOne(label: string) {
  const keys = new Keys(uniquePrefix(label));
  client = createRedis({ url: '', clusterNodes: [...cluster.seeds], sentinels: [], sentinelName: '', password: '' });
  const m = new LeaseManager(client, keys, 'a', TTL, log);
  manager = m;
  m.start();
  await m.setTargets(new Set(Array.from({ length: PARTITIONS }, (_, p) => p)));
  // A first pass on a loaded machine may leave some to the manager's retry (a new client's
  // first calls to a primary): held all before the freeze, which is what this test is about.
  await waitFor(() => m.heldPartitions().length === PARTITIONS, { timeoutMs: 10_000, description: 'every lease held' });
  const where = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => primaryOf(keys.lease(p))));
  stopped = where[0]!;
  const healthy = where.flatMap((node, p) => (node === stopped ? [] : [p]));
  const frozen = where.flatMap((node, p) => (node === stopped ? [p] : []));
  expect(healthy.length).toBeGreaterThan(0);
  cluster.nodes[stopped]!.kill('SIGSTOP');
  const leaseTokens = () => Promise.all(healthy.map((p) => sendCommand(cluster.nodes[where[p]!]!.port, ['GET', keys.lease(p)])));
  return { m, healthy, frozen, leaseTokens };
}

it('keeps renewing the leases on the other primaries while one primary does not answer', async () => {
  const { m, healthy, frozen, leaseTokens } = await holdAllThenFreezeOne('hung');
  // Three TTLs (well inside cluster-node-timeout, so the other primaries keep serving).
  await sleep(3 * TTL);
  expect(await leaseTokens()).toEqual(healthy.map(() => 'a:1'));
  for (const p of healthy) expect(m.holds(p)).toMatchObject({ epoch: 1 });
  // The frozen primary's leases have lapsed there by now: the node no longer counts them as its own.
  for (const p of frozen) expect(m.holds(p)).toBeUndefined();
});

it('gives back the leases on the answering primaries and ends within leaseTtl while one primary does not answer', async () => {
  const { m, healthy, leaseTokens } = await holdAllThenFreezeOne('hung-stop');
  const started = Date.now();
  await m.releaseAll();
  // Not held up by the give-back the frozen primary never answers.
  expect(Date.now() - started).toBeLessThan(TTL + 500);
  expect(await leaseTokens()).toEqual(healthy.map(() => null));
});
