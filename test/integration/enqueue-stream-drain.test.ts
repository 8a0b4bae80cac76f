/**
 * An EnqueueStream opened on a node that is already draining ends at once with
 * OK, reading nothing, as the streams open when the drain began do: its
 * producer sends elsewhere. A real node and redis-server.
 */
import { Channel } from '../../src/util/channel';
import type { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(async () => {
  await t.close();
});

it('ends a stream opened during the drain with OK at once, while the drain still waits for a busy slot', async () => {
  t = await startTestNode(redis.url, uniquePrefix('es-drain'), { 'drain.timeout': '6s' });
  // A worker busy with a Step holds the drain open.
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  await s.nextOf('step_task');
  const draining = t.node.drain();
  await new Promise((r) => setTimeout(r, 100));
  expect(t.node.state).toBe('draining');
  expect(t.node.gateway.busySlots()).toBe(1);

  // A producer connects now and has nothing to send yet.
  const requests = new Channel<pb.IEnqueueStreamRequest>();
  const answers: pb.EnqueueStreamResponse[] = [];
  const ended = (async () => {
    for await (const res of t.matching.enqueueStream(requests)) answers.push(res);
  })().then(() => ({ ok: true, busy: t.node.gateway.busySlots() }), (err: unknown) => ({ ok: false, err, busy: t.node.gateway.busySlots() }));
  const end = await ended;
  // Ended with OK during the drain, not cut off when the server shut down after it.
  expect(end).toMatchObject({ ok: true, busy: 1 });
  expect(answers).toEqual([]);
  requests.close();
  s.reset();
  await draining;
});
