/**
 * DESIGN §4, §6: a declined Step goes back to its queue unconsumed, at its
 * original readyAt, and is offered elsewhere at once. Stream slots and fetch
 * workers share queues, so a fetch worker of the topic gets it at once too,
 * and ahead of a Step enqueued after it (it keeps its place).
 */
import { pb } from '../../src/wire';
import { fetchClients, sleep, step, topic } from '../helpers/fetch';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';

const redis = useEmbeddedRedis();
const node = useSlotNode(redis, 'declinefetch');

it('a Step a slot declined is fetchable at once, ahead of a Step enqueued after it', async () => {
  const { t } = node;
  const { external } = fetchClients(t);
  const s = await node.registeredSlot({ app_worker_id: 'lacks' });
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const offered = (await s.nextOf('step_task')).step_task!;
  expect(offered).toMatchObject({ task_id: id, attempt: 1 });
  await sleep(5);
  const later = (await t.matching.enqueueStep({ step: step({ flow_id: 'f2' }) })).task_id;
  s.send({ decline: { task_token: offered.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  const got = await external.fetchAndLock({ worker_id: 'F', topics: [topic()], max_tasks: 1, wait_ms: 2000 });
  expect(got.tasks.map((x) => [x.task_id, x.attempt])).toEqual([[id, 1]]);
  expect((await external.fetchAndLock({ worker_id: 'F', topics: [topic()], max_tasks: 1, wait_ms: 1 })).tasks.map((x) => x.task_id)).toEqual([later]);
});
