/**
 * Resharding a Redis Cluster while zdmatch runs (DESIGN §2): a partition's
 * hash slot mid-migration has part of its keys on each of two primaries. A
 * script sent there must not act on half of them — a completion whose task
 * hash has moved, run on the new primary, would find the partition's other
 * keys absent and write a new outcome stream there, and the migration of the
 * old one then fails (BUSYKEY). The scripts refuse a migrating slot with
 * TRYAGAIN before they write, the client retries, and the call lands once the
 * slot has moved. A real 3-primary Redis Cluster; slots moved with the
 * commands `redis-cli --cluster reshard` sends.
 */
import calculateSlot from 'cluster-key-slot';
import { startRedisCluster, sendCommand, type RedisCluster } from '../../src/store/embedded-redis';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { TaskStore } from '../../src/store/task-store';
import { finishMigration, migrate, openMigration, ownerOf } from '../helpers/cluster-slots';
import { uniquePrefix } from '../helpers/redis';
import { taskBuilder, testSlot } from '../helpers/store';
import { sleep } from '../helpers/wait';

let cluster: RedisCluster;
let client: RedisClient;
const newTask = taskBuilder();

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
});
afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

/** A TaskStore on a new Cluster client (the test's last one is closed) and a key prefix of its own. */
function freshStore(label: string): { keys: Keys; store: TaskStore } {
  client?.disconnect();
  client = createRedis({ url: '', clusterNodes: [...cluster.seeds], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix(label));
  return { keys, store: new TaskStore(client, keys, 60_000, 60_000) };
}

it('completes an attempt whose task hash moved ahead of the rest of its slot once the slot has moved, with one outcome, and the migration goes through', async () => {
  const { keys, store } = freshStore('reshard');
  const t = newTask();
  const now = Date.now();
  await store.enqueue(t, now);
  const started = await store.start(t.partition, t.taskId, 0, testSlot, 'nonce-1', now);
  expect(started).toMatchObject({ attempt: 1 });

  const slot = calculateSlot(keys.task(t.partition, t.taskId));
  const src = await ownerOf(cluster, slot);
  const dst = cluster.nodes.map((n) => n.port).find((p) => p !== src)!;
  await openMigration(slot, src, dst);
  // The task hash goes first; the partition's other keys (in flight, the flow's index, ...) are still on the old primary.
  expect(String(await migrate(src, dst, keys.task(t.partition, t.taskId)))).toBe('OK');

  let settled = false;
  const completing = store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' }, Buffer.from('done'), now + 1)
    .finally(() => (settled = true));
  await sleep(400);
  expect(settled).toBe(false); // refused (TRYAGAIN) while the slot is split, and retried

  await finishMigration(cluster, slot, src, dst);
  expect(await completing).toMatchObject({ kind: 'completed' });
  const outcomes = (await sendCommand(dst, ['XRANGE', keys.out(t.partition), '-', '+'])) as unknown as unknown[];
  expect(outcomes).toHaveLength(1);
  expect(await sendCommand(dst, ['EXISTS', keys.task(t.partition, t.taskId)])).toBe(0);
}, 60_000);

it('answers an enqueue of a Step that already ended as ended, not as new, while its slot is mid-migration', async () => {
  const { keys, store } = freshStore('reshard-dup');
  const t = newTask();
  const now = Date.now();
  await store.enqueue(t, now);
  await store.start(t.partition, t.taskId, 0, testSlot, 'nonce-1', now);
  expect(await store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' }, Buffer.from('done'), now + 1))
    .toMatchObject({ kind: 'completed' });

  const slot = calculateSlot(keys.task(t.partition, t.taskId));
  const src = await ownerOf(cluster, slot);
  const dst = cluster.nodes.map((n) => n.port).find((p) => p !== src)!;
  await openMigration(slot, src, dst);
  // The task hash is gone (it ended): the enqueue is sent on to the new primary, which has none of the slot's keys yet.
  let settled = false;
  const again = store.enqueue(t, now + 2).finally(() => (settled = true));
  await sleep(400);
  expect(settled).toBe(false);
  await finishMigration(cluster, slot, src, dst);
  expect((await again).result).toBe('ended');
  expect(await sendCommand(dst, ['EXISTS', keys.task(t.partition, t.taskId)])).toBe(0);
}, 60_000);
