/**
 * The Worker SDK against a real node and a real redis-server: the protocol
 * check, registration limits and readiness, graceful and forced stop,
 * liveness frames and attempt timeouts, cancellation, and the reserved RPC
 * slots (DESIGN §4–§6; reference: "Readiness", "Capacity and shutdown").
 * Where a test must see what the SDK sends, a transparent tap sits between
 * the Worker and the node (test/helpers/worker-tap.ts).
 */
import * as net from 'node:net';
import { createClient, Metadata, Status } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import {
  Client, FetchClient, FLUSH_GRACE_MS, PullRegistrationError, TaskCancelledError, Worker, WorkerCapacityError, WorkerStoppedError, ZdProtocolError,
  type StepHandler, type StepSpec, type WorkerOptions,
} from '../../src';
import { MIN_PROTOCOL_VERSION } from '../../src/api/worker-service';
import { toNum } from '../../src/sdk/common';
import { pb, PROTOCOL_VERSION } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { aborted, gate, metricValue, recordingLogger, type Gate } from '../helpers/sdk';
import { tcpProxy } from '../helpers/tcp-proxy';
import { sleep, waitFor } from '../helpers/wait';
import { startWorkerTap, type TappedFrame, type WorkerTap } from '../helpers/worker-tap';

const redis = useEmbeddedRedis();

// Everything a test opens is closed after it, newest first (workers before nodes).
const cleanups: Array<() => unknown> = [];
const gates: Gate[] = [];
afterEach(async () => {
  for (const g of gates.splice(0)) g.open();
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch {
      /* keep closing the rest */
    }
  }
});

async function node(overrides: Record<string, unknown> = {}, prefix = uniquePrefix('wl')): Promise<TestNode> {
  const t = await startTestNode(redis.url, prefix, overrides);
  cleanups.push(() => t.close());
  return t;
}

/**
 * Opens `port` at `at` (Date.now() ms), passing each connection on to `toPort`; resolves once
 * it listens, with that time. A node started beforehand on another port is thus back at a
 * moment its own start-up (a few hundred ms, longer on a loaded machine) does not move.
 */
async function backAt(at: number, port: number, toPort: number): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((c) => {
    const u = net.connect(toPort, '127.0.0.1');
    for (const s of [c, u]) {
      sockets.add(s);
      s.on('error', () => undefined).on('close', () => {
        sockets.delete(s);
        c.destroy();
        u.destroy();
      });
    }
    c.pipe(u);
    u.pipe(c);
  });
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    return new Promise((r) => server.close(r));
  });
  await sleep(Math.max(0, at - Date.now()));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return Date.now();
}

function client(address: string, protocolVersion?: number): Client {
  const c = new Client({ address, defaultTimeoutMs: 5000, _internal: protocolVersion === undefined ? undefined : { protocolVersion } });
  cleanups.push(() => c.close());
  return c;
}

function held(): Gate {
  const g = gate();
  gates.push(g);
  return g;
}

/** A Worker of tenant acme, flow type order; one shared slot unless told otherwise. */
function worker(address: string, steps: Record<string, StepHandler>, options: Partial<WorkerOptions> = {}) {
  const logger = recordingLogger();
  const w = new Worker({
    address, tenant: 'acme', flowTypes: { order: { steps } }, maxConcurrentTasks: 1, reservedRpcTasks: 0, logger,
    reconnectBackoff: { initialMs: 50, maxMs: 200 }, ...options,
  });
  cleanups.push(() => w.stop());
  return { w, logger };
}

/** start() as a promise that never rejects: 'stopped', or the error it failed with. */
function run(w: Worker): Promise<unknown> {
  return w.start().then(() => 'stopped', (err: unknown) => err);
}

function rawSlot(t: TestNode, over: Partial<pb.IRegister> = {}, metadata?: Metadata): RawSlot {
  const s = openSlot(t.worker, registerFrame(over), metadata);
  cleanups.push(() => s.reset());
  return s;
}

async function tap(t: TestNode): Promise<WorkerTap> {
  const tp = await startWorkerTap(t.node.apiAddress);
  cleanups.push(() => tp.close());
  return tp;
}

function versionHeader(value: string): Metadata {
  const md = new Metadata();
  md.set('zd-protocol-version', value);
  return md;
}

let flowSeq = 0;
/** A Step of its own flow (so no sticky routing gets in the way). */
function spec(over: Partial<StepSpec> = {}): StepSpec {
  return { tenant: 'acme', flowId: `flow-${++flowSeq}`, flowType: 'order', stepType: 'charge', stepExecutionId: 's1', input: 'in', ...over };
}

async function outcome(c: Client, taskId: string) {
  const o = await c.waitOutcome(taskId, { waitMs: 8000 });
  if (!o) throw new Error(`no outcome for ${taskId}`);
  return o;
}

/** The gateway's streams of one app worker id on a node (test-only view of its registry). */
function serverSlots(t: TestNode, appWorkerId?: string) {
  const slots = (t.node.gateway as unknown as { slots: Map<string, { reg: { appWorkerId: string }; out: { close(): void } }> }).slots;
  return [...slots.values()].filter((s) => appWorkerId === undefined || s.reg.appWorkerId === appWorkerId);
}

/**
 * Starts `w` behind the tap and begins its stop with the half-closes of its
 * `streams` held in the tap: the node still sees idle streams and may write
 * work to them. `pass()` lets the half-closes through; `stopping` is stop().
 */
async function stopWithHalfClosesHeld(w: Worker, tp: WorkerTap, streams = 1): Promise<{ pass: () => void; stopping: Promise<void> }> {
  void run(w);
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  const pass = tp.holdHalfCloses();
  const stopping = w.stop();
  await waitFor(() => tp.frames.filter((f) => f.kind === 'half-close-held').length === streams);
  return { pass, stopping };
}

const kinds = (frames: TappedFrame[], stream: number) => frames.filter((f) => f.stream === stream).map((f) => `${f.dir}:${f.kind}`);

describe('protocol version check (zd-protocol-version header)', () => {
  it('fails a Client\'s first call with ZdProtocolError naming both versions; supported or absent versions pass', async () => {
    const t = await node();
    const future = client(t.node.apiAddress, 99);
    const err = await future.enqueueStep(spec({ flowId: 'p1' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZdProtocolError);
    expect(err).toMatchObject({ status: Status.FAILED_PRECONDITION, code: 'ZD_PROTOCOL_MISMATCH' });
    expect((err as Error).message).toContain('protocol version 99');
    expect((err as Error).message).toContain(`protocol version ${PROTOCOL_VERSION}`);
    // Refused before the handler ran: the same Step is still new.
    expect((await client(t.node.apiAddress).enqueueStep(spec({ flowId: 'p1' }))).created).toBe(true);

    const old = await client(t.node.apiAddress, MIN_PROTOCOL_VERSION - 1).describeCluster().catch((e: unknown) => e);
    expect(old).toBeInstanceOf(ZdProtocolError);
    expect((old as Error).message).toContain(`protocol version ${MIN_PROTOCOL_VERSION - 1}`);
    await expect(client(t.node.apiAddress, MIN_PROTOCOL_VERSION).describeCluster()).resolves.toMatchObject({ partitions: 8 });
    // An older client sends no header at all: allowed.
    await expect(t.matching.describeCluster({})).resolves.toMatchObject({ partitions: 8 });
    await expect(t.matching.describeCluster({}, { metadata: versionHeader('4.1') })).rejects.toMatchObject({
      code: Status.FAILED_PRECONDITION, details: expect.stringContaining('"4.1"'),
    });
    // Health checks are exempt: probes send whatever they send.
    const health = createClient(HealthDefinition, t.channel);
    await expect(health.check({ service: '' }, { metadata: versionHeader('99') })).resolves.toMatchObject({ status: 1 });
  });

  it('reads a version with spaces around it, and refuses a header a proxy added a second unsupported value to', async () => {
    const t = await node();
    await expect(t.matching.describeCluster({}, { metadata: versionHeader(` ${PROTOCOL_VERSION} `) })).resolves.toMatchObject({ partitions: 8 });
    const twice = new Metadata().append('zd-protocol-version', String(PROTOCOL_VERSION)).append('zd-protocol-version', '99');
    await expect(t.matching.describeCluster({}, { metadata: twice })).rejects.toMatchObject({
      code: Status.FAILED_PRECONDITION, details: expect.stringContaining('ZD_PROTOCOL_MISMATCH'),
    });
    const same = new Metadata().append('zd-protocol-version', String(PROTOCOL_VERSION)).append('zd-protocol-version', String(PROTOCOL_VERSION));
    await expect(t.matching.describeCluster({}, { metadata: same })).resolves.toMatchObject({ partitions: 8 });
  });

  it('fails a Worker\'s start() with ZdProtocolError naming both versions when it speaks an unsupported one', async () => {
    const t = await node();
    const { w } = worker(t.node.apiAddress, { charge: () => 'x' }, { maxConcurrentTasks: 2, _internal: { protocolVersion: 99 } });
    const waiting = w.waitPullRegistered().catch((e: unknown) => e);
    const err = await run(w);
    expect(err).toBeInstanceOf(ZdProtocolError);
    expect((err as Error).message).toContain('protocol version 99');
    expect((err as Error).message).toContain(`protocol version ${PROTOCOL_VERSION}`);
    expect(await waiting).toBe(err);
    expect(w.state).toBe('failed');
    expect(t.node.gateway.streamCount).toBe(0);
  });

  it('checks the Connect header and the Register version each on its own', async () => {
    const t = await node();
    const byHeader = rawSlot(t, {}, versionHeader('99')); // a valid Register behind a bad header
    const e1 = (await byHeader.ended) as Error & { code?: Status; details?: string };
    expect(e1.code).toBe(Status.FAILED_PRECONDITION);
    expect(e1.details).toMatch(new RegExp(`ZD_PROTOCOL_MISMATCH: .*version 99 .*version ${PROTOCOL_VERSION}`));
    const byRegister = rawSlot(t, { protocol_version: 99 }, versionHeader(String(PROTOCOL_VERSION)));
    const e2 = (await byRegister.ended) as Error & { code?: Status; details?: string };
    expect(e2.code).toBe(Status.FAILED_PRECONDITION);
    expect(e2.details).toContain('version 99');
    const fine = rawSlot(t, {}, versionHeader(String(PROTOCOL_VERSION)));
    expect((await fine.nextOf('registered')).registered!.server_protocol_version).toBe(PROTOCOL_VERSION);
  });
});

describe('registration limits through the SDK', () => {
  it('fails start() with WorkerCapacityError naming both values; a task it was already sent returns unconsumed', async () => {
    const t = await node({ 'matching.maxConcurrentTasksCap': 2 });
    const c = client(t.node.apiAddress);
    // Queued before the worker connects, so the node offers it the moment a stream registers.
    const { taskId } = await c.enqueueStep(spec());
    const ran: number[] = [];
    const { w } = worker(t.node.apiAddress, { charge: (ctx) => void ran.push(ctx.attempt) }, { maxConcurrentTasks: 3 });
    const err = await run(w);
    expect(err).toBeInstanceOf(WorkerCapacityError);
    expect(err).toMatchObject({ taskLimit: 3, cap: 2 });
    expect((err as Error).message).toMatch(/maxConcurrentTasks 3 .*maxConcurrentTasksCap 2/);
    expect(ran).toEqual([]);
    await waitFor(() => t.node.gateway.streamCount === 0, { description: 'the refused streams to close' });
    // Whether or not the node had written the Step to a refused stream, its attempt was not consumed.
    const s = rawSlot(t, { app_worker_id: 'next' });
    await s.nextOf('registered');
    expect((await s.nextOf('step_task')).step_task).toMatchObject({ task_id: taskId, attempt: 1 });
  });

  it('reports matching.maxStreams rejections in readiness and waitPullRegistered, and keeps retrying by default', async () => {
    const t = await node({ 'matching.maxStreams': 1 });
    const blocker = rawSlot(t, { app_worker_id: 'blocker', flow_types: ['elsewhere'] });
    await blocker.nextOf('registered');

    const { w, logger } = worker(t.node.apiAddress, { charge: () => 'done' });
    const running = run(w);
    const err = await w.waitPullRegistered().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PullRegistrationError);
    expect(err).toMatchObject({ slotKind: 'STEP_AND_RPC', code: Status.RESOURCE_EXHAUSTED, zdCode: 'ZD_TOO_MANY_STREAMS' });
    expect((err as Error).message).toContain('matching.maxStreams = 1');
    expect(w.readiness()).toEqual({
      isReady: false,
      queues: [{ slotKind: 'STEP_AND_RPC', hasRegisteredStream: false, lastPermanentError: expect.any(PullRegistrationError) }],
    });
    // stopOnPermanentStreamRejection defaults to false: it retries, and start() stays pending.
    await waitFor(() => logger.count('slot stream rejected') >= 3, { description: 'three rejections' });
    expect(w.state).toBe('running');

    // The same rejection with stopOnPermanentStreamRejection ends start() with it.
    const strict = worker(t.node.apiAddress, { charge: () => 'x' }, { stopOnPermanentStreamRejection: true }).w;
    const strictErr = await run(strict);
    expect(strictErr).toBeInstanceOf(PullRegistrationError);
    expect(strictErr).toMatchObject({ slotKind: 'STEP_AND_RPC', code: Status.RESOURCE_EXHAUSTED });
    expect(strict.state).toBe('failed');

    // Room again: the retrying worker registers, its error clears and it runs Steps.
    blocker.halfClose();
    await waitFor(() => w.readiness().isReady, { description: 'readiness' });
    expect(w.readiness().queues[0]).toEqual({ slotKind: 'STEP_AND_RPC', hasRegisteredStream: true, lastPermanentError: null });
    await expect(w.waitPullRegistered()).resolves.toBeUndefined();
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec());
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1, appWorkerId: w.appWorkerId });
    expect(await Promise.race([running, sleep(10).then(() => 'pending')])).toBe('pending');
  });

  it('does not stop on a rejection while another stream of the kind is registered, even with stopOnPermanentStreamRejection', async () => {
    const t = await node({ 'matching.maxStreams': 2 });
    const { w, logger } = worker(t.node.apiAddress, { charge: () => 'ok' }, {
      maxConcurrentTasks: 2, stopOnPermanentStreamRejection: true, reconnectBackoff: { initialMs: 600, maxMs: 600 },
    });
    const running = run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    // The node ends one of the worker's streams; a raw stream takes its place before the worker is back (≥ 300 ms backoff).
    serverSlots(t, w.appWorkerId)[0]!.out.close();
    await waitFor(() => t.node.gateway.streamCount === 1);
    const blocker = rawSlot(t, { app_worker_id: 'blocker', flow_types: ['elsewhere'] });
    await blocker.nextOf('registered');
    await waitFor(() => logger.count('slot stream rejected', { status: 'RESOURCE_EXHAUSTED', noRegisteredStreamOfKind: false }) >= 1, {
      description: 'the rejection of the reconnecting stream',
    });
    expect(w.state).toBe('running');
    expect(w.readiness()).toEqual({ isReady: true, queues: [{ slotKind: 'STEP_AND_RPC', hasRegisteredStream: true, lastPermanentError: null }] });
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec());
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', appWorkerId: w.appWorkerId });
    // Room again: the rejected slot comes back.
    blocker.halfClose();
    await waitFor(() => serverSlots(t, w.appWorkerId).length === 2, { description: 'both worker streams registered' });
    expect(await Promise.race([running, sleep(10).then(() => 'pending')])).toBe('pending');
  });

  it('stays ready across a node restart on the same port and while every slot is busy', async () => {
    const prefix = uniquePrefix('restart');
    const t1 = await node({}, prefix);
    const port = t1.node.apiAddress.slice(t1.node.apiAddress.lastIndexOf(':') + 1);
    const started = held();
    const release = held();
    const { w } = worker(t1.node.apiAddress, {
      charge: async (ctx) => {
        if (ctx.input.toString() === 'hold') {
          started.open();
          await release.opened;
        }
        return 'ok';
      },
    }, { reconnectBackoff: { initialMs: 20, maxMs: 100 } });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));

    const c1 = client(t1.node.apiAddress);
    const busy = await c1.enqueueStep(spec({ input: 'hold' }));
    await started.opened;
    expect(w.readiness()).toEqual({ isReady: true, queues: [{ slotKind: 'STEP_AND_RPC', hasRegisteredStream: true, lastPermanentError: null }] });
    release.open();
    expect(await outcome(c1, busy.taskId)).toMatchObject({ status: 'COMPLETED' });

    const samples: boolean[] = [];
    const sampler = setInterval(() => samples.push(w.readiness().isReady), 5);
    try {
      await t1.close();
      await waitFor(() => !w.readiness().queues[0]!.hasRegisteredStream, { description: 'the stream to go' });
      // Disconnected with only transient errors: still ready.
      expect(w.readiness()).toEqual({ isReady: true, queues: [{ slotKind: 'STEP_AND_RPC', hasRegisteredStream: false, lastPermanentError: null }] });
      const t2 = await node({ 'api.listen': `127.0.0.1:${port}` }, prefix);
      await waitFor(() => t2.node.gateway.streamCount === 1, { timeoutMs: 8000, description: 'the worker back on the new node' });
      // The server registers the stream a moment before the worker reads its Registered frame.
      await waitFor(() => w.readiness().queues[0]!.hasRegisteredStream, { timeoutMs: 5000, description: 'the worker registered again' });
      expect(w.readiness().isReady).toBe(true);
      const c2 = client(t2.node.apiAddress);
      const { taskId } = await c2.enqueueStep(spec());
      expect(await outcome(c2, taskId)).toMatchObject({ status: 'COMPLETED' });
    } finally {
      clearInterval(sampler);
    }
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.every(Boolean)).toBe(true);
  });

  it('only warns when a node it reconnects to reports a cap below its task limit: it keeps running, ready, on the streams the cap lets in', async () => {
    // Reference, "Capacity and shutdown": a lower limit reported on a later reconnect only logs a warning.
    const prefix = uniquePrefix('lowcap');
    const t1 = await node({}, prefix);
    const port = t1.node.apiAddress.slice(t1.node.apiAddress.lastIndexOf(':') + 1);
    const { w, logger } = worker(t1.node.apiAddress, { charge: () => 'ok' }, { maxConcurrentTasks: 2, reconnectBackoff: { initialMs: 20, maxMs: 100 } });
    const running = run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    await t1.close();
    await waitFor(() => !w.readiness().queues[0]!.hasRegisteredStream, { description: 'the streams to go' });

    // Back with a cap of one stream per app worker id: one stream registers, the other is refused.
    const t2 = await node({ 'api.listen': `127.0.0.1:${port}`, 'matching.maxConcurrentTasksCap': 1 }, prefix);
    await waitFor(() => logger.count('slot stream rejected', { status: 'RESOURCE_EXHAUSTED', noRegisteredStreamOfKind: false }) >= 1, {
      timeoutMs: 8000, description: 'the second stream refused while the first is registered',
    });
    await waitFor(() => w.readiness().queues[0]!.hasRegisteredStream, { description: 'the first stream registered on the worker\'s side' });
    expect(logger.count('server maxConcurrentTasksCap is below maxConcurrentTasks; some slots will be rejected', { cap: 1, maxConcurrentTasks: 2 })).toBe(1);
    expect(w.state).toBe('running');
    expect(w.readiness()).toEqual({ isReady: true, queues: [{ slotKind: 'STEP_AND_RPC', hasRegisteredStream: true, lastPermanentError: null }] });
    const c = client(t2.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec());
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1, appWorkerId: w.appWorkerId });
    expect(await Promise.race([running, sleep(10).then(() => 'pending')])).toBe('pending');
  });

  it('with stopOnPermanentStreamRejection, ends start() with the PullRegistrationError of a rejection after readiness that leaves its kind with no stream', async () => {
    // Reference, "Readiness": Start returns a PullRegistrationError for the first permanent rejection
    // that leaves its slot kind without a registered stream, even after readiness.
    const prefix = uniquePrefix('strict');
    const t1 = await node({}, prefix);
    const port = t1.node.apiAddress.slice(t1.node.apiAddress.lastIndexOf(':') + 1);
    const { w } = worker(t1.node.apiAddress, { charge: () => 'ok' }, {
      stopOnPermanentStreamRejection: true, reconnectBackoff: { initialMs: 20, maxMs: 100 },
    });
    const running = run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    await t1.close();
    await waitFor(() => !w.readiness().queues[0]!.hasRegisteredStream, { description: 'the stream to go' });
    // Transient errors while the node is away did not stop it.
    expect(w.state).toBe('running');

    // Back with a limit the worker's flow type ("order") breaks: every Register is refused for good.
    await node({ 'api.listen': `127.0.0.1:${port}`, 'matching.maxFlowTypeLength': 3 }, prefix);
    const err = await Promise.race([running, sleep(8000).then(() => 'still running 8 s after the node came back')]);
    expect(err).toBeInstanceOf(PullRegistrationError);
    expect(err).toMatchObject({ slotKind: 'STEP_AND_RPC', code: Status.INVALID_ARGUMENT });
    expect((err as Error).message).toContain('matching.maxFlowTypeLength');
    expect(w.state).toBe('failed');
    // Once ready, a wait keeps resolving; the report says why the kind is down.
    await expect(w.waitPullRegistered()).resolves.toBeUndefined();
    expect(w.readiness()).toEqual({
      isReady: false,
      queues: [{ slotKind: 'STEP_AND_RPC', hasRegisteredStream: false, lastPermanentError: err }],
    });
  });

  it('registers again within its reconnectBackoff once a node down for seconds is back, not on the connection\'s own backoff', async () => {
    const prefix = uniquePrefix('down');
    const t1 = await node({}, prefix);
    const port = t1.node.apiAddress.slice(t1.node.apiAddress.lastIndexOf(':') + 1);
    const { w, logger } = worker(t1.node.apiAddress, { charge: () => 'ok' }, { reconnectBackoff: { initialMs: 20, maxMs: 100 } });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    await t1.close();
    // The first dial the closed port refuses: from it on, grpc-js backs off the connection itself.
    await waitFor(() => logger.lines.some((l) => /No connection established/.test(String(l.fields?.error))), {
      intervalMs: 5, description: 'a refused dial',
    });
    const refusedAt = Date.now();
    // grpc-js's own backoff (1 s × 1.6ⁿ, ±20 %) would dial again 4.1 to 6.2 s after that first
    // refusal (after its second dial, by 3.12 s): the node is back 3.2 s after it, and would wait
    // at least 0.9 s more for its worker; within reconnectBackoff it comes in about 0.1 s. The
    // bound is halfway between.
    const t2 = await node({}, prefix);
    const back = await backAt(refusedAt + 3200, Number(port), Number(t2.node.apiAddress.slice(t2.node.apiAddress.lastIndexOf(':') + 1)));
    await waitFor(() => w.readiness().queues[0]!.hasRegisteredStream, { timeoutMs: 8000, intervalMs: 10, description: 'the worker registered again' });
    expect(Date.now() - back).toBeLessThan(550);
    const c2 = client(t2.node.apiAddress);
    const { taskId } = await c2.enqueueStep(spec());
    expect(await outcome(c2, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1 });
  });

  it('has a Client reach a node down for seconds once it is back, within its reconnectBackoff, not the connection\'s own backoff', async () => {
    const t1 = await node();
    const port = t1.node.apiAddress.slice(t1.node.apiAddress.lastIndexOf(':') + 1);
    const c = new Client({ address: t1.node.apiAddress, defaultTimeoutMs: 2000, reconnectBackoff: { initialMs: 20, maxMs: 100 } });
    cleanups.push(() => c.close());
    await c.describeCluster();
    await t1.close();
    await expect(c.describeCluster()).rejects.toThrow(/No connection established/);
    const refusedAt = Date.now();
    // As for the Worker above: grpc-js's own backoff would not dial again until 4.1–6.2 s after that
    // refusal, 0.9 s at least after the node is back; within reconnectBackoff, about 0.1 s. Halfway.
    const t2 = await node();
    const back = await backAt(refusedAt + 3200, Number(port), Number(t2.node.apiAddress.slice(t2.node.apiAddress.lastIndexOf(':') + 1)));
    await waitFor(async () => c.describeCluster().then(() => true, () => false), { timeoutMs: 8000, intervalMs: 10, description: 'a call that reaches the node' });
    expect(Date.now() - back).toBeLessThan(550);
  });

  it('takes its slots to another node through a connection balancer once its node drains, while a busy slot finishes there', async () => {
    const prefix = uniquePrefix('l4');
    const a = await node({ 'drain.timeout': '10s' }, prefix);
    const b = await node({}, prefix);
    const port = (t: TestNode) => Number(t.node.apiAddress.slice(t.node.apiAddress.lastIndexOf(':') + 1));
    // One address for both nodes, as a ClusterIP Service gives: each new connection goes where the proxy points.
    const balancer = await tcpProxy(port(a));
    cleanups.push(() => balancer.close());
    const release = held();
    const { w } = worker(`127.0.0.1:${balancer.port}`, {
      charge: async (ctx) => {
        if (ctx.input.toString() === 'hold') await release.opened;
        return 'done';
      },
    }, { maxConcurrentTasks: 2 });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(a.node.apiAddress);
    const busy = await c.enqueueStep(spec({ input: 'hold' }));
    await waitFor(() => a.node.gateway.busySlots() === 1, { description: 'the held Step running at a' });

    // a drains (a rolling restart) and the balancer now sends new connections to b.
    balancer.retarget(port(b));
    const draining = a.node.drain();
    await waitFor(() => b.node.gateway.streamCount > 0, { timeoutMs: 3000, description: 'a slot of the worker at b' });
    expect(a.node.state).toBe('draining');
    const cb = client(b.node.apiAddress);
    const next = await cb.enqueueStep(spec());
    expect(await outcome(cb, next.taskId)).toMatchObject({ status: 'COMPLETED' });
    // The held Step's result still goes to a, over the connection it started on.
    release.open();
    await draining;
    expect(await outcome(cb, busy.taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1 });
  });

  it('refuses a Client or FetchClient reconnectBackoff that is no backoff, naming the field', () => {
    expect(() => new Client({ address: '127.0.0.1:1', reconnectBackoff: { initialMs: 0 } }))
      .toThrow('Client option reconnectBackoff.initialMs: must be a number of ms ≥ 10 (a shorter delay redials in a tight loop), got 0');
    expect(() => new FetchClient({ address: '127.0.0.1:1', workerId: 'w', reconnectBackoff: { initialMs: 50, maxMs: 10 } }))
      .toThrow('FetchClient option reconnectBackoff.maxMs: must be a number of ms ≥ initialMs (50), got 10');
  });
});

describe('stop() against the real server', () => {
  it('half-closes idle streams at once, lets a busy one finish, and records its output', async () => {
    const t = await node();
    const tp = await tap(t);
    const started = held();
    const release = held();
    const { w } = worker(tp.address, {
      charge: async () => {
        started.open();
        await release.opened;
        return 'finished';
      },
    }, { maxConcurrentTasks: 2 });
    const running = run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec());
    await started.opened;
    const busy = tp.frames.find((f) => f.kind === 'step_task')!.stream;

    const stopping = w.stop();
    await waitFor(() => tp.frames.some((f) => f.kind === 'half-close' && f.stream !== busy), { description: 'the idle half-close' });
    await waitFor(() => t.node.gateway.streamCount === 1, { description: 'the node to let the idle stream go' });
    expect(w.state).toBe('stopping');
    expect(kinds(tp.frames, busy)).not.toContain('up:half-close-held');

    const releasedAt = Date.now();
    release.open();
    await stopping;
    expect(Date.now() - releasedAt).toBeLessThan(2000); // not the 30 s stopDrainTimeout
    expect(await running).toBe('stopped');
    // Output, its ack, and only then the half-close.
    expect(kinds(tp.frames, busy).filter((k) => k !== 'up:pong' && k !== 'down:ping').slice(-4))
      .toEqual(['up:step_result', 'down:result_ack', 'up:half-close-held', 'up:half-close']);
    const o = await outcome(c, taskId);
    expect(o).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect(o.output.toString()).toBe('finished');
    await waitFor(() => t.node.gateway.streamCount === 0);
  });

  it('does not run a task that reaches a half-closed stream; the node returns it unconsumed', async () => {
    const t = await node();
    const tp = await tap(t);
    const ran: number[] = [];
    const { w } = worker(tp.address, { charge: (ctx) => void ran.push(ctx.attempt) });
    // The worker's half-close held in the tap: the node still sees an idle stream and writes a Step to it.
    const { pass: passHalfClose, stopping } = await stopWithHalfClosesHeld(w, tp);
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec());
    await waitFor(() => tp.frames.some((f) => f.kind === 'step_task'), { description: 'the Step written to the stopping stream' });
    passHalfClose();
    await stopping;
    expect(ran).toEqual([]);
    expect(tp.frames.filter((f) => f.dir === 'up').map((f) => f.kind)).toEqual(['register', 'half-close-held', 'half-close']);
    await waitFor(async () => (await c.getTask(taskId)).state === 'QUEUED', { description: 'the Step back in the queue' });
    expect(await metricValue(t.node.metrics.registry, 'dexzd_matching_returned_attempts_total', { reason: 'drain_no_output' })).toBe(1);
    // Same attempt number, offered to another worker.
    const s = rawSlot(t, { app_worker_id: 'next' });
    await s.nextOf('registered');
    expect((await s.nextOf('step_task')).step_task).toMatchObject({ task_id: taskId, attempt: 1 });
  });

  it('does not run the next Step that rides in the ack of the output it sent while stopping; the node returns it unconsumed', async () => {
    // The worker takes a task right behind (or inside) an ack; stop() began while its one slot was
    // busy, so the node does not know it stops until the half-close that follows that ack.
    const t = await node();
    const started = held();
    const release = held();
    const ran: string[] = [];
    const { w } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        ran.push(ctx.input.toString());
        started.open();
        await release.opened;
        return 'done';
      },
    });
    const running = run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const first = await c.enqueueStep(spec({ input: 'first' }));
    await started.opened;
    const second = await c.enqueueStep(spec({ input: 'second' }));
    const stopping = w.stop();
    release.open();
    await stopping;
    expect(await running).toBe('stopped');
    expect(ran).toEqual(['first']);
    expect(await outcome(c, first.taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    await waitFor(async () => (await c.getTask(second.taskId)).state === 'QUEUED', { description: 'the second Step back in the queue' });
    // It was handed to the stopping worker, which did not run it: returned, not failed.
    const returned = async (reason: string) => metricValue(t.node.metrics.registry, 'dexzd_matching_returned_attempts_total', { reason });
    expect(await returned('drain_no_output') + await returned('write_failed')).toBe(1);
    // Same attempt number, offered to another worker.
    const s = rawSlot(t, { app_worker_id: 'next' });
    await s.nextOf('registered');
    expect((await s.nextOf('step_task')).step_task).toMatchObject({ task_id: second.taskId, attempt: 1 });
  });

  it('does not run an RPC that reaches a half-closed stream; the node gives it to another worker', async () => {
    const t = await node();
    const tp = await tap(t);
    const ran: string[] = [];
    const { w } = worker(tp.address, {}, {
      flowTypes: { order: { steps: { charge: () => 'ok' }, rpcs: { status: () => void ran.push('A') } } },
    });
    const { pass: passHalfClose, stopping } = await stopWithHalfClosesHeld(w, tp);
    const c = client(t.node.apiAddress);
    const call = c.invokeRpc({ tenant: 'acme', flowId: 'f-rpc', flowType: 'order', rpcName: 'status', input: 'q' }, { timeoutMs: 8000 });
    await waitFor(() => tp.frames.some((f) => f.kind === 'rpc_task'), { description: 'the RPC written to the stopping stream' });
    passHalfClose();
    await stopping;
    expect(ran).toEqual([]);
    // The caller still waits (matching.dispatchWait), and the next worker of the flow type runs it.
    const s = rawSlot(t, { app_worker_id: 'next' });
    await s.nextOf('registered');
    const task = (await s.nextOf('rpc_task')).rpc_task!;
    expect(task.rpc_name).toBe('status');
    s.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from next') } });
    const r = await call;
    expect(r.output.toString()).toBe('from next');
    expect(r.appWorkerId).toBe('next');
  });

  it('gives an RPC a stopping worker gave back to another worker, not to its next stream', async () => {
    const t = await node();
    const tp = await tap(t);
    const { w } = worker(tp.address, {}, {
      maxConcurrentTasks: 2, flowTypes: { order: { steps: { charge: () => 'ok' }, rpcs: { status: () => 'from A' } } },
    });
    const { pass: passHalfCloses, stopping } = await stopWithHalfClosesHeld(w, tp, 2);
    const call = client(t.node.apiAddress).invokeRpc({ tenant: 'acme', flowId: 'f-rpc2', flowType: 'order', rpcName: 'status', input: 'q' }, { timeoutMs: 8000 });
    await waitFor(() => tp.frames.some((f) => f.kind === 'rpc_task'), { description: 'the RPC written to a stopping stream' });
    passHalfCloses();
    await stopping;
    // The call waits (matching.dispatchWait) for a worker that is not stopping.
    const s = rawSlot(t, { app_worker_id: 'next' });
    await s.nextOf('registered');
    const task = (await s.nextOf('rpc_task')).rpc_task!;
    s.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from next') } });
    expect((await call).appWorkerId).toBe('next');
    // Once: given back, it did not go to the stopping worker's other stream.
    expect(tp.frames.filter((f) => f.kind === 'rpc_task')).toHaveLength(1);
  });

  it('after stopDrainTimeout aborts the handler, resets its stream, and the attempt fails through the retry policy', async () => {
    const t = await node();
    const started = held();
    let reason: unknown;
    const { w } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        started.open();
        reason = await aborted(ctx.signal);
        return 'too late';
      },
    }, { stopDrainTimeout: 300 });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec({ retryPolicy: { maxAttempts: 3, initialIntervalMs: 100 } }));
    await started.opened;

    const stopAt = Date.now();
    await w.stop();
    const took = Date.now() - stopAt;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3000);
    expect(reason).toBeInstanceOf(WorkerStoppedError);
    expect((reason as Error).message).toContain('stopDrainTimeout');
    // A reset stream may have run the task: attempt 1 is spent, attempt 2 follows the policy.
    const info = await waitFor(async () => {
      const ti = await c.getTask(taskId);
      return ti.attempt === 2 ? ti : undefined;
    }, { timeoutMs: 3000, description: 'attempt 2' });
    expect(info.lastError).toMatchObject({ type: 'worker_lost' });
    expect(await metricValue(t.node.metrics.registry, 'dexzd_matching_returned_attempts_total', { reason: 'drain_no_output' })).toBe(0);
    const s = rawSlot(t, { app_worker_id: 'next' });
    await s.nextOf('registered');
    expect((await s.nextOf('step_task')).step_task).toMatchObject({ task_id: taskId, attempt: 2 });
  });

  it('a handler that ignores its aborted signal holds neither stop() nor start() past the flush grace; the log names its task', async () => {
    const t = await node();
    const started = held();
    const { w, logger } = worker(t.node.apiAddress, {
      charge: () => {
        started.open();
        return new Promise<never>(() => undefined); // never settles, whatever its signal says
      },
    }, { stopDrainTimeout: 100 });
    const running = run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec({ retryPolicy: { maxAttempts: 1 } }));
    await started.opened;

    const stopAt = Date.now();
    const bound = sleep(100 + FLUSH_GRACE_MS + 2000).then(() => 'still stopping');
    expect(await Promise.race([w.stop().then(() => 'stopped'), bound])).toBe('stopped');
    expect(Date.now() - stopAt).toBeLessThan(100 + FLUSH_GRACE_MS + 1000);
    expect(await Promise.race([running, bound])).toBe('stopped');
    expect(w.state).toBe('stopped');
    const warning = logger.lines.find((l) => l.level === 'warn' && l.fields?.taskId === taskId);
    expect(warning?.msg).toBe('handler still running after its signal aborted; stop() does not wait for it');
    // Its stream was reset: the node failed the attempt.
    expect(await outcome(c, taskId)).toMatchObject({ status: 'FAILED', attempt: 1, error: { type: 'worker_lost' } });
  }, FLUSH_GRACE_MS + 20_000);
});

describe('liveness and attempt timeouts', () => {
  it('pings idle streams every matching.pingInterval, and never a busy one', async () => {
    const t = await node({ 'matching.pingInterval': '200ms' });
    const s = rawSlot(t);
    await s.nextOf('registered');
    const times = [Date.now()];
    for (let i = 0; i < 3; i++) {
      expect((await s.next(1000)).frame).toBe('ping');
      times.push(Date.now());
    }
    // Each once three quarters of the interval have passed (so none is late): 150 ms, less the clocks' rounding.
    for (let i = 1; i < times.length; i++) {
      expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(140);
      expect(times[i]! - times[i - 1]!).toBeLessThan(450);
    }
    const c = client(t.node.apiAddress);
    await c.enqueueStep(spec());
    const task = (await s.nextOf('step_task')).step_task!;
    await expect(s.next(700)).rejects.toThrow(/no frame within 700 ms/); // busy: no Ping
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await s.next(1000)).frame).toBe('result_ack');
    expect((await s.next(450)).frame).toBe('ping'); // idle again
  });

  it('the SDK answers Pings on idle streams and sends Pongs at its cadence while a task runs', async () => {
    const t = await node({ 'matching.pingInterval': '200ms' });
    const tp = await tap(t);
    const { w } = worker(tp.address, { charge: () => sleep(650).then(() => 'ok') }, { _internal: { pongIntervalMs: 100 } });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const ping = await waitFor(() => tp.frames.find((f) => f.dir === 'down' && f.kind === 'ping'));
    const reply = await waitFor(() => tp.frames.find((f) => f.dir === 'up' && f.kind === 'pong' && f.at >= ping.at));
    expect(toNum((reply.frame as pb.IWorkerFrame).pong!.sent_at_ms)).toBe(toNum((ping.frame as pb.IServerFrame).ping!.sent_at_ms));

    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec());
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED' });
    const from = tp.frames.findIndex((f) => f.kind === 'step_task');
    const to = tp.frames.findIndex((f) => f.kind === 'step_result');
    const during = tp.frames.slice(from, to);
    const pongs = during.filter((f) => f.dir === 'up' && f.kind === 'pong');
    // Every 75-100 ms (three quarters of the interval at least: no gap over it) through 650 ms.
    expect(pongs.length).toBeGreaterThanOrEqual(5);
    expect(pongs.length).toBeLessThanOrEqual(9);
    for (let i = 1; i < pongs.length; i++) expect(pongs[i]!.at - pongs[i - 1]!.at).toBeGreaterThanOrEqual(50);
    expect(during.some((f) => f.kind === 'ping')).toBe(false);
  });

  it('tells a registering stream the configured matching.pingInterval in Registered', async () => {
    // Guards DESIGN §5: Registered carries the node's ping interval, not a fixed or default value.
    const t = await node({ 'matching.pingInterval': '7s' });
    const s = rawSlot(t);
    const reg = (await s.nextOf('registered')).registered!;
    expect(toNum(reg.ping_interval_ms)).toBe(7000);
  });

  it('a Heartbeat extends the heartbeat deadline: a 1 s Step with a 300 ms heartbeat timeout completes as attempt 1', async () => {
    const t = await node();
    const attempts: number[] = [];
    const { w } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        attempts.push(ctx.attempt);
        for (let i = 0; i < 10; i++) {
          ctx.heartbeat();
          await sleep(100);
        }
        return 'ok';
      },
    });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec({ heartbeatTimeoutMs: 300, retryPolicy: { maxAttempts: 3, initialIntervalMs: 50 } }));
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect(attempts).toEqual([1]);
  });

  it('a missing Heartbeat fails the attempt through the retry policy', async () => {
    const t = await node();
    const release = held();
    const attempts: number[] = [];
    const { w, logger } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt > 1) return `done-${ctx.attempt}`;
        ctx.heartbeat();
        await release.opened; // and no more heartbeats
        return 'late';
      },
    }, { maxConcurrentTasks: 2 });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec({ heartbeatTimeoutMs: 300, retryPolicy: { maxAttempts: 3, initialIntervalMs: 50 } }));
    const o = await outcome(c, taskId);
    expect(o).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect(o.output.toString()).toBe('done-2');
    expect(attempts).toEqual([1, 2]);
    release.open();
    await waitFor(() => logger.count('result not accepted', { verdict: 'REFUSED_STALE' }) === 1, { description: 'the stale refusal' });
  });

  it('method_timeout_ms fails a too-long attempt even while it heartbeats', async () => {
    const t = await node();
    const release = held();
    const startedAt: number[] = [];
    const { w } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        startedAt.push(Date.now());
        if (ctx.attempt > 1) return 'second';
        const beat = setInterval(() => ctx.heartbeat(), 50);
        await release.opened;
        clearInterval(beat);
        return 'late';
      },
    }, { maxConcurrentTasks: 2 });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec({
      methodTimeoutMs: 400, heartbeatTimeoutMs: 200, retryPolicy: { maxAttempts: 3, initialIntervalMs: 50 },
    }));
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect(startedAt).toHaveLength(2);
    // Heartbeats kept the 200 ms heartbeat deadline away; the 400 ms method deadline ended it.
    expect(startedAt[1]! - startedAt[0]!).toBeGreaterThanOrEqual(380);
  });

  it('heartbeat_timeout_ms fails an attempt that never heartbeats, though its method timeout is far off', async () => {
    const t = await node();
    const release = held();
    const startedAt = new Map<string, number[]>();
    const c = client(t.node.apiAddress);
    const timeouts = { methodTimeoutMs: 60_000, heartbeatTimeoutMs: 300, retryPolicy: { maxAttempts: 3, initialIntervalMs: 50 } };
    // One Step offered to the worker once it registers, one started at its enqueue in an idle slot.
    const offered = (await c.enqueueStep(spec(timeouts))).taskId;
    const { w } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        startedAt.set(ctx.taskId, [...(startedAt.get(ctx.taskId) ?? []), Date.now()]);
        if (ctx.attempt > 1) return 'second';
        await release.opened; // no heartbeat at all
        return 'late';
      },
    }, { maxConcurrentTasks: 3, reservedRpcTasks: 0 });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const atEnqueue = (await c.enqueueStep(spec(timeouts))).taskId;
    for (const taskId of [offered, atEnqueue]) {
      expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 2 });
      const [first, second] = startedAt.get(taskId)!;
      expect(second! - first!).toBeGreaterThanOrEqual(280);
    }
    release.open();
  });

  /** A registered worker of one slot running `charge` (a retry can only run there once attempt 1 let go), and a Client. */
  async function oneSlot(address: string, charge: StepHandler) {
    const { w } = worker(address, { charge }, { maxConcurrentTasks: 1, reservedRpcTasks: 0 });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    return client(address);
  }

  it('tells a timed-out attempt\'s handler (its signal aborts), so its slot takes the retry', async () => {
    const t = await node();
    const reasons: unknown[] = [];
    const c = await oneSlot(t.node.apiAddress, async (ctx) => {
      if (ctx.attempt > 1) return 'second';
      reasons.push(await aborted(ctx.signal)); // no heartbeat: only the Cancel ends this wait
      return 'late';
    });
    const { taskId } = await c.enqueueStep(spec({ heartbeatTimeoutMs: 300, retryPolicy: { maxAttempts: 3, initialIntervalMs: 50 } }));
    // One slot: attempt 2 can run only once attempt 1's handler has been told and let go.
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect(reasons).toHaveLength(1);
    expect((reasons[0] as Error).message).toContain('timed out');
  });

  it('cancels an attempt whose heartbeat finds it ended, when the owner\'s Cancel never came', async () => {
    const t = await node();
    // The owner's Cancel is lost (a peer message that never arrived).
    t.node.gateway.cancelAttempts = () => undefined;
    const reasons: unknown[] = [];
    const c = await oneSlot(t.node.apiAddress, async (ctx) => {
      if (ctx.attempt > 1) return 'second';
      const gone = aborted(ctx.signal);
      await sleep(500); // past the 200 ms heartbeat timeout: the attempt fails meanwhile
      ctx.heartbeat(); // refused: the node tells the worker
      reasons.push(await gone);
      return 'late';
    });
    const { taskId } = await c.enqueueStep(spec({ heartbeatTimeoutMs: 200, retryPolicy: { maxAttempts: 3, initialIntervalMs: 50 } }));
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect((reasons[0] as Error).message).toContain('no longer held');
  });

  it('tells a worker whose heartbeat finds its flow cancelled that the flow was cancelled, when the owner\'s Cancel never came', async () => {
    // The Cancel's reason is what the handler's signal aborts with: a cancelled flow is not a timeout.
    const t = await node();
    t.node.gateway.cancelAttempts = () => undefined; // the owner's Cancel is lost
    const s = rawSlot(t, { app_worker_id: 'hb-cancelled' });
    await s.nextOf('registered');
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'hb-cancelled', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' } });
    const task = (await s.nextOf('step_task')).step_task!;
    await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'hb-cancelled' });
    s.send({ heartbeat: { task_token: task.task_token } });
    expect((await s.nextOf('cancel')).cancel).toMatchObject({ task_token: task.task_token, reason: 'the flow was cancelled' });
  });

  it('queue time counts toward neither timeout', async () => {
    const t = await node();
    const c = client(t.node.apiAddress);
    const { taskId } = await c.enqueueStep(spec({ methodTimeoutMs: 300, heartbeatTimeoutMs: 300 }));
    await sleep(600); // queued, with no worker, for twice both timeouts
    expect(await c.getTask(taskId)).toMatchObject({ state: 'QUEUED', attempt: 1 });
    const { w } = worker(t.node.apiAddress, { charge: () => sleep(100).then(() => 'ok') });
    void run(w);
    expect(await outcome(c, taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1 });
  });
});

describe('CancelFlow through the SDK', () => {
  it('aborts the running handler\'s signal and refuses its late result: the outcome stays CANCELLED', async () => {
    const t = await node();
    const started = held();
    let reason: unknown;
    const { w, logger } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        started.open();
        reason = await aborted(ctx.signal);
        return 'late output'; // a result, not a throw: the node must refuse it
      },
    });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const s = spec();
    const { taskId } = await c.enqueueStep(s);
    await started.opened;
    expect(await c.cancelFlow('acme', s.flowId, 'user asked')).toEqual({ cancelledQueued: 0, cancelledRunning: 1 });
    await waitFor(() => reason !== undefined, { description: 'the handler signal' });
    expect(reason).toBeInstanceOf(TaskCancelledError);
    expect((reason as Error).message).toBe('user asked');
    await waitFor(() => logger.count('result refused: task was cancelled', { verdict: 'REFUSED_CANCELLED' }) === 1);
    const o = await outcome(c, taskId);
    expect(o).toMatchObject({ status: 'CANCELLED', attempt: 1 });
    expect(o.output.length).toBe(0);
    expect((await c.getTask(taskId)).outcome).toMatchObject({ status: 'CANCELLED' });
  });
});

describe('reserved RPC slots', () => {
  it('a Worker with limit 4 and the default reserve opens 3 STEP_AND_RPC and 1 RPC_ONLY streams', async () => {
    const t = await node();
    const { w } = worker(t.node.apiAddress, { charge: () => 'ok' }, { maxConcurrentTasks: 4, reservedRpcTasks: undefined });
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const registry = t.node.metrics.registry;
    await waitFor(async () => (await metricValue(registry, 'dexzd_gateway_streams', { kind: 'STEP_AND_RPC' })) === 3
      && (await metricValue(registry, 'dexzd_gateway_streams', { kind: 'RPC_ONLY' })) === 1, { description: '3 + 1 streams' });
    expect(w.readiness().queues.map((q) => [q.slotKind, q.hasRegisteredStream])).toEqual([['STEP_AND_RPC', true], ['RPC_ONLY', true]]);
  });

  it('never sends a Step to an RPC-only slot: with the one shared slot busy, a second Step waits', async () => {
    const t = await node();
    const started = held();
    const release = held();
    const ran: string[] = [];
    const { w, logger } = worker(t.node.apiAddress, {
      charge: async (ctx) => {
        ran.push(ctx.input.toString());
        if (ctx.input.toString() === 'long') {
          started.open();
          await release.opened;
        }
        return 'ok';
      },
    }, { maxConcurrentTasks: 2, reservedRpcTasks: undefined }); // 1 shared + 1 RPC-only
    void run(w);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const c = client(t.node.apiAddress);
    const long = await c.enqueueStep(spec({ input: 'long' }));
    await started.opened;
    const second = await c.enqueueStep(spec({ input: 'second' }));
    await sleep(500); // a non-event: give a wrong dispatch every chance to happen
    expect(await c.getTask(second.taskId)).toMatchObject({ state: 'QUEUED', attempt: 1 });
    expect(ran).toEqual(['long']);
    expect(logger.count('server sent a Step to an RPC-only slot; declining it')).toBe(0);
    expect(await metricValue(t.node.metrics.registry, 'dexzd_matching_returned_attempts_total', { reason: 'legacy_no_capacity' })).toBe(0);
    release.open();
    expect(await outcome(c, long.taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect(await outcome(c, second.taskId)).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect(ran).toEqual(['long', 'second']);
  });
});
