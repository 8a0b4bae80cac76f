/**
 * DESIGN §7 at the store, on a clock the test sets: the fetch surface's scripts
 * (claim, ExtendLock, Complete, Fail, Unlock) called with exact times, so the
 * edges — a lock lapsing at its lockUntil, a retry becoming due at its readyAt —
 * are checked to the millisecond instead of around a sleep.
 */
import { FetchStore } from '../../src/store/fetch-store';
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'lockclock');
let fetchStore: FetchStore;

beforeEach(() => {
  fetchStore = new FetchStore(fx.client, fx.keys, 60_000);
});

/** All tasks in one flow: one partition, one queue. */
const newTask = taskBuilder(() => ({ flowId: 'one flow' }));
const ids = (r: { tasks: { taskId: string }[] }) => r.tasks.map((x) => x.taskId);

/** One queued task, enqueued at `now` and ready at `readyAt`. */
async function queued(now: number, readyAt = now) {
  const t = newTask({ readyAt });
  expect((await fx.store.enqueue(t, now)).result).toBe('created');
  const claim = (worker: string, at: number, lockMs = 1000, max = 10, maxExpiries = 0) =>
    fetchStore.lock(t.partition, [t.queue], worker, lockMs, max, maxExpiries, at);
  return { t, claim };
}

it('a lock is live up to its lockUntil, exclusive: then its holder is refused LOCK_EXPIRED and another worker claims it', async () => {
  const now = Date.now();
  const { t, claim } = await queued(now);
  expect((await claim('A', now)).tasks).toEqual([expect.objectContaining({ taskId: t.taskId, lockUntil: now + 1000 })]);

  // 1 ms before: still A's, and nobody else's
  expect(ids(await claim('B', now + 999))).toEqual([]);
  expect(await fetchStore.extend(t.partition, t.taskId, 'A', 1, now + 999)).toMatchObject({ kind: 'ok', lockUntil: now + 1000 });

  // at lockUntil: lapsed for the holder and for the claim alike
  expect(await fetchStore.extend(t.partition, t.taskId, 'A', 1000, now + 1000)).toEqual({ kind: 'refused', verdict: 'lock-expired' });
  expect((await claim('B', now + 1000)).tasks).toEqual([expect.objectContaining({ taskId: t.taskId, lockUntil: now + 2000 })]);
  expect(await fetchStore.extend(t.partition, t.taskId, 'A', 1000, now + 1000)).toEqual({ kind: 'refused', verdict: 'locked-by-other' });
});

it('a Fail with retries makes the task fetchable at now + retryTimeout, not before, carrying its retries and attempt', async () => {
  const now = Date.now();
  const { t, claim } = await queued(now);
  expect(ids(await claim('A', now))).toEqual([t.taskId]);
  expect(await fetchStore.fail(t.partition, t.taskId, 'A', 'busy', 'Busy', 2, 500, now + 10))
    .toEqual({ kind: 'ok', terminal: false, readyAt: now + 510, queue: t.queue });

  const early = await claim('B', now + 509);
  expect(ids(early)).toEqual([]);
  expect(early.nextDue).toBe(now + 510);
  expect((await claim('B', now + 510)).tasks).toEqual([expect.objectContaining({ taskId: t.taskId, retries: 2, attempt: 1 })]);
});

it('ExtendLock sets the lock from now, and a Complete after it holds the lock for the extended duration', async () => {
  const now = Date.now();
  const { t, claim } = await queued(now);
  expect(ids(await claim('A', now, 1000))).toEqual([t.taskId]);
  expect(await fetchStore.extend(t.partition, t.taskId, 'A', 5000, now + 100)).toMatchObject({ kind: 'ok', lockUntil: now + 5100 });

  // A Complete that stops after its outcome leaves the task held a full (extended) lock duration from it.
  fetchStore.faults.completeAfterOutcome = true;
  await expect(fetchStore.complete(t.partition, t.taskId, 'A', Buffer.from('r'), 'k', now + 200)).rejects.toThrow(/ZD_FAULT/);
  fetchStore.faults.completeAfterOutcome = false;
  expect(ids(await claim('B', now + 5199))).toEqual([]);
  expect(ids(await claim('B', now + 5200))).toEqual([t.taskId]);
});

it('Unlock gives the task back at its place in the queue, fetchable at once, without counting a lock expiry', async () => {
  const now = Date.now();
  const first = await queued(now, now);
  const second = await queued(now, now + 10);
  expect(first.t.queue).toBe(second.t.queue);
  // fetch.maxLockExpiries = 1: one counted expiry more and the task would turn terminal
  for (let round = 0; round < 3; round++) {
    const at = now + 20 + round * 10;
    expect(ids(await first.claim(`W${round}`, at, 60_000, 1, 1))).toEqual([first.t.taskId]);
    expect(await fetchStore.unlock(first.t.partition, first.t.taskId, `W${round}`, at + 5))
      .toEqual({ kind: 'ok', readyAt: now, queue: first.t.queue });
  }
  const again = await first.claim('B', now + 100, 60_000, 1, 1);
  expect(again.terminal).toEqual([]);
  expect(again.tasks).toEqual([expect.objectContaining({ taskId: first.t.taskId, attempt: 1 })]);
  expect(await fx.client.hget(fx.keys.task(first.t.partition, first.t.taskId), 'lockExpiries')).toBeNull();
});

it('a claim takes at most maxTasks, in queue order, and says that more is due', async () => {
  const now = Date.now();
  const tasks = [await queued(now, now), await queued(now, now + 1), await queued(now, now + 2)];
  const r = await tasks[0]!.claim('A', now + 10, 1000, 2);
  expect(ids(r)).toEqual([tasks[0]!.t.taskId, tasks[1]!.t.taskId]);
  expect(r.nextDue).toBeLessThanOrEqual(now + 10);
  const rest = await tasks[0]!.claim('A', now + 10, 1000, 2);
  expect(ids(rest)).toEqual([tasks[2]!.t.taskId]);
  // all locked now: nothing is due before the first lock lapses
  expect(rest.nextDue).toBe(now + 1010);
});

it('a task whose flow deadline is now is past it: not claimed, as a slot would not start it', async () => {
  const now = Date.now();
  const due = await queued(now);
  const late = newTask({ flowDeadline: now + 50 });
  const inTime = newTask({ flowDeadline: now + 51 });
  for (const t of [late, inTime]) expect((await fx.store.enqueue(t, now)).result).toBe('created');
  expect(ids(await due.claim('A', now + 50))).toEqual([due.t.taskId, inTime.taskId]);
});

it('drops the queue entries of missing and terminal tasks it passes, so they count neither as backlog nor as due', async () => {
  const now = Date.now();
  const { t, claim } = await queued(now, now + 5);
  const terminal = await queued(now);
  expect(ids(await terminal.claim('A', now, 1000, 1))).toEqual([terminal.t.taskId]);
  expect(await fetchStore.fail(terminal.t.partition, terminal.t.taskId, 'A', 'bad', 'Data', 0, 0, now)).toMatchObject({ kind: 'ok', terminal: true });
  const queue = fx.keys.queue(t.partition, t.queue);
  // entries left behind for a task that is gone, and for the terminal one
  await fx.client.zadd(queue, now, `${t.partition}-gone`, now + 1, terminal.t.taskId);

  const r = await claim('B', now + 10);
  expect(ids(r)).toEqual([t.taskId]);
  expect(await fx.client.zrange(queue, 0, -1)).toEqual([t.taskId]);
  expect(r.nextDue).toBe(now + 1010);
});

it('an operator retry of a poison task queues it fetchable at once with its lock expiries counted from zero again', async () => {
  const now = Date.now();
  const { t, claim } = await queued(now);
  // fetch.maxLockExpiries = 1: the first expired lock is claimed, the second turns the task terminal
  expect(ids(await claim('A', now, 1000, 1, 1))).toEqual([t.taskId]);
  expect(ids(await claim('B', now + 1000, 1000, 1, 1))).toEqual([t.taskId]);
  const poisoned = await claim('C', now + 2000, 1000, 1, 1);
  expect([ids(poisoned), poisoned.terminal.map((x) => x.taskId)]).toEqual([[], [t.taskId]]);

  expect(await fetchStore.retryTerminal(t.partition, t.taskId, 2, now + 3000)).toEqual({ kind: 'queued', queue: t.queue });
  expect((await claim('D', now + 3000, 1000, 1, 1)).tasks).toEqual([expect.objectContaining({ taskId: t.taskId, retries: 2 })]);
  // D's lock lapses: a first expiry since the retry, which the budget still allows
  const again = await claim('E', now + 4000, 1000, 1, 1);
  expect([ids(again), again.terminal]).toEqual([[t.taskId], []]);
  expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'lockExpiries')).toBe('1');
});

it('a claim that finds only a task past its flow deadline, due at this very millisecond, says nothing is due now', async () => {
  const now = Date.now();
  const t = newTask({ readyAt: now, flowDeadline: now - 1 });
  expect((await fx.store.enqueue(t, now - 10)).result).toBe('created');
  const r = await fetchStore.lock(t.partition, [t.queue], 'A', 1000, 10, 0, now);
  expect(r.tasks).toEqual([]);
  // "due now" would have a waiting fetch look again at once, and again, until the owner's timer ends the task
  expect(r.nextDue).toBeGreaterThan(now);
});

it('peeks at the score of a queue\'s first entry: the earliest readyAt, and nothing for an empty queue', async () => {
  const now = Date.now();
  const later = await queued(now, now + 500);
  const sooner = await queued(now, now + 200);
  expect(await fetchStore.firstScore(sooner.t.partition, sooner.t.queue)).toBe(now + 200);
  expect(await fetchStore.firstScore(later.t.partition, `${later.t.queue}-none`)).toBeUndefined();
});
