/**
 * stop() (DESIGN §5: "`stop()` … waits `stopDrainTimeout` (30s),
 * then resets the rest … and gives unconfirmed outputs a 5s flush grace"):
 * a slot whose stream is still resolving its credential (a token function
 * that never answers, say a hung call to a token service) must not hold
 * stop() past its deadlines; nor, while the worker runs, hold its slot for
 * good (CREDENTIAL_TIMEOUT_MS). Against the hand-written server of
 * fake-worker-server.ts.
 */
import { Worker } from '../../../src';
import { FLUSH_GRACE_MS } from '../../../src/sdk/worker';
import { FakeWorkerServer, recordingLogger } from './fake-worker-server';

describe('stop() with a credential that never resolves', () => {
  let server: FakeWorkerServer;
  afterEach(async () => {
    await server.stop();
  });

  it('returns within stopDrainTimeout and the flush grace, and start() ends normally', async () => {
    server = await new FakeWorkerServer().start();
    let asked = 0;
    const w = new Worker({
      address: server.address, tenant: 't1', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger: recordingLogger(),
      stopDrainTimeout: 300,
      credential: () => {
        asked++;
        return new Promise<string>(() => undefined); // never answers
      },
      flowTypes: { order: { steps: { charge: () => 'ok' } } },
    });
    const running = w.start().catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    expect(asked).toBe(1);
    const t0 = Date.now();
    const stopped = w.stop().then(() => 'stopped');
    const bound = new Promise((r) => setTimeout(() => r('still stopping'), 300 + FLUSH_GRACE_MS + 1000).unref());
    expect(await Promise.race([stopped, bound])).toBe('stopped');
    expect(Date.now() - t0).toBeLessThan(300 + FLUSH_GRACE_MS);
    expect(await running).toBeUndefined();
    expect(w.state).toBe('stopped');
    expect(server.streams).toHaveLength(0); // nothing was ever sent without its credential
  }, 20_000);
});

describe('a credential that does not resolve while the worker runs', () => {
  let server: FakeWorkerServer;
  let w: Worker | undefined;
  afterEach(async () => {
    await w?.stop();
    await server.stop();
  });

  it('fails that stream after the credential timeout, says so, and registers with the next answer', async () => {
    server = await new FakeWorkerServer().start();
    const logger = recordingLogger();
    let asked = 0;
    w = new Worker({
      address: server.address, tenant: 't1', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger,
      reconnectBackoff: { initialMs: 10, maxMs: 50 },
      // The first call hangs (a token service that stopped answering); later ones answer.
      credential: () => (++asked === 1 ? new Promise<string>(() => undefined) : 'tok'),
      flowTypes: { order: { steps: { charge: () => 'ok' } } },
      _internal: { credentialTimeoutMs: 300 },
    });
    void w.start().catch(() => undefined);
    // Was: the slot waited on the first call for good, never registered, and logged nothing.
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    expect(asked).toBe(2);
    expect(server.registered()[0]!.metadata.get('authorization')).toBe('Bearer tok');
    const failed = logger.lines.find((l) => l.msg === 'slot stream failed; reconnecting');
    expect(String(failed?.fields?.error)).toContain('the credential did not resolve within 300 ms');
  }, 20_000);
});
