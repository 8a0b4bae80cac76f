/**
 * Readiness (DESIGN §5: "`waitPullRegistered` resolves once every
 * required slot kind has a registered stream"; the workers reference:
 * "Readiness needs at least one registered Step-and-RPC slot. When the Worker
 * reserves RPC slots, it also needs one registered RPC-only slot"). A kind
 * whose only stream registered and dropped before the other kind registered
 * has no registered stream: the worker must not turn ready then.
 */
import { Status } from 'nice-grpc';
import { pb } from '../../../src/wire';
import { Worker } from '../../../src';
import { ReadinessTracker } from '../../../src/sdk/worker/readiness';
import { FakeWorkerServer, recordingLogger, registerOk, type FakeStream } from './fake-worker-server';

describe('readiness before the first time every kind is registered together', () => {
  it('the tracker does not turn ready while a kind that registered earlier has no registered stream', async () => {
    const r = new ReadinessTracker(['STEP_AND_RPC', 'RPC_ONLY']);
    let resolved = false;
    const wait = r.wait().then(() => (resolved = true));
    r.registered('STEP_AND_RPC');
    r.unregistered('STEP_AND_RPC'); // dropped before RPC_ONLY registered
    r.registered('RPC_ONLY');
    await new Promise((res) => setImmediate(res));
    expect(resolved).toBe(false);
    expect(r.snapshot().isReady).toBe(false);
    r.registered('STEP_AND_RPC');
    await wait;
    expect(r.snapshot().isReady).toBe(true);
    // once ready, a reconnect keeps it so
    r.unregistered('STEP_AND_RPC');
    expect(r.snapshot().isReady).toBe(true);
  });

  describe('a Worker against a node', () => {
    let server: FakeWorkerServer;
    let worker: Worker | undefined;
    afterEach(async () => {
      await worker?.stop();
      await server.stop();
    });

    it('does not resolve waitPullRegistered while no STEP_AND_RPC stream is registered', async () => {
      // STEP_AND_RPC: the first stream registers (and is dropped below), later ones are held
      // unanswered until `answerStep`; RPC_ONLY: held until `answerRpc`.
      let stepStreams = 0;
      const held: { step: FakeStream[]; rpc: FakeStream[] } = { step: [], rpc: [] };
      server = await new FakeWorkerServer({
        onRegister: (s, reg) => {
          if (reg.slot_kind === pb.SlotKind.RPC_ONLY) held.rpc.push(s);
          else if (++stepStreams === 1) registerOk()(s, reg);
          else held.step.push(s);
        },
      }).start();
      worker = new Worker({
        address: server.address, tenant: 't1', maxConcurrentTasks: 2, reservedRpcTasks: 1, logger: recordingLogger(),
        reconnectBackoff: { initialMs: 10, maxMs: 20 }, flowTypes: { order: { steps: { charge: () => 'ok' } } },
      });
      let ready = false;
      const wait = worker.waitPullRegistered().then(() => (ready = true));
      void worker.start();
      await server.waitStreams(2);
      const stepFirst = server.registered(pb.SlotKind.STEP_AND_RPC)[0]!;
      await stepFirst.until(() => worker!.readiness().queues[0]!.hasRegisteredStream, 'STEP_AND_RPC registered');
      stepFirst.fail(Status.UNAVAILABLE, 'node restarting'); // a transient drop
      await stepFirst.until(() => held.step.length > 0, 'the STEP_AND_RPC reconnect');
      held.rpc[0]!.send({ registered: { max_concurrent_tasks_cap: 256, ping_interval_ms: 20000, server_protocol_version: 4 } });
      await stepFirst.until(() => worker!.readiness().queues[1]!.hasRegisteredStream, 'RPC_ONLY registered');
      await new Promise((r) => setTimeout(r, 100));
      // No stream can take a Step yet: not ready.
      expect(worker.readiness().queues[0]!.hasRegisteredStream).toBe(false);
      expect(ready).toBe(false);
      expect(worker.readiness().isReady).toBe(false);
      // The STEP_AND_RPC reconnect registers: now every kind has a stream.
      held.step[0]!.send({ registered: { max_concurrent_tasks_cap: 256, ping_interval_ms: 20000, server_protocol_version: 4 } });
      await wait;
      expect(worker.readiness().isReady).toBe(true);
    });
  });
});
