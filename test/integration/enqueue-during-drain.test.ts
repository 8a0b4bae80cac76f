/**
 * A producer's Client keeps enqueuing while its node drains (a rolling
 * restart): the node ends every EnqueueStream and reads no new one, but still
 * serves unary EnqueueSteps for the whole drain. The Client sends what the
 * drained stream left unanswered, and its next enqueues for a moment, as
 * unary calls, instead of opening stream after stream that ends at once and
 * failing the enqueue. A real node and redis-server.
 */
import { Client } from '../../src';
import { drainHeldOpen, startTestNode, type TestNode } from '../helpers/node';
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
  const { slot: s, drained: draining } = await drainHeldOpen(t);
  const during = await Promise.all(Array.from({ length: 5 }, (_, i) =>
    client!.enqueueStep({ tenant: 'acme', flowId: `during${i}`, flowType: 'order', stepType: 's', stepExecutionId: '1' })));
  expect(during.map((r) => r.created)).toEqual([true, true, true, true, true]);
  const ids = during.map((r) => r.taskId);
  expect((await Promise.all(ids.map((id) => t.matching.getTask({ task_id: id })))).map((r) => r.task?.task_id)).toEqual(ids);
  s.reset();
  await draining;
});
