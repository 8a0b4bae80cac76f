/**
 * One owned partition over a real redis-server (src/owner/partition.ts): the
 * attempts it fails, the queues it forgets and what its unload stops. The
 * host records what the partition tells the node.
 */
import { PartitionOwner, type PartitionHost } from '../../src/owner/partition';
import { BusyQueues, type QueueHeads } from '../../src/owner/heads';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';
import { useEmbeddedRedis } from '../helpers/redis';

const redis = useEmbeddedRedis();
const s = useTaskStore(redis, 'powner');
const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never;
const newTask = taskBuilder();
const LEASE = 'n0:1';

/** An owner of `partition` under LEASE, whose host records what it is told; no node instance is gone. */
function owner(partition: number, busy?: BusyQueues) {
  const told = { available: [] as QueueHeads[], forgotten: [] as QueueHeads[], requeued: [] as string[], outcomes: [] as string[] };
  const host = {
    headsAvailable: (q: QueueHeads) => void told.available.push(q),
    isNodeGone: async () => false,
    leaseMoved: () => undefined,
    queueForgotten: (q: QueueHeads) => void told.forgotten.push(q),
    cancelAttempt: () => undefined,
    taskRequeued: (_p: number, queue: string) => void told.requeued.push(queue),
    outcomeWritten: (_p: number, taskId: string) => void told.outcomes.push(taskId),
    placeSticky: () => undefined,
    notReady: () => undefined,
  } satisfies PartitionHost;
  const p = new PartitionOwner({ partition, epoch: 1, token: LEASE }, s.client, s.keys, s.store, host, { now: () => Date.now() }, log, busy);
  return { p, told };
}

describe('failUnheld', () => {
  it('fails the attempt it was handed, and leaves a newer attempt of the task on the same node instance running', async () => {
    const t = newTask();
    const now = Date.now();
    await s.store.enqueue(t, now);
    await s.client.set(s.keys.lease(t.partition), LEASE);
    expect(await s.store.start(t.partition, t.taskId, 0, testSlot, 'n-old', now)).toMatchObject({ attempt: 1 });
    const { p, told } = owner(t.partition);
    const [read] = await p.failDeadNodeAttempts();
    expect(read).toMatchObject({ taskId: t.taskId, nonce: 'n-old', node: testSlot.nodeId, boot: testSlot.bootId });

    // The attempt read goes back to its queue, and the same node instance starts the task again.
    expect(await s.store.release({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n-old' })).toMatchObject({ kind: 'released' });
    expect(await s.store.start(t.partition, t.taskId, 0, testSlot, 'n-new', Date.now())).toMatchObject({ attempt: 1 });

    expect(await p.failUnheld(read!)).toBe(false);
    const h = await s.client.hgetall(s.keys.task(t.partition, t.taskId));
    expect(h).toMatchObject({ state: 'running', attempt: '1', nonce: 'n-new' });
    expect(h.errType).toBeUndefined();
    expect(await s.client.zscore(s.keys.inflight(t.partition), t.taskId)).not.toBeNull();
    expect(told.requeued).toEqual([]);

    // The attempt of now, read and handed over, fails as worker lost and goes back for a retry.
    const [current] = await p.failDeadNodeAttempts();
    expect(await p.failUnheld(current!)).toBe(true);
    expect(await s.client.hget(s.keys.task(t.partition, t.taskId), 'errType')).toBe('worker_lost');
    expect(told.requeued).toEqual([t.queue]);
    // its retry is due after the retry policy's interval: the queue wakes for it then
    const retryAt = Number(await s.client.zscore(s.keys.queue(t.partition, t.queue), t.taskId));
    expect(p.queues.get(t.queue)?.wakeAt).toBe(retryAt);
    p.unload('shutdown');
  });
});

describe('forgetQueue', () => {
  const QUEUE = 'acme:order:charge';

  it('forgets a loaded queue that holds nothing: the node hears of it and its backlog count goes', async () => {
    const busy = new BusyQueues();
    const { p, told } = owner(0, busy);
    await s.client.sadd(s.keys.queues(0), QUEUE); // a name with no entries left
    await p.load();
    const q = p.queues.get(QUEUE)!;
    expect(q.idle).toBe(true);
    expect(p.forgetQueue(QUEUE)).toBe(true);
    expect(p.queues.has(QUEUE)).toBe(false);
    expect(told.forgotten).toEqual([q]);
    // a queue first seen after the load holds nothing in Redis that it has not been told of
    const fresh = p.queueFor('acme:order:ship');
    expect(fresh.idle).toBe(true);
    expect(busy.count('acme:order:ship')).toBe(0);
    // a new task of that name makes the queue again, counted once
    p.taskReady(QUEUE, 'later', Date.now() - 1);
    expect(p.queues.get(QUEUE)).not.toBe(q);
    expect(busy.count(QUEUE)).toBe(1);
  });

  it('keeps a queue with a ready head, and one of a partition not loaded yet or unloaded', async () => {
    const busy = new BusyQueues();
    const { p, told } = owner(0, busy);
    await s.client.sadd(s.keys.queues(0), QUEUE, 'acme:order:empty');
    await s.client.zadd(s.keys.queue(0, QUEUE), Date.now() - 1, 't1');
    p.queueFor(QUEUE); // before the load: Redis may hold entries it has not read
    expect(p.forgetQueue(QUEUE)).toBe(false);
    await p.load();
    expect(p.forgetQueue(QUEUE)).toBe(false);
    expect(p.queues.get(QUEUE)?.size).toBe(1);
    expect(busy.count(QUEUE)).toBe(1);
    expect(p.forgetQueue('acme:order:never')).toBe(false);
    expect(p.queues.get('acme:order:empty')?.idle).toBe(true);
    p.unload('membership');
    expect(p.forgetQueue('acme:order:empty')).toBe(false);
    expect(told.forgotten).toEqual([]);
  });

  it('keeps a queue whose delayed entry has its timer armed', async () => {
    const { p } = owner(0);
    await p.load();
    p.taskReady(QUEUE, 'delayed', Date.now() + 60_000);
    expect(p.forgetQueue(QUEUE)).toBe(false);
    p.unload('shutdown');
  });
});

describe('unload', () => {
  const QUEUE = 'acme:order:charge';

  it('takes its queues out of the node\'s backlog count and stops every timer it armed', async () => {
    const busy = new BusyQueues();
    const { p } = owner(0, busy);
    await p.load();
    p.taskReady(QUEUE, 't1', Date.now() - 1);
    p.taskReady('acme:order:ship', 'later', Date.now() + 60_000);
    p.attemptDeadline(Date.now() + 60_000);
    p.flowDeadline(Date.now() + 60_000);
    expect(busy.count(QUEUE)).toBe(1);
    p.unload('lease-lost');
    expect(p.active).toBe(false);
    expect(busy.count(QUEUE)).toBe(0);
    expect((p as unknown as { timers: { size: number } }).timers.size).toBe(0);
    // nothing arms a timer or takes a task on it afterwards
    p.taskReady(QUEUE, 't2', Date.now() - 1);
    p.attemptDeadline(Date.now() + 1000);
    expect(busy.count(QUEUE)).toBe(0);
    expect((p as unknown as { timers: { size: number } }).timers.size).toBe(0);
  });
});
