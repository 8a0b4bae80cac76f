/**
 * Task layouts (src/store/layout.ts): a start writes the layout it is told
 * (a node: the newest every live member reads), and every reader reads both,
 * so tasks started before a rolling upgrade, or while an older node was still
 * a member, keep working after it.
 */
import { Membership } from '../../src/cluster/membership';
import { ownerOf } from '../../src/cluster/rendezvous';
import { Keys, partitionOf } from '../../src/store/keys';
import { attemptNode, OLDEST_TASK_LAYOUT, TASK_LAYOUT } from '../../src/store/layout';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { TaskStore } from '../../src/store/task-store';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { startTestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'layouts');
const newTask = taskBuilder();

const str = (h: Record<string, Buffer> | null) =>
  Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k, v.toString()]));
const RUNNING_FIELDS = ['run', 'slot', 'node', 'boot', 'startedAt'];
const runningFields = async (partition: number, taskId: string) => {
  const h = str(await fx.client.hgetallBuffer(fx.keys.task(partition, taskId)));
  return Object.fromEntries(Object.entries(h).filter(([k]) => RUNNING_FIELDS.includes(k)));
};
/** A store on the fixture's keys that writes `layout`. */
const storeWriting = (layout: number) => new TaskStore(fx.client, fx.keys, 60_000, 60_000, undefined, () => layout);

describe.each([1, 2])('layout %i', (layout) => {
  const expected = (now: number) => (layout === 2
    ? { run: `s1\x1en1\x1eb1\x1e${now}` }
    : { slot: 's1', node: 'n1', boot: 'b1', startedAt: String(now) });

  it('is what a start and a start at enqueue write', async () => {
    const store = storeWriting(layout);
    const now = Date.now();
    const [queued, bound] = [newTask(), newTask()];
    await store.enqueue(queued, now);
    expect(await store.start(queued.partition, queued.taskId, 0, testSlot, 'n-q', now)).toMatchObject({ attempt: 1 });
    await store.enqueueMany([bound], now, [{ slot: testSlot, nonce: 'n-b' }]);
    expect(await runningFields(queued.partition, queued.taskId)).toEqual(expected(now));
    expect(await runningFields(bound.partition, bound.taskId)).toEqual(expected(now));
  });

  it('is read by a store that writes the other: heartbeat, readTask, cancelFlow, release, completion', async () => {
    const now = Date.now() - 1000;
    const t = newTask({ methodTimeout: 5000 });
    await storeWriting(layout).enqueue(t, now);
    await storeWriting(layout).start(t.partition, t.taskId, 0, testSlot, 'n1', now);
    const reader = storeWriting(3 - layout);
    const ref = { partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' };
    // the method deadline counts from the start time the start wrote
    expect(await reader.heartbeat(ref, now + 1000)).toEqual({ kind: 'extended', deadlineAt: now + 5000 });
    // as the four fields of layout 1, whichever was written: no `run` beside them
    const read = str(await reader.readTask(t.partition, t.taskId));
    expect(read).toMatchObject({ slot: 's1', node: 'n1', boot: 'b1', startedAt: String(now) });
    expect(read).not.toHaveProperty('run');
    expect(await reader.release(ref)).toMatchObject({ kind: 'released' });
    expect(await runningFields(t.partition, t.taskId)).toEqual({});

    await storeWriting(layout).start(t.partition, t.taskId, 0, testSlot, 'n2', now);
    const n1 = newTask({ tenant: t.tenant, flowId: t.flowId });
    await storeWriting(layout).enqueue(n1, now);
    await storeWriting(layout).start(n1.partition, n1.taskId, 0, { ...testSlot, streamId: 's9', nodeId: 'n7' }, 'n3', now);
    const cancelled = await reader.cancelFlow(t.partition, t.tenant, t.flowId, 'stop', now);
    expect(cancelled.running.map((r) => [r.taskId, r.nonce, r.nodeId, r.streamId]).sort()).toEqual([
      [t.taskId, 'n2', 'n1', 's1'], [n1.taskId, 'n3', 'n7', 's9'],
    ].sort());

    const c = newTask();
    await storeWriting(layout).enqueue(c, now);
    await storeWriting(layout).start(c.partition, c.taskId, 0, testSlot, 'n4', now);
    expect(await reader.complete({ partition: c.partition, taskId: c.taskId, attempt: 1, nonce: 'n4' }, Buffer.from('ok'), now))
      .toMatchObject({ kind: 'completed' });
  });

  it("names the attempt's node and boot id to the dead-node sweep", async () => {
    const t = newTask();
    await storeWriting(layout).enqueue(t, 1);
    await storeWriting(layout).start(t.partition, t.taskId, 0, testSlot, 'n1', 1);
    const [run, node, boot] = await fx.client.hmget(fx.keys.task(t.partition, t.taskId), 'run', 'node', 'boot');
    expect(attemptNode(run, node, boot)).toEqual({ node: 'n1', boot: 'b1' });
  });
});

it('reads no node for a task that is not running', () => {
  expect(attemptNode(null, null, null)).toEqual({ node: null, boot: '' });
});

describe('the layout a node writes', () => {
  let client: RedisClient;
  afterEach(() => client?.disconnect());
  const members = () => {
    client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
    const keys = new Keys(uniquePrefix('members'));
    const member = (nodeId: string, opts: { bootId?: string; taskLayout?: number } = {}) => new Membership(client, keys, {
      nodeId, bootId: opts.bootId ?? 'b1', address: `${nodeId}:1`, heartbeatMs: 60_000, nodeTtlMs: 5000, taskLayout: opts.taskLayout,
    }, systemClock, silentLogger);
    return { keys, member };
  };

  it('is the newest every live member reads: the oldest until it has seen itself, then the least of them', async () => {
    const { member } = members();
    const self = member('n1');
    expect(self.taskLayout()).toBe(OLDEST_TASK_LAYOUT);
    await self.beat();
    expect(self.taskLayout()).toBe(TASK_LAYOUT);
    const older = member('n2', { taskLayout: 1 });
    await older.beat();
    await self.beat();
    expect(self.taskLayout()).toBe(1);
    expect(older.taskLayout()).toBe(1);
    await older.leave();
    await self.beat();
    expect(self.taskLayout()).toBe(TASK_LAYOUT);
    self.stop();
    older.stop();
  });

  it('counts a member that does not say, or said it for an earlier boot, as reading the oldest', async () => {
    const { keys, member } = members();
    const self = member('n1');
    await self.beat();
    // n2 restarted on an older version: it writes address and boot, never taskLayout
    await client.zadd(keys.members(), Date.now(), 'n2');
    await client.hset(keys.node('n2'), 'address', 'n2:1', 'boot', 'b-new', 'taskLayout', `${TASK_LAYOUT}:b-old`);
    await self.beat();
    expect(self.taskLayout()).toBe(OLDEST_TASK_LAYOUT);
    await client.hdel(keys.node('n2'), 'taskLayout');
    await self.beat();
    expect(self.taskLayout()).toBe(OLDEST_TASK_LAYOUT);
    await client.hset(keys.node('n2'), 'taskLayout', `${TASK_LAYOUT}:b-new`);
    await self.beat();
    expect(self.taskLayout()).toBe(TASK_LAYOUT);
    self.stop();
  });
});

it('is what a node writes: the oldest while a member of an earlier version is live, the newest once it has left', async () => {
  const prefix = uniquePrefix('layout-node');
  const t = await startTestNode(redis.url, prefix, { 'cluster.nodeId': 'n-new' });
  const client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(prefix);
  const s = openSlot(t.worker, registerFrame());
  let older: NodeJS.Timeout | undefined;
  try {
    await s.nextOf('registered');
    // Each Step's flow is in a partition n-new owns with or without n-old, so it runs here either way.
    let n = 0;
    const runStep = async () => {
      let flowId: string;
      do flowId = `f-${++n}`; while (ownerOf(partitionOf('acme', flowId, 8), ['n-new', 'n-old']) !== 'n-new');
      await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
      const task = (await s.nextOf('step_task')).step_task!;
      const h = await client.hgetall(keys.task(partitionOf('acme', flowId, 8), task.task_id!));
      s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
      await s.nextOf('result_ack');
      return Object.keys(h).filter((k) => RUNNING_FIELDS.includes(k)).sort();
    };
    await waitFor(() => t.node.membership.taskLayout() === TASK_LAYOUT, { description: 'the node has seen itself' });
    expect(await runStep()).toEqual(['run']);

    // n-old: a live member of a version that does not say which layout it reads
    const beat = () => Promise.all([
      client.zadd(keys.members(), Date.now(), 'n-old'), client.hset(keys.node('n-old'), 'address', '127.0.0.1:9', 'boot', 'b-old'),
    ]);
    await beat();
    older = setInterval(() => void beat(), 200);
    await waitFor(() => t.node.membership.taskLayout() === OLDEST_TASK_LAYOUT, { description: 'the node has seen n-old' });
    expect(await runStep()).toEqual(['boot', 'node', 'slot', 'startedAt']);

    clearInterval(older);
    older = undefined;
    await client.zrem(keys.members(), 'n-old');
    await waitFor(() => t.node.membership.taskLayout() === TASK_LAYOUT, { description: 'n-old has left' });
    expect(await runStep()).toEqual(['run']);
  } finally {
    if (older) clearInterval(older);
    s.reset();
    client.disconnect();
    await t.close();
  }
});
