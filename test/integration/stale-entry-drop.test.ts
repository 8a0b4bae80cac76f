/**
 * dropStaleEntry (dropStaleEntry-2.lua) removes a queue entry only when its
 * task hash is gone. A start that found the task gone calls it, but the same
 * task id may be enqueued again before the call lands (ids are deterministic):
 * the entry of a task that exists is that live task's, and removing it would
 * lose an acknowledged enqueue (DESIGN §11.1). Real redis-server.
 */
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'stale-drop');
const newTask = taskBuilder();

it('leaves the entry of a task that exists, and removes the entry of one that is gone', async () => {
  const now = Date.now();
  const live = newTask();
  const gone = newTask({ flowId: live.flowId });
  await fx.store.enqueue(live, now);
  await fx.store.enqueue(gone, now);
  const queue = fx.keys.queue(live.partition, live.queue);

  expect(await fx.store.dropStaleEntry(live.partition, live.queue, live.taskId)).toBe(false);
  expect(await fx.client.zscore(queue, live.taskId)).not.toBeNull();
  expect(await fx.client.hget(fx.keys.task(live.partition, live.taskId), 'state')).toBe('queued');

  await fx.client.del(fx.keys.task(gone.partition, gone.taskId));
  expect(await fx.store.dropStaleEntry(gone.partition, gone.queue, gone.taskId)).toBe(true);
  expect(await fx.client.zscore(queue, gone.taskId)).toBeNull();
  expect(await fx.client.zscore(queue, live.taskId)).not.toBeNull();
});
