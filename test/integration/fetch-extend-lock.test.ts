/**
 * ExtendLock. DESIGN §6–§7, docs/fetch.md "Fetches and slot streams share queues":
 * an expired lock is claimable as is, by a fetch or a stream slot, with no lag
 * ("a task is available the instant its lock expires, not on the next sweep
 * tick"), and ExtendLock sets lockUntil = now + lockDuration. The owner is told
 * when a fetch's lock lapses; an ExtendLock to a shorter lock was not told, so
 * a slot got the task only at the owner's next backlog pass (up to 5 s later),
 * or at the lock taken at the fetch.
 *
 * DESIGN §7: ExtendLock moves the lock itself, not only the answer and the
 * queue entry. Past the lock taken at the fetch, an extended lock is still
 * its worker's: its Complete is recorded, no other fetch claims the task, and
 * no stream slot starts it (a second run of work a fetch worker still holds).
 *
 * docs/fetch.md "Long poll": a waiting fetch wakes at the next due time its
 * claim saw in its queues (a lock lapsing), and a dead fetch worker costs
 * exactly one lock duration. ExtendLock sets lockUntil = now + lockDuration, so
 * a shorter lock lapses before the time a waiting fetch saw: the fetches of its
 * topic must hear of it and claim the task once it lapses, not at the end of
 * their wait (or at the lock taken at the fetch).
 */
import { HINT_TTL_MS } from '../../src/gateway/fetch-hints';
import { pb } from '../../src/wire';
import { fetchClients, sleep, step, topic } from '../helpers/fetch';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';

const redis = useEmbeddedRedis();
const node = useSlotNode(redis, 'extendlock');

it('a lock shortened by ExtendLock is a slot\'s to start once it lapses, not at the lock taken at the fetch', async () => {
  const { t } = node;
  const { external } = fetchClients(t);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 60_000 });
  expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
  // The worker shortens its lock, then dies.
  const lockUntil = Number((await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 300 })).lock_until_ms);
  const s = await node.registeredSlot();
  const task = (await s.nextOf('step_task', lockUntil - Date.now() + 1500)).step_task!;
  expect(task).toMatchObject({ task_id: id, attempt: 1 });
  expect(Date.now()).toBeGreaterThanOrEqual(lockUntil);
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.RUNNING);
});

it('an extended lock holds past the lock taken at the fetch: no slot or other fetch gets the task, and its worker completes it', async () => {
  const { t } = node;
  const { external } = fetchClients(t);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 300 });
  expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
  const fetchedUntil = Number(got.tasks[0]!.lock_until_ms);
  const ext = await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 60_000 });
  expect(Number(ext.lock_until_ms)).toBeGreaterThan(fetchedUntil + 50_000);
  // An idle slot of the flow type, there before the first lock would have lapsed.
  const s = await node.registeredSlot();
  const taken = s.nextOf('step_task', fetchedUntil - Date.now() + 1000).then((f) => f.step_task!.task_id, () => undefined);
  await sleep(Math.max(0, fetchedUntil - Date.now()) + 100);
  expect((await external.fetchAndLock({ worker_id: 'B', topics: [topic()], wait_ms: 1 })).tasks).toEqual([]);
  expect(await taken).toBeUndefined();
  expect((await t.matching.getTask({ task_id: id })).task).toMatchObject({ state: pb.TaskState.LOCKED, app_worker_id: 'A' });
  await external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('done'), has_result: true });
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.DONE);
});

it('a waiting fetch claims a task whose lock ExtendLock shortened once that lock lapses, not at the end of its wait', async () => {
  const { t } = node;
  const { external } = fetchClients(t);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 60_000 });
  expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
  // B waits on the topic: its claim sees the task locked for a minute (past the node's hint of A's
  // claim, which would make it look again within HINT_TTL_MS).
  await new Promise((r) => setTimeout(r, HINT_TTL_MS + 100));
  const started = Date.now();
  const waiting = external.fetchAndLock({ worker_id: 'B', topics: [topic()], wait_ms: 5000, lock_duration_ms: 10_000 });
  await new Promise((r) => setTimeout(r, 200));
  // A shortens its lock, then dies.
  const lockUntil = Number((await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 300 })).lock_until_ms);
  const r = await waiting;
  expect(r.tasks.map((x) => x.task_id)).toEqual([id]);
  expect(Date.now()).toBeGreaterThanOrEqual(lockUntil);
  expect(Date.now() - started).toBeLessThan(2500);
});

it('an ExtendLock that names no lock duration, or 0, locks for fetch.lockDuration from now: neither the ceiling nor the lock taken at the fetch', async () => {
  const { t } = node;
  const { external } = fetchClients(t);
  const { lockDuration, maxLockDuration } = t.config.fetch;
  expect(lockDuration).toBeLessThan(maxLockDuration);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 300 });
  expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
  for (const request of [{ task_id: id, worker_id: 'A' }, { task_id: id, worker_id: 'A', lock_duration_ms: 0 }]) {
    const before = Date.now();
    const until = Number((await external.extendLock(request)).lock_until_ms);
    expect(until).toBeGreaterThanOrEqual(before + lockDuration);
    expect(until).toBeLessThanOrEqual(Date.now() + lockDuration);
  }
  await external.complete({ task_id: id, worker_id: 'A' });
});
