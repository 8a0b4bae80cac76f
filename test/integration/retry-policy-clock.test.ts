/**
 * DESIGN §6 at the store, on a clock the test sets: an attempt's deadline at its
 * start, and the retry policy a failed attempt runs, each from the task's own
 * spec (timeouts, maxAttempts, initialInterval, backoffCoefficient, maxInterval),
 * checked to the millisecond. The builder's policy (3 attempts, ×2, 60 s) is the
 * server's default shape, so each test sets values apart from it: a script that
 * read a default instead of the task's value would give another time.
 */
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'retryclock');
const newTask = taskBuilder();
const failure = { message: 'boom', type: 'Boom', nonRetryable: false, retryAfterMs: 0 };

it('backs off initialInterval × backoffCoefficient^(attempt-1), capped at maxInterval, and fails the Step after maxAttempts', async () => {
  const now = Date.now();
  const t = newTask({ maxAttempts: 5, initialInterval: 100, backoffCoefficient: 3, maxInterval: 1000 });
  await fx.store.enqueue(t, now);
  // 100, 300, 900, then min(2700, 1000)
  const backoffs = [100, 300, 900, 1000];
  let at = now;
  for (let attempt = 1; attempt <= 4; attempt++) {
    expect(await fx.store.start(t.partition, t.taskId, attempt, testSlot, `n${attempt}`, at)).toMatchObject({ attempt });
    const failed = await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt, nonce: `n${attempt}` }, failure, at + 10);
    expect(failed).toMatchObject({ kind: 'retry', attempt: attempt + 1, readyAt: at + 10 + backoffs[attempt - 1]! });
    // not ready a millisecond before its backoff is over
    expect(await fx.store.start(t.partition, t.taskId, attempt + 1, testSlot, 'early', at + 9 + backoffs[attempt - 1]!))
      .toEqual({ kind: 'not-ready' });
    at += 10 + backoffs[attempt - 1]!;
  }
  expect(await fx.store.start(t.partition, t.taskId, 5, testSlot, 'n5', at)).toMatchObject({ attempt: 5 });
  expect(await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 5, nonce: 'n5' }, failure, at + 10))
    .toMatchObject({ kind: 'terminal', status: 'FAILED' });
});

it('a maxAttempts under the default ends the Step at its own last attempt', async () => {
  const now = Date.now();
  const t = newTask({ maxAttempts: 1 });
  await fx.store.enqueue(t, now);
  await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n1', now);
  expect(await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' }, failure, now + 10))
    .toMatchObject({ kind: 'terminal', status: 'FAILED' });
});

it('an attempt is due at the earlier of its method and heartbeat timeouts from its start, whichever of them is shorter', async () => {
  const now = Date.now();
  const cases = [
    { methodTimeout: 5000, heartbeatTimeout: 1000, due: 1000 },
    { methodTimeout: 1000, heartbeatTimeout: 5000, due: 1000 },
    { methodTimeout: 2000, heartbeatTimeout: 0, due: 2000 },
    { methodTimeout: 0, heartbeatTimeout: 3000, due: 3000 },
  ];
  for (const c of cases) {
    const t = newTask({ methodTimeout: c.methodTimeout, heartbeatTimeout: c.heartbeatTimeout });
    await fx.store.enqueue(t, now);
    const started = await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n1', now + 50);
    expect([c, started]).toEqual([c, expect.objectContaining({ deadlineAt: now + 50 + c.due })]);
    expect([c, Number(await fx.client.zscore(fx.keys.inflight(t.partition), t.taskId))]).toEqual([c, now + 50 + c.due]);
  }
});

it('a retry that would be ready at the flow deadline itself ends the Step TIMED_OUT: the deadline admits no start at it', async () => {
  const now = Date.now();
  const t = newTask({ flowDeadline: now + 1000, maxAttempts: 5, initialInterval: 100 });
  await fx.store.enqueue(t, now);
  await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n1', now);
  // now + 900 + 100 is the deadline, to the millisecond
  expect(await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' }, failure, now + 900))
    .toMatchObject({ kind: 'terminal', status: 'TIMED_OUT' });
  expect((await fx.store.readDone(t.partition, t.taskId))?.status?.toString()).toBe('TIMED_OUT');
});
