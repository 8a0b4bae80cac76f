/**
 * A Step with no flow deadline that no worker takes waits in its queue for
 * ever (scale to zero: the Step waits until a worker starts): none of its keys
 * expires and no deadline is set for it, when it is enqueued and when a slot
 * gives it back unconsumed.
 */
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'unbounded');
const newTask = taskBuilder();

it('keeps a queued Step without a flow deadline with no TTL on any of its keys and no deadline, also once given back', async () => {
  const t = newTask({ flowDeadline: 0 });
  const p = t.partition;
  const keys = [fx.keys.task(p, t.taskId), fx.keys.queue(p, t.queue), fx.keys.queues(p), fx.keys.flow(p, t.tenant, t.flowId)];
  const expectWaitingForEver = async () => {
    expect(await fx.client.zscore(fx.keys.queue(p, t.queue), t.taskId)).not.toBeNull();
    // -1: the key exists and never expires (-2 would be a key that is gone)
    expect(await Promise.all(keys.map((k) => fx.client.pttl(k)))).toEqual(keys.map(() => -1));
    expect(await fx.client.zscore(fx.keys.deadlines(p), t.taskId)).toBeNull();
  };

  await fx.store.enqueue(t, Date.now());
  await expectWaitingForEver();

  // A slot took it and gave it back without running it (a decline, a stop without output).
  await fx.store.start(p, t.taskId, 0, testSlot, 'nonce-1', Date.now());
  expect(await fx.store.release({ partition: p, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' })).toMatchObject({ kind: 'released' });
  await expectWaitingForEver();
});
