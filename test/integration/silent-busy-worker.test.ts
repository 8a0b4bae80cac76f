/**
 * A worker whose slot is running a Step and whose connection then goes silent
 * (a frozen process, a network that black-holes it: no FIN, no RST) is lost:
 * the node's HTTP/2 keepalive PING, every matching.pingInterval, goes
 * unanswered, the node drops the connection and its streams, and the attempt
 * they held fails as worker_lost (DESIGN §6), so attempt 2 follows the retry
 * policy on a healthy slot, instead of staying "running" with no method or
 * heartbeat timeout to end it.
 * A real node and redis-server; the silent worker is a raw slot behind a proxy
 * that stops forwarding both ways (tcpProxy freeze).
 */
import { createChannel, createClient, type Channel } from 'nice-grpc';
import { pb, WorkerTaskServiceDefinition } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { metricValue } from '../helpers/sdk';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
const PING_MS = 500;
let t: TestNode | undefined;
let proxy: TcpProxy | undefined;
let channel: Channel | undefined;
const open: RawSlot[] = [];
afterEach(async () => {
  proxy?.resume();
  for (const s of open.splice(0)) s.reset();
  channel?.close();
  await proxy?.close();
  await t?.close();
  t = undefined;
  proxy = undefined;
  channel = undefined;
});

async function registered(s: RawSlot): Promise<RawSlot> {
  open.push(s);
  await s.nextOf('registered');
  return s;
}

it('fails a silent busy slot\'s attempt as worker_lost within about pingInterval and retries it on a healthy slot', async () => {
  t = await startTestNode(redis.url, uniquePrefix('silent-busy'), { 'matching.pingInterval': `${PING_MS}ms` });
  proxy = await tcpProxy(Number(t.node.apiAddress.split(':')[1]));
  channel = createChannel(`127.0.0.1:${proxy.port}`);
  const silent = await registered(openSlot(createClient(WorkerTaskServiceDefinition, channel), registerFrame({ app_worker_id: 'w-silent' })));

  // No method or heartbeat timeout: only noticing the lost worker can end attempt 1.
  const { task_id } = await t.matching.enqueueStep({
    step: {
      tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'charge', step_execution_id: 's',
      retry_policy: { max_attempts: 3, initial_interval_ms: 50 },
    },
  });
  const first = (await silent.nextOf('step_task')).step_task!;
  expect(first).toMatchObject({ task_id, attempt: 1 });
  // The healthy slot connects once the silent one is busy, so attempt 1 cannot go to it.
  const healthy = await registered(openSlot(t.worker, registerFrame({ app_worker_id: 'w-healthy' })));
  // Several ping intervals of a busy slot that talks (a Pong, as the SDK sends while a task runs).
  for (let i = 0; i < 3; i++) {
    await sleep(PING_MS);
    silent.send({ pong: { sent_at_ms: Date.now() } });
  }
  expect((await t.matching.getTask({ task_id })).task).toMatchObject({ attempt: 1 });

  const frozenAt = Date.now();
  proxy.freeze();
  // Noticed within a ping interval plus its timeout (one more of each for timer slack).
  const retry = (await healthy.nextOf('step_task', 4 * PING_MS + 2000).catch(async (err: Error) => {
    const now = (await t!.matching.getTask({ task_id })).task;
    throw new Error(`no retry offered ${Date.now() - frozenAt} ms after the worker went silent (${err.message}); `
      + `the task is at attempt ${String(now?.attempt)}, ${t!.node.gateway.streamCount} streams registered`);
  })).step_task!;
  const took = Date.now() - frozenAt;
  expect(retry).toMatchObject({ task_id, attempt: 2 });
  expect(took).toBeLessThan(4 * PING_MS + 1000);
  // Attempt 1 ended as worker lost (it may have run), not returned unconsumed.
  const task = (await t.matching.getTask({ task_id })).task!;
  expect(task.attempt).toBe(2);
  expect(task.last_error?.type).toBe('worker_lost');
  expect(await metricValue(t.node.metrics.registry, 'dexzd_matching_returned_attempts_total', { reason: 'drain_no_output' })).toBe(0);
  expect(await metricValue(t.node.metrics.registry, 'dexzd_matching_returned_attempts_total', { reason: 'write_failed' })).toBe(0);
  expect(t.node.gateway.streamCount).toBe(1);

  // The network comes back: the silent worker's stream is gone (a late result has nowhere to go).
  proxy.resume();
  silent.send({ step_result: { task_token: first.task_token, output: Buffer.from('late') } });
  await expect(Promise.race([silent.ended.then((e) => e ?? new Error('stream ended')), sleep(5000).then(() => 'still open')]))
    .resolves.toBeInstanceOf(Error);
  healthy.send({ step_result: { task_token: retry.task_token, output: Buffer.from('done') } });
  expect((await healthy.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  const outcome = (await t.matching.waitOutcome({ task_id, wait_ms: 5000 })).outcome!;
  expect(outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 2 });
  expect(Buffer.from(outcome.output!).toString()).toBe('done');
});
