/**
 * The task scripts' guards and edges, called on the store with exact times: a
 * call that names the running start's nonce but another attempt, the
 * millisecond at which a flow deadline turns over, what a timeout leaves of a
 * fetch task, the clock a turn's starts share, and stillRunning's nonce. The
 * reference-model race test drives the scripts at random; these pin the checks
 * whose one-off changes it cannot tell apart.
 */
import { FetchStore } from '../../src/store/fetch-store';
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'edges');

let fetchStore: FetchStore;

beforeEach(() => {
  fetchStore = new FetchStore(fx.client, fx.keys, 60_000);
});

const newTask = taskBuilder();
const failure = { message: 'boom', type: 'Io', nonRetryable: false, retryAfterMs: 0 };

describe('a call under the running start\'s nonce that names another attempt', () => {
  it('is refused as stale by heartbeat, release, fail and complete, and changes nothing', async () => {
    const t = newTask({ heartbeatTimeout: 5000 });
    const now = 1_000_000;
    await fx.store.enqueue(t, now);
    const started = await fx.store.start(t.partition, t.taskId, 0, testSlot, 'n1', now);
    expect(started).toMatchObject({ attempt: 1, deadlineAt: now + 5000 });
    const other = { partition: t.partition, taskId: t.taskId, attempt: 2, nonce: 'n1' };
    const inflight = () => fx.client.zscore(fx.keys.inflight(t.partition), t.taskId);

    expect(await fx.store.heartbeat(other, now + 100)).toEqual({ kind: 'stale' });
    expect(await fx.store.release(other)).toEqual({ kind: 'stale' });
    expect(await fx.store.fail(other, failure, now + 100)).toEqual({ kind: 'stale' });
    expect(await fx.store.complete(other, Buffer.from('x'), now + 100)).toEqual({ kind: 'stale' });
    expect(await fx.client.hmget(fx.keys.task(t.partition, t.taskId), 'state', 'attempt', 'nonce')).toEqual(['running', '1', 'n1']);
    expect(await inflight()).toBe(String(now + 5000));
    expect(await fx.client.xlen(fx.keys.out(t.partition))).toBe(0);
  });
});

describe('a fetch task left with its outcome by a completion that stopped before its delete', () => {
  it('times out as gone past its flow deadline, with no second outcome', async () => {
    const now = 1_000_000;
    const t = newTask({ flowDeadline: now + 5000 });
    await fx.store.enqueue(t, now);
    expect((await fetchStore.lock(t.partition, [t.queue], 'fw', 1000, 1, 0, now)).tasks).toHaveLength(1);
    fetchStore.faults.completeAfterOutcome = true;
    await expect(fetchStore.complete(t.partition, t.taskId, 'fw', Buffer.from('r'), 'idem-1', now + 1)).rejects.toThrow(/ZD_FAULT/);
    fetchStore.faults.completeAfterOutcome = false;
    expect(await fx.client.xlen(fx.keys.out(t.partition))).toBe(1);

    await fx.client.set(fx.keys.lease(t.partition), 'n1:1');
    expect(await fx.store.timeout(t.partition, t.taskId, now + 5000, 'n1:1')).toBe('gone');
    expect(await fx.client.xlen(fx.keys.out(t.partition))).toBe(1);
    expect(await fx.store.readDone(t.partition, t.taskId)).toMatchObject({ status: Buffer.from('COMPLETED') });
    expect(await fx.client.exists(fx.keys.task(t.partition, t.taskId))).toBe(0);
    expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBeNull();
  });
});

describe('the starts of one turn', () => {
  it('go at the latest of their clocks: a task ready by then starts, and each records that time', async () => {
    const now = 1_000_000;
    const early = newTask();
    const late = newTask({ readyAt: now + 50 });
    await fx.store.enqueueMany([early, late], now);
    const [a, b] = await Promise.all([
      fx.store.start(early.partition, early.taskId, 0, testSlot, 'n-early', now),
      fx.store.start(late.partition, late.taskId, 0, testSlot, 'n-late', now + 50),
    ]);
    expect(a).toMatchObject({ attempt: 1 });
    expect(b).toMatchObject({ attempt: 1 });
    const run = await fx.client.hget(fx.keys.task(late.partition, late.taskId), 'run');
    expect(run?.split('\x1e')[3]).toBe(String(now + 50));
  });
});

describe('stillRunning', () => {
  it('is true only for the start nonce the attempt runs under', async () => {
    const t = newTask();
    const now = 1_000_000;
    await fx.store.enqueue(t, now);
    await fx.store.start(t.partition, t.taskId, 0, testSlot, 'n1', now);
    const ref = { partition: t.partition, taskId: t.taskId, attempt: 1 };
    expect(await fx.store.stillRunning([{ ...ref, nonce: 'n1' }, { ...ref, nonce: 'n0' }])).toEqual([true, false]);
  });
});

describe('a Step enqueued with a bound slot', () => {
  it('whose flow deadline is now is queued, not started: it is past its deadline, as a start would find', async () => {
    const now = 1_000_000;
    const t = newTask({ flowDeadline: now });
    const [r] = await fx.store.enqueueMany([t], now, [{ slot: testSlot, nonce: 'n-bound' }]);
    expect(r).toEqual({ result: 'created', rememberedSticky: '' });
    expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'state')).toBe('queued');
    expect(await fx.client.zscore(fx.keys.inflight(t.partition), t.taskId)).toBeNull();
    expect(await fx.client.zscore(fx.keys.queue(t.partition, t.queue), t.taskId)).toBe(String(now));
  });
});

describe('a terminal fetch task past its flow deadline', () => {
  it('times out and leaves the terminal set: operators no longer list it', async () => {
    const now = 1_000_000;
    const t = newTask({ flowDeadline: now + 5000 });
    await fx.store.enqueue(t, now);
    expect((await fetchStore.lock(t.partition, [t.queue], 'fw', 1000, 1, 0, now)).tasks).toHaveLength(1);
    expect(await fetchStore.fail(t.partition, t.taskId, 'fw', 'no', 'Io', 0, 0, now + 1)).toMatchObject({ kind: 'ok', terminal: true });
    expect(await fx.client.zscore(fx.keys.terminal(t.partition), t.taskId)).toBe(String(now + 1));

    await fx.client.set(fx.keys.lease(t.partition), 'n1:1');
    expect(await fx.store.timeout(t.partition, t.taskId, now + 5000, 'n1:1')).toBe('timed-out');
    expect(await fx.client.zcard(fx.keys.terminal(t.partition))).toBe(0);
    expect(await fx.store.readDone(t.partition, t.taskId)).toMatchObject({ status: Buffer.from('TIMED_OUT') });
  });
});

describe('a start at the very millisecond of the flow deadline', () => {
  it('is refused as stale and leaves the task queued for the deadline timer', async () => {
    const now = 1_000_000;
    const t = newTask({ flowDeadline: now + 10 });
    await fx.store.enqueue(t, now);
    expect(await fx.store.start(t.partition, t.taskId, 0, testSlot, 'n1', now + 10)).toEqual({ kind: 'stale' });
    expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'state')).toBe('queued');
    expect(await fx.client.zscore(fx.keys.inflight(t.partition), t.taskId)).toBeNull();
    expect(await fx.store.start(t.partition, t.taskId, 0, testSlot, 'n1', now + 9)).toMatchObject({ attempt: 1 });
  });
});
