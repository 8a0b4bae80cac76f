import * as os from 'node:os';
import { compileWorkerOptions, type WorkerOptions } from '../../../src/sdk/worker/options';
import { FLUSH_GRACE_MS, Worker } from '../../../src/sdk/worker';
import { recordingLogger } from './fake-worker-server';

const base = (o: Partial<WorkerOptions> = {}): WorkerOptions => ({
  address: '127.0.0.1:1',
  tenant: 't1',
  flowTypes: { order: { steps: { charge: () => 'ok' } } },
  logger: recordingLogger(),
  ...o,
});

describe('worker options', () => {
  it('refuses a logger without one of its four methods, naming it, and a stop flag that is no boolean', () => {
    // A logger without debug threw inside every stream's Registered frame: the slots
    // reconnected for ever and the worker never became ready.
    const { debug: _debug, ...noDebug } = recordingLogger();
    expect(() => compileWorkerOptions(base({ logger: noDebug as never }))).toThrow(/Worker option logger\.debug: must be a function/);
    expect(() => compileWorkerOptions(base({ logger: 'console' as never }))).toThrow(/Worker option logger: must be an object/);
    expect(() => compileWorkerOptions(base({ stopOnPermanentStreamRejection: 'false' as never }))).toThrow(/stopOnPermanentStreamRejection: must be a boolean/);
  });

  it('defaults the limit to the CPU count and reserves one RPC slot', () => {
    const c = compileWorkerOptions(base());
    const cpus = os.availableParallelism();
    expect(c.maxConcurrentTasks).toBe(cpus);
    expect(c.reservedRpcTasks).toBe(cpus >= 2 ? 1 : 0);
    expect(c.stopDrainTimeout).toBe(30_000);
    expect(c.stopOnPermanentStreamRejection).toBe(false);
  });

  it('sends Pongs every 20 s while a task runs and gives unconfirmed outputs a 5 s flush grace after the drain timeout', () => {
    // Operators set proxy idle timeouts above 20 s, and expect stop() to return at most 5 s past stopDrainTimeout.
    expect(compileWorkerOptions(base()).pongIntervalMs).toBe(20_000);
    expect(FLUSH_GRACE_MS).toBe(5_000);
  });

  it('gives up on a credential that does not resolve after 30 s', () => {
    // docs/security.md: a hung token service fails "a worker stream within 30 s" (the slot then retries with backoff).
    expect(compileWorkerOptions(base()).credentialTimeoutMs).toBe(30_000);
  });

  it('opens limit - reserve shared slots and reserve RPC-only slots', () => {
    const c = compileWorkerOptions(base({ maxConcurrentTasks: 8, reservedRpcTasks: 2 }));
    expect(c.slotKinds.filter((k) => k === 'STEP_AND_RPC')).toHaveLength(6);
    expect(c.slotKinds.filter((k) => k === 'RPC_ONLY')).toHaveLength(2);
  });

  it('defaults the reserve to 1 at a limit of 2 without a warning', () => {
    const logger = recordingLogger();
    expect(compileWorkerOptions(base({ maxConcurrentTasks: 2, logger })).reservedRpcTasks).toBe(1);
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(0);
  });

  it('keeps exactly one start warning at a limit of 1 with no explicit reserve, and logs nothing itself', () => {
    const logger = recordingLogger();
    const c = compileWorkerOptions(base({ maxConcurrentTasks: 1, logger }));
    expect(c.reservedRpcTasks).toBe(0);
    // It names the cause and both ways out: a limit of at least 2, or an explicit reserve.
    expect(c.startWarnings).toEqual([expect.stringMatching(/RPCs may wait behind long-running Steps.*maxConcurrentTasks to at least 2.*reservedRpcTasks explicitly/)]);
    expect(logger.lines).toHaveLength(0);
  });

  it('has no start warning at a limit of 1 with an explicit reserve of 0', () => {
    const logger = recordingLogger();
    expect(compileWorkerOptions(base({ maxConcurrentTasks: 1, reservedRpcTasks: 0, logger })).startWarnings).toEqual([]);
    expect(logger.lines).toHaveLength(0);
  });

  it('logs the warning when the Worker starts, once, and not when it is only built', async () => {
    const logger = recordingLogger();
    const worker = new Worker({
      address: '127.0.0.1:1', tenant: 't', maxConcurrentTasks: 1, logger, reconnectBackoff: { initialMs: 1000, maxMs: 1000 },
      flowTypes: { order: { steps: { charge: () => 'ok' } } },
    });
    const warned = () => logger.lines.filter((l) => l.level === 'warn' && /RPCs may wait/.test(l.msg)).length;
    expect(warned()).toBe(0);
    const running = worker.start().catch(() => undefined);
    void worker.start();
    expect(warned()).toBe(1);
    await worker.stop();
    await running;
    expect(warned()).toBe(1);
  });

  it.each([
    [4, 4],
    [4, 5],
    [4, -1],
    [4, 1.5],
    [1, 1],
  ])('rejects a reserve that is not an integer in [0, limit): limit %p, reserve %p', (limit, reserve) => {
    expect(() => compileWorkerOptions(base({ maxConcurrentTasks: limit, reservedRpcTasks: reserve }))).toThrow(/reservedRpcTasks/);
  });

  it.each([0, -2, 2.5, NaN])('rejects maxConcurrentTasks %p', (limit) => {
    expect(() => compileWorkerOptions(base({ maxConcurrentTasks: limit }))).toThrow(/maxConcurrentTasks/);
  });

  it.each<[string, object]>([
    ['reconnectBackoff.initialMs', { initialMs: 0 }],
    ['reconnectBackoff.initialMs', { initialMs: NaN }],
    ['reconnectBackoff.initialMs', { initialMs: 1, maxMs: 1 }], // jitter floors it to 0 ms: ≈ 470 redials a second a slot
    ['reconnectBackoff.initialMs', { initialMs: 9.5, maxMs: 50 }],
    ['reconnectBackoff.coefficient', { coefficient: 0.5 }],
    ['reconnectBackoff.maxMs', { initialMs: 500, maxMs: 100 }],
    ['reconnectBackoff.maxMs', { maxMs: -1 }],
  ])('rejects a reconnect backoff that would spin: %s of %j', (field, reconnectBackoff) => {
    expect(() => compileWorkerOptions(base({ reconnectBackoff }))).toThrow(field);
  });

  // A Node.js timer holds at most 2^31 - 1 ms; a longer delay (Infinity too) fires after 1 ms.
  // stopDrainTimeout: Infinity ("wait for my handlers") aborted every running handler at once
  // and spent its attempt (worker_lost); a huge backoff reconnected in a hot loop.
  it.each([Infinity, 2 ** 31, 40 * 86_400_000, -1, NaN])('rejects a stopDrainTimeout a timer cannot hold: %p', (stopDrainTimeout) => {
    expect(() => compileWorkerOptions(base({ stopDrainTimeout }))).toThrow(/stopDrainTimeout/);
  });

  it('accepts a stopDrainTimeout up to 2^31 - 1 ms', () => {
    expect(compileWorkerOptions(base({ stopDrainTimeout: 2 ** 31 - 1 })).stopDrainTimeout).toBe(2 ** 31 - 1);
    expect(compileWorkerOptions(base({ stopDrainTimeout: 0 })).stopDrainTimeout).toBe(0);
  });

  it.each<[string, object]>([
    ['reconnectBackoff.maxMs', { maxMs: 2 ** 31 }],
    ['reconnectBackoff.initialMs', { initialMs: 3e9, maxMs: 4e9 }],
  ])('rejects a reconnect backoff a timer cannot hold: %s of %j', (field, reconnectBackoff) => {
    expect(() => compileWorkerOptions(base({ reconnectBackoff }))).toThrow(field);
  });

  it('takes a reconnect backoff at its bounds: a 10 ms first delay, a flat coefficient of 1, both delays at what a timer holds', () => {
    // One millisecond more of a floor, or a bound taken as exclusive, refused a backoff the docs promise.
    expect(compileWorkerOptions(base({ reconnectBackoff: { initialMs: 10, maxMs: 10 } })).reconnectBackoff).toEqual({ initialMs: 10, maxMs: 10 });
    expect(compileWorkerOptions(base({ reconnectBackoff: { coefficient: 1 } })).reconnectBackoff).toEqual({ coefficient: 1 });
    const top = { initialMs: 2 ** 31 - 1, maxMs: 2 ** 31 - 1 };
    expect(compileWorkerOptions(base({ reconnectBackoff: top })).reconnectBackoff).toEqual(top);
    expect(() => compileWorkerOptions(base({ reconnectBackoff: { coefficient: Infinity } }))).toThrow('Worker option reconnectBackoff.coefficient: must be a number ≥ 1, got Infinity');
  });

  it('names the refused limit in its error', () => {
    expect(() => compileWorkerOptions(base({ maxConcurrentTasks: 0 }))).toThrow('Worker option maxConcurrentTasks: must be an integer ≥ 1, got 0');
    expect(() => compileWorkerOptions(base({ maxConcurrentTasks: 4, reservedRpcTasks: 4 })))
      .toThrow('Worker option reservedRpcTasks: must be an integer ≥ 0 and < maxConcurrentTasks (4), got 4');
  });

  it('takes a logger that is a function carrying the four methods', () => {
    const rec = recordingLogger();
    const logger = Object.assign(() => undefined, { debug: rec.debug, info: rec.info, warn: rec.warn, error: rec.error });
    expect(compileWorkerOptions(base({ logger })).logger).toBe(logger);
  });

  it('keeps the internal knobs given, and refuses each out of its bounds naming it', () => {
    const c = compileWorkerOptions(base({
      reconnectBackoff: { initialMs: 50 },
      _internal: { protocolVersion: 99, pongIntervalMs: 5, keepaliveMs: 7, unregisteredWarnMs: 2 ** 31 - 1, credentialTimeoutMs: 2 ** 31 - 1 },
    }));
    expect([c.protocolVersion, c.pongIntervalMs, c.keepaliveMs, c.unregisteredWarnMs, c.credentialTimeoutMs]).toEqual([99, 5, 7, 2 ** 31 - 1, 2 ** 31 - 1]);
    expect(c.reconnectBackoff).toEqual({ initialMs: 50 });
    for (const field of ['pongIntervalMs', 'keepaliveMs', 'unregisteredWarnMs', 'credentialTimeoutMs'] as const) {
      expect(() => compileWorkerOptions(base({ _internal: { [field]: 0 } }))).toThrow(`Worker option _internal.${field}: must be`);
    }
    for (const field of ['unregisteredWarnMs', 'credentialTimeoutMs'] as const) {
      expect(() => compileWorkerOptions(base({ _internal: { [field]: 2 ** 31 } }))).toThrow(`Worker option _internal.${field}: must be in (0, ${2 ** 31 - 1}]`);
    }
  });

  it('requires address, tenant and at least one flow type', () => {
    expect(() => compileWorkerOptions(base({ address: '' }))).toThrow(/address/);
    expect(() => compileWorkerOptions(base({ tenant: '' }))).toThrow(/tenant/);
    expect(() => compileWorkerOptions(base({ flowTypes: {} }))).toThrow(/flowTypes/);
  });

  it('rejects a handler that is not a function', () => {
    const flowTypes = { order: { steps: { charge: 'nope' as unknown as () => void } } };
    expect(() => compileWorkerOptions(base({ flowTypes }))).toThrow(/flowTypes\.order\.steps\.charge/);
  });

  it.each<[string, unknown]>([
    ['flowTypes.order', { order: null }],
    ['flowTypes.order', { order: 'charge' }],
    ['flowTypes.order.charge', { order: { charge: () => 'ok' } }], // steps: forgotten
    ['flowTypes.order.step', { order: { step: { charge: () => 'ok' } } }],
    ['flowTypes.order.steps', { order: { steps: [() => 'ok'] } }],
    ['flowTypes.order.rpcs', { order: { rpcs: 'status' } }],
    ['flowTypes', [{ steps: { charge: () => 'ok' } }]],
  ])('rejects a handler map not shaped { [flowType]: { steps, rpcs } }, naming %s: %p', (field, flowTypes) => {
    expect(() => compileWorkerOptions(base({ flowTypes: flowTypes as WorkerOptions['flowTypes'] }))).toThrow(`Worker option ${field}: `);
  });

  it.each<[string, Partial<Record<keyof WorkerOptions, unknown>>]>([
    ['tenant', { tenant: 42 }],
    ['address', { address: { host: 'h', port: 1 } }],
    ['appWorkerId', { appWorkerId: 7 }],
  ])('rejects an option %s that is not a string', (field, over) => {
    expect(() => compileWorkerOptions(base(over as Partial<WorkerOptions>))).toThrow(`Worker option ${field}: must be a string`);
  });

  it('generates a distinct app worker id per worker, hostname-pid-random', () => {
    const a = compileWorkerOptions(base()).appWorkerId;
    const b = compileWorkerOptions(base()).appWorkerId;
    expect(a).not.toBe(b);
    expect(a.startsWith(`${os.hostname()}-${process.pid}-`)).toBe(true);
    expect(compileWorkerOptions(base({ appWorkerId: 'w-7' })).appWorkerId).toBe('w-7');
  });

  it('takes an empty app worker id (an unset environment variable) as none: it gets a generated one', () => {
    // Every restarted process sent '' and shared one identity: sticky routing and the
    // unsupported-type cache would treat them as the same worker.
    const id = compileWorkerOptions(base({ appWorkerId: '' })).appWorkerId;
    expect(id.startsWith(`${os.hostname()}-${process.pid}-`)).toBe(true);
  });
});
