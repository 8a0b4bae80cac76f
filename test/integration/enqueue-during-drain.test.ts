/**
 * A producer's Client keeps enqueuing while its node drains (a rolling
 * restart): the node ends every EnqueueStream and reads no new one, but still
 * serves unary EnqueueSteps for the whole drain. The Client sends what the
 * drained stream left unanswered, and its next enqueues for a moment, as
 * unary calls, instead of opening stream after stream that ends at once and
 * failing the enqueue. A real node and redis-server.
 */
import { Client } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let client: Client | undefined;
afterEach(async () => {
  client?.close();
  await t.close();
});

it('enqueues while its node drains, through unary calls', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain-enq'), { 'drain.timeout': '4s' });
  client = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 3000 });
  // One enqueue over the stream before the drain.
  expect((await client.enqueueStep({ tenant: 'acme', flowId: 'before', flowType: 'order', stepType: 's', stepExecutionId: '1' })).created).toBe(true);
  // A worker busy with a Step holds the drain open.
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  await s.nextOf('step_task');
  const draining = t.node.drain();
  await new Promise((r) => setTimeout(r, 100));
  expect(t.node.state).toBe('draining');
  const during = await Promise.all(Array.from({ length: 5 }, (_, i) =>
    client!.enqueueStep({ tenant: 'acme', flowId: `during${i}`, flowType: 'order', stepType: 's', stepExecutionId: '1' })));
  expect(during.map((r) => r.created)).toEqual([true, true, true, true, true]);
  const ids = during.map((r) => r.taskId);
  expect((await Promise.all(ids.map((id) => t.matching.getTask({ task_id: id })))).map((r) => r.task?.task_id)).toEqual(ids);
  s.reset();
  await draining;
});
