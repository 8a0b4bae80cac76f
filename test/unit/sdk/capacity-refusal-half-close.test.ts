/**
 * The cap check (workers reference: "If the first registration
 * reports a limit below the task limit, the Worker fails to start … A task
 * [the node] already sent to that Worker returns to [it] without consuming an
 * attempt"): every refused stream half-closes and waits for the node to end
 * it; none is reset before stopDrainTimeout, or the task the node wrote
 * behind Registered would count as one that may have run. Against the
 * hand-written server of fake-worker-server.ts, which here ends a
 * half-closed stream only when the test says so (a node slow to return the task).
 */
import { Worker, WorkerCapacityError } from '../../../src';
import { FakeWorkerServer, recordingLogger, registerOk } from './fake-worker-server';

describe('a first registration with a cap below the task limit', () => {
  let server: FakeWorkerServer;
  afterEach(async () => {
    await server.stop();
  });

  it('half-closes every stream and resets none before stopDrainTimeout, the first one answered included', async () => {
    server = await new FakeWorkerServer({ onRegister: registerOk(1), endOnHalfClose: false }).start();
    const w = new Worker({
      address: server.address, tenant: 't1', maxConcurrentTasks: 2, reservedRpcTasks: 0, logger: recordingLogger(),
      stopDrainTimeout: 30_000, flowTypes: { order: { steps: { charge: () => 'ok' } } },
    });
    const running = w.start().catch((e: unknown) => e);
    const streams = await server.waitStreams(2);
    await Promise.all(streams.map((s) => s.until(() => s.halfClosed, 'the half-close')));
    // Past the 2 s grace for a stream the node never answered: these were answered.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(streams.map((s) => s.cancelled)).toEqual([false, false]);
    streams.forEach((s) => s.end()); // the node returned what it sent, and ends them
    const err = await running;
    expect(err).toBeInstanceOf(WorkerCapacityError);
    expect(w.state).toBe('failed');
  }, 15_000);

  it('takes a cap equal to the task limit: the worker registers and stays running', async () => {
    server = await new FakeWorkerServer({ onRegister: registerOk(2) }).start();
    const w = new Worker({
      address: server.address, tenant: 't1', maxConcurrentTasks: 2, reservedRpcTasks: 0, logger: recordingLogger(),
      flowTypes: { order: { steps: { charge: () => 'ok' } } },
    });
    const running = w.start();
    await w.waitPullRegistered(AbortSignal.timeout(5_000));
    expect(w.state).toBe('running');
    await w.stop();
    await running;
    expect(w.state).toBe('stopped');
  });
});
