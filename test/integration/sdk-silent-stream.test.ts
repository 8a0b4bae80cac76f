/**
 * A worker whose connection goes silent without closing (a frozen node, a
 * load balancer or network that black-holes it) notices: its idle streams
 * hear a Ping every matching.pingInterval, and after three intervals without
 * a frame it resets them and reconnects, rather than staying "registered" on
 * a dead connection while the node writes tasks into it.
 * A real node behind a proxy that stops forwarding both ways (tcpProxy freeze).
 */
import { Worker } from '../../src';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { gate, recordingLogger } from '../helpers/sdk';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
let w: Worker | undefined;
let freezer: TcpProxy | undefined;
afterEach(async () => {
  freezer?.resume();
  await w?.stop();
  await freezer?.close();
  await t?.close();
});

it('resets its idle streams after three silent ping intervals and registers again', async () => {
  t = await startTestNode(redis.url, uniquePrefix('silent'), { 'matching.pingInterval': '300ms' });
  freezer = await tcpProxy(Number(t.node.apiAddress.split(':')[1]));
  const logger = recordingLogger();
  w = new Worker({
    address: `127.0.0.1:${freezer.port}`, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger,
    reconnectBackoff: { initialMs: 50, maxMs: 200 }, flowTypes: { order: { steps: { charge: () => 'ok' } } },
  });
  void w.start().catch(() => undefined);
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  freezer.freeze();
  // Noticed within a few intervals: the stream is reset, the slot has no registered stream.
  await waitFor(() => w!.readiness().queues.every((q) => !q.hasRegisteredStream), { timeoutMs: 3000, description: 'the worker to notice' });
  freezer.resume();
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  const { task_id } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  expect((await t.matching.waitOutcome({ task_id, wait_ms: 5000 })).outcome?.attempt).toBe(1);
});

it('fails a connection black-holed while a result waits for its ack, by the channel keepalive, and runs the Step again', async () => {
  t = await startTestNode(redis.url, uniquePrefix('silent-busy'), { 'matching.pingInterval': '300ms' });
  freezer = await tcpProxy(Number(t.node.apiAddress.split(':')[1]));
  const logger = recordingLogger();
  const release = gate();
  const attempts: number[] = [];
  w = new Worker({
    address: `127.0.0.1:${freezer.port}`, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger,
    reconnectBackoff: { initialMs: 50, maxMs: 200 }, _internal: { keepaliveMs: 300 },
    flowTypes: {
      order: {
        steps: {
          charge: async (ctx) => {
            attempts.push(ctx.attempt);
            if (ctx.attempt === 1) await release.opened;
            return 'ok';
          },
        },
      },
    },
  });
  void w.start().catch(() => undefined);
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  const { task_id } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  await waitFor(() => attempts.length === 1, { timeoutMs: 5000, description: 'attempt 1 to start' });
  // The path goes dark, the handler returns: its result is written into the dead connection.
  freezer.blackhole();
  release.open();
  // The busy slot hears no Pings to miss; the channel's keepalive fails the connection.
  await waitFor(() => w!.readiness().queues.every((q) => !q.hasRegisteredStream), { timeoutMs: 5000, description: 'the worker to notice' });
  freezer.resume();
  // The node lost the worker on its side too: attempt 2 runs on the new stream.
  const outcome = (await t.matching.waitOutcome({ task_id, wait_ms: 10_000 })).outcome;
  expect([outcome?.status, outcome?.attempt]).toEqual([pb.OutcomeStatus.COMPLETED, 2]);
  expect(attempts).toEqual([1, 2]);
});
