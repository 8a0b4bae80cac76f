/**
 * A flow deadline ends queued tasks only (DESIGN §6: "queued past flow deadline
 * ──► TIMED_OUT"); a running attempt is left to its attempt deadlines. The
 * owner's deadline timer may fire while the attempt runs: it finds the task
 * running and drops it from the partition's deadlines. When the attempt then
 * comes back unconsumed, the task is queued again and must be found among the
 * flow deadlines (DESIGN §2: `deadlines` holds the flow deadlines of queued
 * tasks), so that the timer — or a new owner reloading it — still ends it.
 */
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'fdl');
const newTask = taskBuilder();
const LEASE = 'n1:1';

it('leaves a running attempt to run past its flow deadline, and times the task out once it is back in its queue', async () => {
  const now = Date.now();
  const deadline = now + 1000;
  const t = newTask({ flowDeadline: deadline });
  await fx.store.enqueue(t, now);
  await fx.client.set(fx.keys.lease(t.partition), LEASE);
  expect(await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n1', now)).toMatchObject({ attempt: 1 });

  expect(await fx.store.timeout(t.partition, t.taskId, deadline + 1, LEASE)).toBe('not-due');
  expect((await fx.store.readTask(t.partition, t.taskId))?.state?.toString()).toBe('running');
  expect(await fx.store.readDone(t.partition, t.taskId)).toBeNull();
  expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBeNull();

  const back = await fx.store.release({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' });
  expect(back).toMatchObject({ kind: 'released', flowDeadline: deadline });
  expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBe(String(deadline));
  expect(await fx.store.timeout(t.partition, t.taskId, deadline + 2, LEASE)).toBe('timed-out');
  expect((await fx.store.readDone(t.partition, t.taskId))?.status?.toString()).toBe('TIMED_OUT');
});

it('a failed attempt retried before its flow deadline is among the flow deadlines again, and times out while it waits in its queue', async () => {
  const now = Date.now();
  const deadline = now + 5000;
  const t = newTask({ flowDeadline: deadline, initialInterval: 100 });
  await fx.store.enqueue(t, now);
  await fx.client.set(fx.keys.lease(t.partition), LEASE);
  expect(await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n1', now)).toMatchObject({ attempt: 1 });
  // the deadline timer fires while the attempt runs (as if the clock were past it): the task leaves the deadlines
  expect(await fx.store.timeout(t.partition, t.taskId, deadline + 1, LEASE)).toBe('not-due');
  expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBeNull();

  const failure = { message: 'boom', type: 'Boom', nonRetryable: false, retryAfterMs: 0 };
  expect(await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' }, failure, now + 10))
    .toMatchObject({ kind: 'retry', attempt: 2, readyAt: now + 110, flowDeadline: deadline });
  expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBe(String(deadline));
  expect(await fx.store.timeout(t.partition, t.taskId, deadline, LEASE)).toBe('timed-out');
  expect((await fx.store.readDone(t.partition, t.taskId))?.status?.toString()).toBe('TIMED_OUT');
});

it('drops the flow deadline of a task whose hash is gone, so that it is not found due again and again', async () => {
  const now = Date.now();
  const deadline = now + 1000;
  const t = newTask({ flowDeadline: deadline });
  await fx.store.enqueue(t, now);
  await fx.client.set(fx.keys.lease(t.partition), LEASE);
  await fx.client.del(fx.keys.task(t.partition, t.taskId)); // removed from outside (an eviction, an operator)
  expect(await fx.store.timeout(t.partition, t.taskId, deadline + 1, LEASE)).toBe('gone');
  expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBeNull();
});
