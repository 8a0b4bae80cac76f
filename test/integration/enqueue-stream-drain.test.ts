/**
 * An EnqueueStream opened on a node that is already draining ends at once with
 * OK, reading nothing, as the streams open when the drain began do: its
 * producer sends elsewhere. A real node and redis-server.
 */
import { Channel } from '../../src/util/channel';
import type { pb } from '../../src/wire';
import { drainHeldOpen, startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(async () => {
  await t.close();
});

it('ends a stream opened during the drain with OK at once, while the drain still waits for a busy slot', async () => {
  t = await startTestNode(redis.url, uniquePrefix('es-drain'), { 'drain.timeout': '6s' });
  // A worker busy with a Step holds the drain open.
  const { slot: s, drained: draining } = await drainHeldOpen(t);
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
