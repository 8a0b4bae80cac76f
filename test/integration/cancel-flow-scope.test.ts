/**
 * CancelFlow ends the tasks of one flow of one tenant (DESIGN §2: the flow set
 * is keyed by tenant and flow id): another tenant's flow of the same id, in
 * the same partition, and another flow of the same tenant keep their tasks.
 */
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'cfs');
const newTask = taskBuilder();

it('cancels only the named tenant\'s flow, queued and running tasks alike', async () => {
  const now = Date.now();
  const p = 3;
  const mine = newTask({ partition: p, tenant: 'acme', flowId: 'order-7' });
  const mineRunning = newTask({ partition: p, tenant: 'acme', flowId: 'order-7' });
  const otherTenant = newTask({ partition: p, tenant: 'globex', flowId: 'order-7' });
  const otherTenantRunning = newTask({ partition: p, tenant: 'globex', flowId: 'order-7' });
  const otherFlow = newTask({ partition: p, tenant: 'acme', flowId: 'order-8' });
  for (const t of [mine, mineRunning, otherTenant, otherTenantRunning, otherFlow]) await fx.store.enqueue(t, now);
  await fx.store.start(p, mineRunning.taskId, 1, testSlot, 'n-mine', now);
  await fx.store.start(p, otherTenantRunning.taskId, 1, testSlot, 'n-other', now);

  const r = await fx.store.cancelFlow(p, 'acme', 'order-7', 'stop', now);
  expect(r.queued).toEqual([mine.taskId]);
  expect(r.running.map((x) => x.taskId)).toEqual([mineRunning.taskId]);

  for (const t of [mine, mineRunning]) {
    expect((await fx.store.readDone(p, t.taskId))?.status?.toString()).toBe('CANCELLED');
  }
  for (const t of [otherTenant, otherTenantRunning, otherFlow]) {
    expect(await fx.store.readDone(p, t.taskId)).toBeNull();
  }
  expect((await fx.store.readTask(p, otherTenant.taskId))?.state?.toString()).toBe('queued');
  expect((await fx.store.readTask(p, otherFlow.taskId))?.state?.toString()).toBe('queued');
  expect((await fx.store.readTask(p, otherTenantRunning.taskId))?.state?.toString()).toBe('running');
  expect(await fx.client.zscore(fx.keys.inflight(p), otherTenantRunning.taskId)).not.toBeNull();
  expect(await fx.store.complete({ partition: p, taskId: otherTenantRunning.taskId, attempt: 1, nonce: 'n-other' }, Buffer.from('ok'), now))
    .toMatchObject({ kind: 'completed' });
});

it('gives a cancelled task, queued or running, an outcome that carries the reason and is not to be retried', async () => {
  const now = Date.now();
  const p = 5;
  const queued = newTask({ partition: p, tenant: 'acme', flowId: 'order-9' });
  const running = newTask({ partition: p, tenant: 'acme', flowId: 'order-9' });
  for (const t of [queued, running]) await fx.store.enqueue(t, now);
  await fx.store.start(p, running.taskId, 1, testSlot, 'n-run', now);

  await fx.store.cancelFlow(p, 'acme', 'order-9', 'customer gave up', now);
  for (const t of [queued, running]) {
    const done = await fx.store.readDone(p, t.taskId);
    expect([t.taskId, done?.status?.toString(), done?.errMsg?.toString(), done?.errType?.toString(), done?.errNR?.toString()])
      .toEqual([t.taskId, 'CANCELLED', 'customer gave up', 'cancelled', '1']);
  }
});
