/**
 * The Worker against a hand-written WorkerTaskService on a real nice-grpc
 * server (127.0.0.1:0): registration, tasks, declines, pings, cancel,
 * reconnect, startup failures, readiness and stop/drain.
 */
import { Status } from 'nice-grpc';
import { pb, PROTOCOL_VERSION } from '../../../src/wire';
import {
  PullRegistrationError, StepFailure, Worker, WorkerCapacityError, ZdProtocolError, type WorkerOptions,
} from '../../../src';
import { FLUSH_GRACE_MS } from '../../../src/sdk/worker';
import { SDK_VERSION } from '../../../src/sdk/common';
import { FakeWorkerServer, recordingLogger, registerOk } from './fake-worker-server';

const ACK = (token: string, verdict = pb.ResultVerdict.ACCEPTED) => ({ result_ack: { task_token: token, verdict } });
/** A handler's work that never ends by itself: it rejects once the worker aborts it. */
const untilAborted = (signal: AbortSignal): Promise<never> =>
  new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
const step = (token: string, stepType = 'charge', extra: Partial<pb.IStepTask> = {}): pb.IServerFrame => ({
  step_task: {
    task_token: token, task_id: `task-${token}`, tenant: 't1', flow_id: 'f1', flow_type: 'order', step_type: stepType,
    step_execution_id: 'e1', attempt: 1, input: Buffer.from('in'), ...extra,
  },
});

describe('Worker streams', () => {
  let server: FakeWorkerServer;
  let worker: Worker | undefined;
  const logger = recordingLogger();

  const make = (o: Partial<WorkerOptions> = {}) =>
    (worker = new Worker({
      address: server.address,
      tenant: 't1',
      appWorkerId: 'w-test',
      maxConcurrentTasks: 2,
      reservedRpcTasks: 0,
      logger,
      reconnectBackoff: { initialMs: 10, maxMs: 50 },
      flowTypes: {
        order: {
          steps: {
            charge: (ctx) => `charged:${ctx.input.toString()}:${ctx.attempt}`,
            fail: () => {
              throw new StepFailure('declined', { type: 'Declined', nonRetryable: true, retryAfterMs: 10 });
            },
          },
          rpcs: { status: (ctx) => Buffer.from(`status:${ctx.flowId}`) },
        },
      },
      ...o,
    }));

  beforeEach(async () => {
    server = await new FakeWorkerServer().start();
    logger.lines.length = 0;
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await server.stop();
  });

  it('opens one stream per slot, registers each, and becomes ready', async () => {
    const w = make({ maxConcurrentTasks: 3, reservedRpcTasks: 1, credential: async () => 'tok' });
    const wait = w.waitPullRegistered(); // before start
    const running = w.start();
    await wait;
    const streams = await server.waitStreams(3);
    expect(server.registered(pb.SlotKind.STEP_AND_RPC)).toHaveLength(2);
    expect(server.registered(pb.SlotKind.RPC_ONLY)).toHaveLength(1);
    expect(streams[0]!.register).toMatchObject({
      protocol_version: PROTOCOL_VERSION, tenant: 't1', app_worker_id: 'w-test', flow_types: ['order'], task_limit: 3,
      sdk_name: 'zdmatch-ts', sdk_version: SDK_VERSION, slot_kind: pb.SlotKind.STEP_AND_RPC,
    });
    expect(streams[0]!.metadata.get('authorization')).toBe('Bearer tok');
    expect(streams.map((s) => s.metadata.get('zd-protocol-version'))).toEqual(Array(3).fill(String(PROTOCOL_VERSION)));
    expect(w.readiness()).toEqual({
      isReady: true,
      queues: [
        { slotKind: 'STEP_AND_RPC', hasRegisteredStream: true, lastPermanentError: null },
        { slotKind: 'RPC_ONLY', hasRegisteredStream: true, lastPermanentError: null },
      ],
    });
    await w.stop();
    await expect(running).resolves.toBeUndefined();
    expect(streams.every((s) => s.halfClosed)).toBe(true);
  });

  it('runs a Step, sends its output and waits for the ResultAck; runs an RPC', async () => {
    const w = make({ maxConcurrentTasks: 1, reservedRpcTasks: 0 });
    void w.start();
    const [s] = await server.waitStreams(1);
    s!.send(step('a'));
    const res = await s!.next('step_result');
    expect(res.step_result).toMatchObject({ task_token: 'a', result: 'output' });
    expect(Buffer.from(res.step_result!.output!).toString()).toBe('charged:in:1');
    s!.send(ACK('a'));
    s!.send({ rpc_task: { task_token: 'r', tenant: 't1', flow_id: 'f9', flow_type: 'order', rpc_name: 'status' } });
    const rpc = await s!.next('rpc_result');
    expect(Buffer.from(rpc.rpc_result!.output!).toString()).toBe('status:f9');
    s!.send(ACK('r', pb.ResultVerdict.REFUSED_STALE));
    await s!.until(() => logger.lines.some((l) => l.level === 'warn' && l.msg === 'result not accepted'), 'a warning');
  });

  it('keeps a busy stream the node no longer pings: only an idle one is reset for its silence', async () => {
    // The node pings idle streams only; a handler that runs past three ping intervals must keep its stream.
    await server.stop();
    server = await new FakeWorkerServer({
      onRegister: (s) => s.send({ registered: { max_concurrent_tasks_cap: 256, ping_interval_ms: 30, server_protocol_version: 4, node_id: 'n1' } }),
    }).start();
    const w = make({
      maxConcurrentTasks: 1,
      reservedRpcTasks: 0,
      flowTypes: { order: { steps: { slow: () => new Promise<string>((r) => setTimeout(() => r('slow done'), 250)) } } },
    });
    void w.start();
    const [s] = await server.waitStreams(1);
    s!.send(step('a', 'slow'));
    const res = await s!.next('step_result');
    expect(Buffer.from(res.step_result!.output!).toString()).toBe('slow done');
    expect(s!.cancelled).toBe(false);
    expect(server.streams).toHaveLength(1);
    expect(logger.lines.filter((l) => l.msg === 'slot stream silent past its pings; reconnecting')).toEqual([]);
    s!.send(ACK('a'));
  });

  it('registers as taking a task right behind an ack, and runs one that arrives with the ack', async () => {
    const w = make({ maxConcurrentTasks: 1, reservedRpcTasks: 0 });
    void w.start();
    const [s] = await server.waitStreams(1);
    expect(s!.register.accepts_task_after_ack).toBe(true);
    s!.send(step('a'));
    await s!.next('step_result');
    // the ack and the next task in the same write, as a node that frees the slot early sends them
    s!.send(ACK('a'));
    s!.send(step('b'));
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'b', result: 'output' });
    expect(s!.received.some((f) => f.frame === 'decline')).toBe(false);
    s!.send(ACK('b'));
  });

  it('keeps a slot busy on an ack for a task still running: a task sent behind it is declined, not run beside it', async () => {
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const w = make({
      maxConcurrentTasks: 1, reservedRpcTasks: 0,
      flowTypes: { order: { steps: { charge: async () => { most = Math.max(most, ++running); await gate; running--; return 'ok'; } } } },
    });
    void w.start();
    const [s] = await server.waitStreams(1);
    s!.send(step('a'));
    await s!.until(() => running === 1, 'the handler running');
    s!.send(ACK('a')); // before its result: a server bug, or a duplicate
    s!.send(step('b'));
    expect((await s!.next('decline')).decline).toMatchObject({ task_token: 'b', reason: pb.DeclineReason.NO_CAPACITY });
    expect(most).toBe(1);
    release();
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'a' });
    s!.send(ACK('a'));
  });

  it('declines a Step sent to an RPC-only slot without running it, and still runs RPCs there', async () => {
    let steps = 0;
    const w = make({
      maxConcurrentTasks: 2, reservedRpcTasks: 1,
      flowTypes: { order: { steps: { charge: () => String(++steps) }, rpcs: { status: (ctx) => `status:${ctx.flowId}` } } },
    });
    void w.start();
    await server.waitStreams(2);
    const rpcOnly = server.registered(pb.SlotKind.RPC_ONLY)[0]!;
    rpcOnly.send(step('a'));
    expect((await rpcOnly.next('decline')).decline).toMatchObject({ task_token: 'a', reason: pb.DeclineReason.NO_CAPACITY });
    expect(steps).toBe(0);
    rpcOnly.send({ rpc_task: { task_token: 'r', tenant: 't1', flow_id: 'f9', flow_type: 'order', rpc_name: 'status' } });
    expect((await rpcOnly.next('rpc_result')).rpc_result).toMatchObject({ task_token: 'r', output: Buffer.from('status:f9') });
    rpcOnly.send(ACK('r'));
    expect(steps).toBe(0);
  });

  it('holds a sent result for its own ack: an ack for another token neither settles it nor frees the slot', async () => {
    void make({ maxConcurrentTasks: 1, reservedRpcTasks: 0 }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('a'));
    await s!.next('step_result');
    s!.send(ACK('zz', pb.ResultVerdict.REFUSED_STALE)); // a stale ack, for a task long gone
    s!.send(step('b'));
    expect((await s!.next('decline')).decline).toMatchObject({ task_token: 'b', reason: pb.DeclineReason.NO_CAPACITY });
    s!.send(ACK('a'));
    s!.send(step('c'));
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'c' });
    s!.send(ACK('c'));
    expect(logger.lines.filter((l) => l.msg === 'result not accepted')).toEqual([]);
  });

  it('runs a task that rides in the ack of the previous result (accepts_task_in_ack)', async () => {
    const w = make({ maxConcurrentTasks: 1, reservedRpcTasks: 0 });
    void w.start();
    const [s] = await server.waitStreams(1);
    expect(s!.register.accepts_task_in_ack).toBe(true);
    s!.send(step('a'));
    await s!.next('step_result');
    s!.send({ result_ack: { ...ACK('a').result_ack, next_task: step('b').step_task } });
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'b', result: 'output' });
    s!.send(ACK('b'));
    // an ack that is not for the slot's task still delivers its task to a free slot
    s!.send({ result_ack: { ...ACK('zz').result_ack, next_task: step('c').step_task } });
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'c', result: 'output' });
    expect(s!.received.some((f) => f.frame === 'decline')).toBe(false);
    s!.send(ACK('c'));
  });

  it('turns a thrown StepFailure into a failure result', async () => {
    void make({ maxConcurrentTasks: 1 }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('b', 'fail'));
    const res = await s!.next('step_result');
    expect(res.step_result!.failure).toMatchObject({ message: 'declined', type: 'Declined', non_retryable: true });
    expect(Number(res.step_result!.failure!.retry_after_ms)).toBe(10);
    s!.send(ACK('b'));
  });

  it('sends a failure refused as invalid again as one the node takes, holding the slot until that is acknowledged', async () => {
    void make({ maxConcurrentTasks: 1 }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('b', 'fail'));
    await s!.next('step_result');
    // Refused, the attempt is still the slot's: the worker must end it with a failure the node takes.
    s!.send({ result_ack: { task_token: 'b', verdict: pb.ResultVerdict.REFUSED_INVALID, error: 'step_result.failure.type: not valid UTF-8 text' } });
    const again = (await s!.next('step_result')).step_result!;
    expect(again.task_token).toBe('b');
    expect(again.failure).toMatchObject({ type: 'invalid_result', non_retryable: true });
    expect(again.failure!.message).toBe('the node refused the failure as sent (step_result.failure.type: not valid UTF-8 text): declined');
    // Held until then: a task sent meanwhile is declined, not run beside the attempt.
    s!.send(step('x'));
    expect((await s!.next('decline')).decline).toMatchObject({ task_token: 'x', reason: pb.DeclineReason.NO_CAPACITY });
    s!.send(ACK('b'));
    s!.send(step('c'));
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'c', result: 'output' });
    // An output refused as invalid (past limits.maxPayloadBytes) failed the attempt: the slot is free at once.
    s!.send({ result_ack: { task_token: 'c', verdict: pb.ResultVerdict.REFUSED_INVALID, error: 'step_result.output: exceeds limits.maxPayloadBytes (16); the attempt failed' } });
    s!.send(step('d'));
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'd', result: 'output' });
    s!.send(ACK('d'));
    expect(s!.received.filter((f) => f.frame === 'step_result').map((f) => f.step_result!.task_token)).toEqual(['b', 'b', 'c', 'd']);
  });

  it('declines an unknown Step type or RPC name before running anything', async () => {
    void make({ maxConcurrentTasks: 1 }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('c', 'nope'));
    expect((await s!.next('decline')).decline).toMatchObject({ task_token: 'c', reason: pb.DeclineReason.UNKNOWN_TYPE });
    s!.send({ rpc_task: { task_token: 'd', flow_type: 'order', rpc_name: 'constructor' } });
    expect((await s!.next('decline')).decline).toMatchObject({ task_token: 'd', reason: pb.DeclineReason.UNKNOWN_TYPE });
    s!.send({ rpc_task: { task_token: 'e', flow_type: 'other', rpc_name: 'status' } });
    expect((await s!.next('decline')).decline!.task_token).toBe('e');
    expect(s!.received.some((f) => f.frame === 'step_result' || f.frame === 'rpc_result')).toBe(false);
  });

  it('leaves a running handler alone on a Cancel of another task (one this slot ran before)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let seen: AbortSignal | undefined;
    void make({
      maxConcurrentTasks: 1,
      flowTypes: { order: { steps: { charge: () => 'first', slow: async (ctx) => { seen = ctx.signal; await gate; return 'done'; } } } },
    }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('a'));
    await s!.next('step_result');
    s!.send(ACK('a'));
    s!.send(step('b', 'slow'));
    await s!.until(() => seen !== undefined, 'the handler running');
    s!.send({ cancel: { task_token: 'a', reason: 'flow cancelled' } }); // late, for the finished task
    await new Promise((r) => setTimeout(r, 50));
    expect(seen!.aborted).toBe(false);
    release();
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'b', output: Buffer.from('done') });
    s!.send(ACK('b'));
  });

  it('answers Ping with Pong, forwards heartbeats, and aborts the handler on Cancel', async () => {
    let seen: AbortSignal | undefined;
    const w = make({
      maxConcurrentTasks: 1,
      flowTypes: {
        order: {
          steps: {
            long: async (ctx) => {
              seen = ctx.signal;
              ctx.heartbeat('50%');
              await new Promise((r) => ctx.signal.addEventListener('abort', r));
              throw ctx.signal.reason;
            },
          },
        },
      },
    });
    void w.start();
    const [s] = await server.waitStreams(1);
    s!.send({ ping: { sent_at_ms: 123 } });
    expect(Number((await s!.next('pong')).pong!.sent_at_ms)).toBe(123);
    s!.send(step('f', 'long'));
    const hb = await s!.next('heartbeat');
    expect(hb.heartbeat!.task_token).toBe('f');
    expect(Buffer.from(hb.heartbeat!.details!).toString()).toBe('50%');
    s!.send({ cancel: { task_token: 'f', reason: 'flow cancelled' } });
    const res = await s!.next('step_result');
    expect(seen!.aborted).toBe(true);
    expect(res.step_result!.failure).toMatchObject({ type: 'TaskCancelledError', message: 'flow cancelled' });
    s!.send(ACK('f', pb.ResultVerdict.REFUSED_CANCELLED));
    await s!.until(() => logger.lines.some((l) => l.msg === 'result refused: task was cancelled'), 'the refusal log');
  });

  it('finishes the running task on Reconnect, then reconnects', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    void make({
      maxConcurrentTasks: 1,
      flowTypes: { order: { steps: { slow: async () => { await gate; return 'done'; } } } },
    }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('g', 'slow'));
    await s!.until(() => true, 'nothing');
    s!.send({ reconnect: { reason: 'node draining' } });
    await new Promise((r) => setTimeout(r, 50));
    expect(s!.halfClosed).toBe(false); // busy: not before the task's ack
    release();
    await s!.next('step_result');
    s!.send(ACK('g'));
    await s!.until(() => s!.halfClosed, 'half-close');
    await server.waitStreams(2);
    // A Reconnect is no failure: the slot redials at once, not through the backoff of a stream the server ended.
    expect(logger.lines.filter((l) => l.msg === 'slot stream ended by the server; reconnecting')).toEqual([]);
  });

  it('fails start when the first registration reports a cap below the limit, naming both', async () => {
    await server.stop();
    server = await new FakeWorkerServer({ onRegister: registerOk(2) }).start();
    const w = make({ maxConcurrentTasks: 4, reservedRpcTasks: 1 });
    // Handled at once: start() drains (a round trip) before it rejects, and the waiter rejects first.
    const wait = w.waitPullRegistered().catch((e: unknown) => e);
    const err = await w.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerCapacityError);
    expect((err as Error).message).toMatch(/4.*2/);
    expect(await wait).toBe(err);
    // The refused streams half-close (never reset): a task sent behind Registered returns unconsumed.
    await server.waitStreams(3);
    await Promise.all(server.streams.map((s) => s.until(() => s.halfClosed || s.cancelled, 'the stream to end')));
    expect(server.streams.filter((s) => s.received[0]?.frame === 'register').every((s) => s.halfClosed)).toBe(true);
    expect(w.state).toBe('failed');
  });

  it('treats a first frame other than Registered as a protocol error: nothing answered, the stream redialled', async () => {
    await server.stop();
    server = await new FakeWorkerServer({ onRegister: (s) => s.send({ ping: { sent_at_ms: 7 } }) }).start();
    void make({ maxConcurrentTasks: 1 }).start();
    const [s] = await server.waitStreams(2);
    expect(s!.received.map((f) => f.frame)).toEqual(['register']); // no Pong on an unregistered stream
    expect(logger.lines.find((l) => l.msg === 'slot stream failed; reconnecting')?.fields?.error).toMatch(/protocol error: expected Registered, got ping/);
  });

  it('counts a stream registered once although its Registered came twice: readiness drops when it ends', async () => {
    await server.stop();
    let first = true;
    server = await new FakeWorkerServer({
      onRegister: (s, reg) => {
        if (!first) return; // later streams stay unanswered
        first = false;
        registerOk()(s, reg);
        registerOk()(s, reg);
        s.send({ ping: { sent_at_ms: 1 } });
      },
    }).start();
    const w = make({ maxConcurrentTasks: 1 });
    void w.start();
    const [s] = await server.waitStreams(1);
    await s!.next('pong'); // both Registered frames handled
    expect(w.readiness().isReady).toBe(true);
    s!.end();
    await server.waitStreams(2);
    expect(w.readiness().queues[0]!.hasRegisteredStream).toBe(false);
  });

  it('keeps the slot for a task that rode in an ack: the earlier task ending does not free it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    void make({
      maxConcurrentTasks: 1,
      flowTypes: { order: { steps: { charge: () => 'first', slow: async () => { runs++; await gate; return 'done'; } } } },
    }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('a'));
    await s!.next('step_result');
    s!.send({ result_ack: { ...ACK('a').result_ack, next_task: step('b', 'slow').step_task } });
    await s!.until(() => runs === 1, 'the second handler');
    s!.send(step('c', 'slow'));
    expect((await s!.next('decline')).decline).toMatchObject({ task_token: 'c', reason: pb.DeclineReason.NO_CAPACITY });
    expect(runs).toBe(1);
    release();
    expect((await s!.next('step_result')).step_result).toMatchObject({ task_token: 'b' });
    s!.send(ACK('b'));
  });

  it('on a stream the server ends, aborts the running handler and redials only once it returned', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let signal: AbortSignal | undefined;
    void make({
      maxConcurrentTasks: 1,
      // ignores its signal for a while, as a handler in a call that cannot be interrupted does
      flowTypes: { order: { steps: { slow: async (ctx) => { signal = ctx.signal; await gate; return 'late'; } } } },
    }).start();
    const [s] = await server.waitStreams(1);
    s!.send(step('h', 'slow'));
    await s!.until(() => signal !== undefined, 'the handler');
    s!.end();
    await s!.until(() => signal!.aborted, 'the handler aborted');
    expect((signal!.reason as Error).message).toBe('the slot stream ended');
    await new Promise((r) => setTimeout(r, 100)); // past the 10 ms backoff
    expect(server.streams).toHaveLength(1); // a new stream now would run two tasks on one slot
    release();
    await server.waitStreams(2);
    expect(s!.received.some((f) => f.frame === 'step_result')).toBe(false);
    expect(logger.lines.some((l) => l.msg === 'slot stream ended by the server; reconnecting')).toBe(true);
  });

  it('keeps a registered stream that a node ends with a permanent status apart from a rejection of the slot', async () => {
    const w = make({ maxConcurrentTasks: 1, stopOnPermanentStreamRejection: true });
    const running = w.start().then(() => 'stopped', (e: unknown) => e);
    const [s] = await server.waitStreams(1);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    s!.fail(Status.RESOURCE_EXHAUSTED, 'ZD_PAYLOAD_TOO_LARGE: result too large');
    await server.waitStreams(2);
    expect(w.state).toBe('running');
    expect(w.readiness().queues[0]!.lastPermanentError).toBeNull();
    expect(logger.lines.some((l) => l.msg === 'slot stream rejected')).toBe(false);
    await w.stop();
    expect(await running).toBe('stopped');
  });

  it('stop() half-closes a stream the node has not answered yet, and resets it only after a short grace', async () => {
    await server.stop();
    server = await new FakeWorkerServer({ onRegister: () => undefined, endOnHalfClose: false }).start();
    const w = make({ maxConcurrentTasks: 1, reservedRpcTasks: 0 });
    const running = w.start().catch((e: unknown) => e);
    const [s] = await server.waitStreams(1);
    const t0 = Date.now();
    const stopping = w.stop();
    // Half-close first: had the node registered it and sent a task, the task would come back unconsumed.
    await s!.until(() => s!.halfClosed, 'the half-close');
    expect(s!.cancelled).toBe(false);
    await stopping;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - t0).toBeLessThan(4000);
    await s!.until(() => s!.cancelled, 'the reset');
    expect(await running).toBeUndefined(); // stop() ends start() normally
  });

  it('runs against an older server that reports no cap (0): no cap check, the worker registers', async () => {
    await server.stop();
    server = await new FakeWorkerServer({ onRegister: registerOk(0) }).start();
    const w = make({ maxConcurrentTasks: 2 });
    void w.start();
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    expect(w.state).toBe('running');
  });

  it('fails start with ZdProtocolError on a protocol mismatch', async () => {
    await server.stop();
    const msg = `ZD_PROTOCOL_MISMATCH: worker protocol version ${PROTOCOL_VERSION} is not supported; this server speaks protocol version 3`;
    server = await new FakeWorkerServer({ onRegister: (s) => s.fail(Status.FAILED_PRECONDITION, msg) }).start();
    const w = make();
    const wait = w.waitPullRegistered().catch((e: unknown) => e);
    const err = await w.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZdProtocolError);
    expect((err as Error).message).toBe(msg);
    expect(await wait).toBe(err);
  });

  it('after it registered, keeps running on a FAILED_PRECONDITION a later Register gets, recording it and retrying', async () => {
    // Only a worker that never registered fails on it (a protocol mismatch at startup): one that
    // ran, say through a rolling upgrade, keeps its other streams and retries the refused one.
    await server.stop();
    let refuse = false;
    const msg = 'ZD_PROTOCOL_MISMATCH: worker protocol version 1 is not supported; this server speaks protocol version 3';
    server = await new FakeWorkerServer({
      onRegister: (s, reg) => (refuse ? s.fail(Status.FAILED_PRECONDITION, msg) : registerOk()(s, reg)),
    }).start();
    const w = make({ maxConcurrentTasks: 2, reservedRpcTasks: 0 });
    const running = w.start().then(() => 'stopped', (e: unknown) => e);
    const [first] = await server.waitStreams(2);
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    refuse = true;
    first!.fail(Status.UNAVAILABLE, 'node restarting');
    await first!.until(() => server.streams.length >= 5, 'the refused slot to retry');
    expect(w.state).toBe('running');
    expect(w.readiness()).toMatchObject({ isReady: true });
    expect(logger.lines.some((l) => l.msg === 'slot stream rejected' && l.fields?.status === 'FAILED_PRECONDITION')).toBe(true);
    await w.stop();
    expect(await running).toBe('stopped');
  });

  it('warns once for each cap below the limit that later registrations report, not at every registration', async () => {
    await server.stop();
    let cap = 256;
    server = await new FakeWorkerServer({ onRegister: (s, reg) => registerOk(cap)(s, reg) }).start();
    const w = make({ maxConcurrentTasks: 3, reservedRpcTasks: 0 });
    void w.start();
    await w.waitPullRegistered(AbortSignal.timeout(5000));
    const warned = () => logger.lines.filter((l) => l.msg === 'server maxConcurrentTasksCap is below maxConcurrentTasks; some slots will be rejected').map((l) => l.fields);
    const registrations = () => logger.lines.filter((l) => l.msg === 'slot stream registered').length;
    await server.streams[0]!.until(() => registrations() === 3, 'the first registrations');
    // Each round ends every stream; all three register again, each told the round's cap.
    for (const [i, next] of [2, 2, 1].entries()) {
      cap = next;
      for (const st of server.registered().slice(-3)) st.end();
      await server.streams[0]!.until(() => registrations() === 3 * (i + 2), 'the streams registered again');
    }
    expect(warned()).toEqual([{ cap: 2, maxConcurrentTasks: 3 }, { cap: 1, maxConcurrentTasks: 3 }]);
    expect(w.state).toBe('running');
  });

  it('fails start, readiness waiters and the state with the cause when setup throws (an unreadable tls.ca)', async () => {
    const w = make({ tls: { ca: '/nonexistent/ca.pem' } });
    const wait = w.waitPullRegistered().catch((e: unknown) => e);
    const err = await w.start().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ENOENT' });
    const pending = new Promise((r) => setTimeout(() => r('still pending after 3 s'), 3000).unref());
    expect(await Promise.race([wait, pending])).toBe(err);
    expect(w.state).toBe('failed');
    await expect(w.waitPullRegistered()).rejects.toBe(err); // a later waiter too
  });

  it('records permanent rejections, retries, and clears them on registration', async () => {
    await server.stop();
    let rejectRpcOnly = true;
    server = await new FakeWorkerServer({
      onRegister: (s, reg) => {
        if (reg.slot_kind === pb.SlotKind.RPC_ONLY && rejectRpcOnly) s.fail(Status.RESOURCE_EXHAUSTED, 'ZD_TOO_MANY_STREAMS: full');
        else registerOk()(s, reg);
      },
    }).start();
    const w = make({ maxConcurrentTasks: 2, reservedRpcTasks: 1 });
    const wait = w.waitPullRegistered();
    void w.start();
    const err = await wait.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PullRegistrationError);
    expect(err).toMatchObject({ slotKind: 'RPC_ONLY', code: Status.RESOURCE_EXHAUSTED, zdCode: 'ZD_TOO_MANY_STREAMS' });
    expect(w.readiness().isReady).toBe(false);
    expect(w.readiness().queues[1]!.lastPermanentError).toBeInstanceOf(PullRegistrationError);
    const attempts = server.streams.length;
    rejectRpcOnly = false; // the worker keeps retrying with backoff
    await server.streams[0]!.until(() => w.readiness().isReady, 'readiness after a retry');
    await expect(w.waitPullRegistered(AbortSignal.timeout(5000))).resolves.toBeUndefined();
    expect(server.streams.length).toBeGreaterThan(attempts);
    expect(w.readiness()).toMatchObject({ isReady: true, queues: [{ lastPermanentError: null }, { lastPermanentError: null }] });
  });

  // docs/readiness.md: FAILED_PRECONDITION, INVALID_ARGUMENT, UNAUTHENTICATED, PERMISSION_DENIED and
  // RESOURCE_EXHAUSTED are permanent (UNAUTHENTICATED and RESOURCE_EXHAUSTED are held above, and a
  // FAILED_PRECONDITION before any registration fails start()); anything else is retried unseen.
  it.each([
    [Status.INVALID_ARGUMENT, 'ZD_INVALID_ARGUMENT: register.tenant: is not a valid name'],
    [Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED: the credential does not cover tenant t1'],
  ])('counts a registration refused with status %p as permanent: not ready, and waitPullRegistered rejects', async (status, details) => {
    await server.stop();
    server = await new FakeWorkerServer({ onRegister: (s) => s.fail(status, details) }).start();
    const w = make({ maxConcurrentTasks: 1 });
    const wait = w.waitPullRegistered(AbortSignal.timeout(2000)).catch((e: unknown) => e);
    void w.start().catch(() => undefined);
    const err = await wait;
    expect(err).toBeInstanceOf(PullRegistrationError);
    expect(err).toMatchObject({ slotKind: 'STEP_AND_RPC', code: status, zdCode: details.split(':')[0] });
    expect(w.readiness()).toMatchObject({ isReady: false, queues: [{ hasRegisteredStream: false, lastPermanentError: err }] });
  });

  it('counts a registration refused with UNAVAILABLE as transient: retried with no permanent error, then ready', async () => {
    await server.stop();
    let refusals = 0;
    server = await new FakeWorkerServer({
      onRegister: (s, reg) => {
        if (refusals < 3) {
          refusals++;
          s.fail(Status.UNAVAILABLE, 'ZD_DRAINING: this node is draining');
        } else {
          registerOk()(s, reg);
        }
      },
    }).start();
    const w = make({ maxConcurrentTasks: 1 });
    const errors: unknown[] = [];
    const wait = w.waitPullRegistered();
    void w.start();
    const poll = setInterval(() => errors.push(w.readiness().queues[0]!.lastPermanentError), 2);
    try {
      await wait;
    } finally {
      clearInterval(poll);
    }
    expect(refusals).toBe(3);
    expect(errors.filter((e) => e !== null)).toEqual([]);
    expect(w.readiness().isReady).toBe(true);
  });

  it('stopOnPermanentStreamRejection makes start reject with PullRegistrationError', async () => {
    await server.stop();
    server = await new FakeWorkerServer({ onRegister: (s) => s.fail(Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED: bad token') }).start();
    const err = await make({ stopOnPermanentStreamRejection: true }).start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PullRegistrationError);
    expect(err).toMatchObject({ slotKind: 'STEP_AND_RPC', code: Status.UNAUTHENTICATED });
  });

  it('stop: idle streams half-close at once, busy ones after their ack; a task arriving while stopping is not run', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    const w = make({
      maxConcurrentTasks: 2,
      flowTypes: { order: { steps: { slow: async () => { runs++; await gate; return 'out'; } } } },
    });
    const running = w.start();
    const [busy, idle] = await server.waitStreams(2);
    busy!.send(step('h', 'slow'));
    await busy!.until(() => runs === 1, 'the handler');
    const stopped = w.stop();
    await idle!.until(() => idle!.halfClosed, 'idle half-close');
    expect(busy!.halfClosed).toBe(false);
    release();
    const res = await busy!.next('step_result');
    expect(Buffer.from(res.step_result!.output!).toString()).toBe('out');
    await new Promise((r) => setTimeout(r, 30));
    expect(busy!.halfClosed).toBe(false); // waits for the ack (flush)
    busy!.send(ACK('h'));
    await stopped;
    await running;
    expect(busy!.halfClosed).toBe(true);
    expect(runs).toBe(1);
    expect(server.streams).toHaveLength(2); // no reconnect while stopping
  });

  it('a task that arrives after the half-close is not run', async () => {
    let runs = 0;
    await server.stop();
    server = await new FakeWorkerServer({ endOnHalfClose: false }).start();
    const w = make({ maxConcurrentTasks: 1, stopDrainTimeout: 300, flowTypes: { order: { steps: { charge: () => void runs++ } } } });
    void w.start();
    const [s] = await server.waitStreams(1);
    const stopped = w.stop();
    await s!.until(() => s!.halfClosed, 'half-close');
    s!.send(step('late'));
    await new Promise((r) => setTimeout(r, 50));
    s!.end();
    await stopped;
    expect(runs).toBe(0);
    expect(s!.received.map((f) => f.frame)).toEqual(['register']);
  });

  it('after stopDrainTimeout aborts running handlers and resets their streams', async () => {
    let signal: AbortSignal | undefined;
    const w = make({
      maxConcurrentTasks: 1,
      stopDrainTimeout: 100,
      flowTypes: {
        order: {
          steps: {
            stuck: (ctx) => {
              signal = ctx.signal;
              return untilAborted(ctx.signal);
            },
          },
        },
      },
    });
    const running = w.start();
    const [s] = await server.waitStreams(1);
    s!.send(step('i', 'stuck'));
    await s!.until(() => signal !== undefined, 'the handler');
    const t0 = Date.now();
    await w.stop();
    await running;
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(signal!.aborted).toBe(true);
    // aborted for stop's deadline, said as such, not as a stream that merely ended
    expect((signal!.reason as Error).message).toBe('stopDrainTimeout passed');
    // grpc-js surfaces a client reset to the server's reader as a plain end, so
    // check the worker side: the handler was aborted and no result was sent.
    await s!.until(() => s!.cancelled || s!.halfClosed, 'the stream to end');
    expect(s!.received.some((f) => f.frame === 'step_result')).toBe(false);
  });

  it('after stopDrainTimeout a result already sent still gets its ack (the flush grace); a running handler does not', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let stuckSignal: AbortSignal | undefined;
    const w = make({
      maxConcurrentTasks: 2,
      stopDrainTimeout: 100,
      flowTypes: {
        order: {
          steps: {
            quick: async () => {
              await gate;
              return 'done';
            },
            stuck: (ctx) => {
              stuckSignal = ctx.signal;
              return untilAborted(ctx.signal);
            },
          },
        },
      },
    });
    const running = w.start();
    const [a, b] = await server.waitStreams(2);
    a!.send(step('q', 'quick'));
    b!.send(step('s', 'stuck'));
    await b!.until(() => stuckSignal !== undefined, 'the stuck handler');
    const t0 = Date.now();
    const stopped = w.stop();
    release();
    await a!.next('step_result'); // sent; the server holds its ack past the drain timeout
    await new Promise((r) => setTimeout(r, 300));
    expect(stuckSignal!.aborted).toBe(true); // reset at stopDrainTimeout
    // still open, waiting for its ack (a reset reaches this server as a cancel or a plain end)
    expect(a!.cancelled || a!.halfClosed).toBe(false);
    a!.send(ACK('q'));
    await stopped;
    await running;
    expect(Date.now() - t0).toBeLessThan(FLUSH_GRACE_MS);
    await a!.until(() => a!.halfClosed, 'the flushed stream to half-close');
    expect(a!.cancelled).toBe(false);
  });

  it('ends the flush grace after FLUSH_GRACE_MS: a result never acked does not hold stop() up for ever', async () => {
    // Guards the bound on the flush grace: a node that never answers must not keep the worker from stopping.
    const w = make({ maxConcurrentTasks: 1, stopDrainTimeout: 100, flowTypes: { order: { steps: { quick: async () => 'done' } } } });
    const running = w.start();
    const [a] = await server.waitStreams(1);
    a!.send(step('q', 'quick'));
    await a!.next('step_result'); // sent; its ack never comes
    const t0 = Date.now();
    await w.stop();
    await running;
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(FLUSH_GRACE_MS);
    expect(took).toBeLessThan(FLUSH_GRACE_MS + 2000);
    await a!.until(() => a!.cancelled || a!.halfClosed, 'the stream to end');
  }, FLUSH_GRACE_MS + 10_000);

  it('reconnects with backoff after the stream fails, keeping readiness', async () => {
    void make({ maxConcurrentTasks: 1 }).start();
    const [s] = await server.waitStreams(1);
    await worker!.waitPullRegistered();
    s!.fail(Status.UNAVAILABLE, 'ZD_DRAINING: this node is draining');
    const [, again] = await server.waitStreams(2);
    expect(worker!.readiness().isReady).toBe(true);
    // Refused as draining, the next stream goes over a new connection (a balancer sends it to another node).
    expect(again!.peer).not.toBe(s!.peer);
  });

  it('moves to one new connection when a node asks its streams to reconnect, not one per stream', async () => {
    // Behind a connection balancer, the new connection reaches another node; a connection per
    // Reconnect frame would dial as many times as the worker has slots, closing each in turn.
    void make({ maxConcurrentTasks: 3 }).start();
    const old = await server.waitStreams(3);
    await worker!.waitPullRegistered();
    expect(new Set(old.map((s) => s.peer)).size).toBe(1);
    // The first slot is already on the new connection when the others hear of the drain.
    old[0]!.send({ reconnect: { reason: 'node draining' } });
    await server.waitStreams(4);
    old[1]!.send({ reconnect: { reason: 'node draining' } });
    await server.waitStreams(5);
    old[2]!.send({ reconnect: { reason: 'node draining' } });
    const renewed = (await server.waitStreams(6)).slice(3);
    expect(new Set(renewed.map((s) => s.peer)).size).toBe(1);
    expect(renewed[0]!.peer).not.toBe(old[0]!.peer);
  });

  it('opens a stream that waited on its credential over the connection a Reconnect renewed meanwhile', async () => {
    // Guards: the session took the channel before awaiting the credential; another slot's
    // Reconnect closed that channel, and the stream failed "Channel has been shut down".
    let slow = false;
    void make({
      maxConcurrentTasks: 2,
      credential: async () => {
        if (slow) await new Promise((r) => setTimeout(r, 200));
        return 'tok';
      },
    }).start();
    const [a, b] = await server.waitStreams(2);
    await worker!.waitPullRegistered();
    slow = true;
    b!.fail(Status.UNAVAILABLE, 'blip'); // b's slot redials, and waits 200 ms on its credential
    await new Promise((r) => setTimeout(r, 80));
    a!.send({ reconnect: { reason: 'node draining' } });
    await server.waitStreams(4);
    expect(logger.lines.filter((l) => l.msg === 'slot stream failed; reconnecting')).toEqual([]);
  });

  it('stop before start rejects waiters and makes start reject', async () => {
    const w = make();
    const wait = w.waitPullRegistered();
    await w.stop();
    await expect(wait).rejects.toThrow(/stopped/);
    await expect(w.start()).rejects.toThrow(/stop/);
  });
});

