/**
 * The Worker's reconnect backoff starts over only after a stream that stayed
 * registered: one that registers and drops at once must not make its slot
 * redial every 50–100 ms (a fleet-wide reconnect storm). Against the
 * hand-written server of fake-worker-server.ts, with the default backoff.
 */
import { Status } from 'nice-grpc';
import { Worker } from '../../../src';
import { STABLE_STREAM_MS } from '../../../src/sdk/worker/slot';
import { FakeWorkerServer, recordingLogger, registerOk } from './fake-worker-server';

/** One slot, the default backoff (100 ms initial, 10 s max). */
const worker = (address: string) => new Worker({
  address, tenant: 't1', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger: recordingLogger(),
  flowTypes: { order: { steps: { charge: () => 'ok' } } },
});

describe('Worker reconnect backoff', () => {
  let server: FakeWorkerServer;
  afterEach(async () => {
    await server.stop();
  });

  it('keeps growing for a stream that registers and drops at once', async () => {
    server = await new FakeWorkerServer({
      onRegister: (s, reg) => {
        registerOk()(s, reg);
        setTimeout(() => s.fail(Status.UNAVAILABLE, 'dropped'), 5);
      },
    }).start();
    const w = worker(server.address);
    const running = w.start().catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 3000));
    const streams = server.streams.length;
    await w.stop();
    expect(await running).toBeUndefined();
    // Reset on every registration, it dialled every 50–100 ms: 36 streams in 3 s.
    expect(streams).toBeGreaterThanOrEqual(2);
    expect(streams).toBeLessThan(15);
  });

  it('starts over after a stream that stayed registered', async () => {
    // Five streams drop at once (the backoff grows to 1.6–3.2 s), the sixth lives 5.5 s.
    const registeredAt: number[] = [];
    let droppedAt = 0;
    server = await new FakeWorkerServer({
      onRegister: (s, reg) => {
        registeredAt.push(Date.now());
        registerOk()(s, reg);
        const n = registeredAt.length;
        if (n > 6) return;
        setTimeout(() => {
          droppedAt = Date.now();
          s.fail(Status.UNAVAILABLE, 'dropped');
        }, n <= 5 ? 5 : STABLE_STREAM_MS + 500);
      },
    }).start();
    const w = worker(server.address);
    const running = w.start().catch((e: unknown) => e);
    await server.waitStreams(7, 20_000);
    await w.stop();
    expect(await running).toBeUndefined();
    // Reset, the next delay is 50–100 ms; grown on, it would be 1.6–3.2 s.
    expect(registeredAt[6]! - droppedAt).toBeLessThan(1000);
  });
});
