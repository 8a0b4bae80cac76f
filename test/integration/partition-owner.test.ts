/**
 * One owned partition over a real redis-server (src/owner/partition.ts): the
 * attempts it fails, the queues it forgets and what its unload stops. The
 * host records what the partition tells the node.
 */
import { PartitionOwner, type PartitionHost } from '../../src/owner/partition';
import type { QueueHeads } from '../../src/owner/heads';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';
import { useEmbeddedRedis } from '../helpers/redis';

const redis = useEmbeddedRedis();
const s = useTaskStore(redis, 'powner');
const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never;
const newTask = taskBuilder();
const LEASE = 'n0:1';

/** An owner of `partition` under LEASE, whose host records what it is told; no node instance is gone. */
function owner(partition: number) {
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
  const p = new PartitionOwner({ partition, epoch: 1, token: LEASE }, s.client, s.keys, s.store, host, { now: () => Date.now() }, log);
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
  });
});
