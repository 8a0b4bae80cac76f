/**
 * A Heartbeat for an attempt that ended without its worker (its flow was cancelled)
 * answers with a Cancel naming why, once: the Cancel the canceller sent may not have
 * reached this slot. One node, real gRPC and a real redis-server.
 */
import { useSlotNode } from '../helpers/slot-node';
import { useEmbeddedRedis } from '../helpers/redis';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'hb-ended');

it('tells a worker heartbeating an attempt of a cancelled flow that the flow was cancelled, once', async () => {
  const s = await env.registeredSlot();
  await env.t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'gone', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  const task = (await s.nextOf('step_task')).step_task!;
  // The Cancel of the flow's cancellation is lost on its way to this slot.
  env.t.node.gateway.cancelAttempts = () => undefined;
  await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'gone' });
  await expect(s.nextOf('cancel', 300)).rejects.toThrow(/no frame/);
  s.send({ heartbeat: { task_token: task.task_token } });
  expect((await s.nextOf('cancel')).cancel).toMatchObject({ task_token: task.task_token, reason: 'the flow was cancelled' });
  s.send({ heartbeat: { task_token: task.task_token } });
  await expect(s.nextOf('cancel', 300)).rejects.toThrow(/no frame/);
});
