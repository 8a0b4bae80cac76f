/**
 * A connection to Redis that drops after a command ran but before its reply
 * came back: ioredis sends the command again on the new connection. A start or
 * an enqueue that started a Step then finds its own write; it must answer as
 * the first time (refused, the attempt would stay running with no slot), so
 * the slot gets the Step as attempt 1.
 * A real redis-server behind a proxy that can lose replies and reset.
 */
import net from 'node:net';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
let proxy: ReplyLosingProxy | undefined;
afterEach(async () => {
  await t?.close();
  await proxy?.close();
});

interface ReplyLosingProxy {
  url: string;
  /** Replies from Redis are dropped from now on (requests still reach it). */
  loseReplies(): void;
  /** Every connection is reset; replies flow again on the next ones. */
  resetAll(): void;
  close(): Promise<void>;
}

async function replyLosingProxy(targetPort: number): Promise<ReplyLosingProxy> {
  const sockets = new Set<net.Socket>();
  let losing = false;
  const server = net.createServer((client) => {
    const target = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(target);
    client.on('data', (b) => target.write(b));
    target.on('data', (b) => {
      if (!losing) client.write(b);
    });
    const end = () => {
      client.destroy();
      target.destroy();
      sockets.delete(client);
      sockets.delete(target);
    };
    client.on('error', end).on('close', end);
    target.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    loseReplies: () => void (losing = true),
    resetAll() {
      for (const s of sockets) s.destroy();
      losing = false;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

it('gives a Step started at enqueue, whose reply a reset lost, to its slot as attempt 1', async () => {
  proxy = await replyLosingProxy(Number(new URL(redis.url).port));
  // Leases outlast the blip: the test is about the enqueue, not about ownership.
  t = await startTestNode(proxy.url, uniquePrefix('resend'), { 'cluster.leaseTtl': '20s', 'cluster.nodeTtl': '20s', 'cluster.heartbeat': '2s' });
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  // A first Step loads the scripts (a NOSCRIPT answer would be lost too, and nothing run).
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'warm', flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
  const warm = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: warm.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  proxy.loseReplies();
  const enqueued = t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'blip', flow_type: 'order', step_type: 'pack', step_execution_id: 's' } })
    .then((r) => r.task_id, (e: Error) => e);
  await new Promise((r) => setTimeout(r, 300)); // the script ran in Redis; its reply is lost
  proxy.resetAll();
  const task = (await s.nextOf('step_task', 8000)).step_task!;
  expect(task.attempt).toBe(1);
  expect(task.flow_id).toBe('blip');
  expect(await enqueued).toBe(task.task_id); // created, as the first run answered
  s.reset();
});

it('gives an offered Step, whose start reply a reset lost, to its slot as attempt 1', async () => {
  proxy = await replyLosingProxy(Number(new URL(redis.url).port));
  t = await startTestNode(proxy.url, uniquePrefix('resend'), {
    'cluster.leaseTtl': '20s', 'cluster.nodeTtl': '20s', 'cluster.heartbeat': '2s', 'matching.syncMatchWait': '10ms',
  });
  const step = (flow: string) => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's' });
  // Queued (no slot yet), then offered: the first one loads the start script.
  await t.matching.enqueueStep({ step: step('warm') });
  const first = openSlot(t.worker, registerFrame());
  await first.nextOf('registered');
  const warm = (await first.nextOf('step_task')).step_task!;
  first.send({ step_result: { task_token: warm.task_token, output: Buffer.from('ok') } });
  await first.nextOf('result_ack');
  first.reset();
  await new Promise((r) => setTimeout(r, 200));
  const r = await t.matching.enqueueStep({ step: step('blip') });
  await new Promise((res) => setTimeout(res, 100));
  proxy.loseReplies();
  const s = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await s.nextOf('registered');
  await new Promise((res) => setTimeout(res, 300)); // offered; the start ran in Redis, its reply is lost
  proxy.resetAll();
  expect((await s.nextOf('step_task', 8000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  s.reset();
});
