/**
 * Bad input on every MatchingService method gets INVALID_ARGUMENT naming the
 * field, and writes nothing to Redis (DESIGN §11.8); a worker's bad result is
 * refused by its ack (REFUSED_INVALID naming the field) and changes nothing.
 */
import { ClientError, Status, createClient } from 'nice-grpc';
import { MatchingServiceDefinition, pb, WorkerTaskServiceDefinition } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { keySnapshot } from '../helpers/key-snapshot';

const redis = useEmbeddedRedis();
let t: TestNode;
let prefix: string;

beforeAll(async () => {
  prefix = uniquePrefix('bad');
  t = await startTestNode(redis.url, prefix, { 'limits.maxPayloadBytes': 1024, 'limits.maxBatch': 5 });
});
afterAll(() => t.close());

const good: pb.IStepSpec = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' };
const spec = (over: Partial<pb.IStepSpec>) => ({ ...good, ...over });

const snapshot = () => keySnapshot(redis, prefix);

async function rejects(call: () => Promise<unknown>, field: string, code = Status.INVALID_ARGUMENT): Promise<void> {
  const before = await snapshot();
  const err = await call().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(code);
  expect((err as ClientError).details).toContain(field);
  expect(await snapshot()).toEqual(before);
}

const long = (n: number) => 'x'.repeat(n);

describe('EnqueueStep', () => {
  it.each<[string, pb.IStepSpec | null, string]>([
    ['missing step', null, 'step'],
    ['missing tenant', spec({ tenant: '' }), 'step.tenant'],
    ['tenant with a colon', spec({ tenant: 'a:b' }), 'step.tenant'],
    ['tenant with a hash tag', spec({ tenant: '{0}' }), 'step.tenant'],
    ['tenant with unicode', spec({ tenant: 'ténant' }), 'step.tenant'],
    ['flow type over maxFlowTypeLength', spec({ flow_type: long(257) }), 'step.flow_type'],
    ['step type with spaces', spec({ step_type: 'two words' }), 'step.step_type'],
    ['queue name over maxQueueLength', spec({ tenant: long(100), flow_type: long(100), step_type: long(100) }), 'step.step_type'],
    ['missing flow id', spec({ flow_id: '' }), 'step.flow_id'],
    ['flow id with a control character', spec({ flow_id: 'f\u0001' }), 'step.flow_id'],
    ['step execution id over 512 characters', spec({ step_execution_id: long(513) }), 'step.step_execution_id'],
    ['oversized input', spec({ input: Buffer.alloc(1025) }), 'step.input'],
    ['method timeout over a year', spec({ method_timeout_ms: 400 * 86_400_000 }), 'step.method_timeout_ms'],
    ['ready_at beyond any date', spec({ ready_at_ms: 9e15 }), 'step.ready_at_ms'],
    // int64 fields: a negative time comes over the wire as readily as a huge one.
    ['ready_at before the epoch', spec({ ready_at_ms: -1 }), 'step.ready_at_ms'],
    ['flow deadline before the epoch', spec({ flow_deadline_ms: -1 }), 'step.flow_deadline_ms'],
    // Each name is held to its own limit first, naming it, before the queue name it makes.
    ['tenant over maxQueueLength', spec({ tenant: long(257) }), 'step.tenant: is 257 characters long'],
    ['step type over maxQueueLength', spec({ step_type: long(257) }), 'step.step_type: is 257 characters long'],
    ['backoff coefficient that is no number', spec({ retry_policy: { backoff_coefficient: NaN } }), 'step.retry_policy.backoff_coefficient'],
    ['absurd max attempts', spec({ retry_policy: { max_attempts: 100000 } }), 'step.retry_policy.max_attempts'],
    ['backoff coefficient below 1', spec({ retry_policy: { backoff_coefficient: 0.5 } }), 'step.retry_policy.backoff_coefficient'],
    ['max interval under the initial interval', spec({ retry_policy: { initial_interval_ms: 5000, max_interval_ms: 1000 } }), 'step.retry_policy.max_interval_ms'],
    ['too many non-retryable types', spec({ retry_policy: { non_retryable: Array.from({ length: 65 }, (_, i) => `T${i}`) } }), 'step.retry_policy.non_retryable'],
    ['sticky worker id with a control character', spec({ sticky_worker_id: 'w\n' }), 'step.sticky_worker_id'],
  ])('%s', async (_name, step, field) => {
    await rejects(() => t.matching.enqueueStep({ step }), field);
  });

  // docs/security.md "Limits": a message may be limits.maxPayloadBytes plus 64 KiB (here 1 KiB + 64 KiB); a field
  // over its bound in a message the gRPC layer takes is named, a message past that is refused before any handler.
  it('names an input just under the message limit as the field over limits.maxPayloadBytes, and refuses a message past it as RESOURCE_EXHAUSTED', async () => {
    await rejects(() => t.matching.enqueueStep({ step: spec({ input: Buffer.alloc(64 * 1024) }) }), 'step.input: is 65536 bytes; the limit is 1024');
    await rejects(() => t.matching.enqueueStep({ step: spec({ input: Buffer.alloc(1024 + 64 * 1024 + 1) }) }), '', Status.RESOURCE_EXHAUSTED);
  });

  it('names the request when the bytes are not a protobuf message at all', async () => {
    const raw = createClient({
      enqueueStep: {
        ...MatchingServiceDefinition.enqueueStep,
        requestSerialize: (b: Uint8Array) => b,
      },
    }, t.channel);
    await rejects(() => raw.enqueueStep(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01])), 'request');
  });
});

describe('EnqueueSteps', () => {
  it('refuses an empty batch and one over limits.maxBatch', async () => {
    await rejects(() => t.matching.enqueueSteps({ steps: [] }), 'steps');
    await rejects(() => t.matching.enqueueSteps({ steps: Array.from({ length: 6 }, (_, i) => spec({ step_execution_id: `s${i}` })) }), 'limits.maxBatch');
  });

  it('takes a batch of exactly limits.maxBatch Steps', async () => {
    // The limit is the largest batch taken, not the first one refused (a client sizing its
    // batches by limits.maxBatch had every full batch refused).
    // Of a flow type no worker here runs: the node is shared, and its other tests take Steps.
    const r = await t.matching.enqueueSteps({ steps: Array.from({ length: 5 }, (_, i) => spec({ flow_id: 'full', flow_type: 'unrun', step_execution_id: `full${i}` })) });
    expect(r.results.map((x) => x.created)).toEqual([true, true, true, true, true]);
  });

  it('writes none of a batch when one entry is bad, and names its index', async () => {
    await rejects(
      () => t.matching.enqueueSteps({ steps: [spec({ step_execution_id: 'ok1' }), spec({ step_execution_id: 'ok2' }), spec({ tenant: 'bad tenant' })] }),
      'steps[2].tenant',
    );
  });
});

const rpc: pb.IInvokeRpcRequest = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 100 };

describe('reads and outcome methods', () => {
  const cases: [string, () => Promise<unknown>, string, Status?][] = [
    ['GetTask without an id', () => t.matching.getTask({ task_id: '' }), 'task_id'],
    ['GetTask with a malformed id', () => t.matching.getTask({ task_id: 'not-an-id' }), 'task_id'],
    ['GetTask with a partition out of range', () => t.matching.getTask({ task_id: `99-${'a'.repeat(24)}` }), 'task_id'],
    ['GetTask of an unknown task', () => t.matching.getTask({ task_id: `1-${'a'.repeat(24)}` }), 'not found', Status.NOT_FOUND],
    ['WaitOutcome with a malformed id', () => t.matching.waitOutcome({ task_id: '{0}', wait_ms: 10 }), 'task_id'],
    ['WaitOutcome waiting past limits.maxWait', () => t.matching.waitOutcome({ task_id: `1-${'a'.repeat(24)}`, wait_ms: 3_600_000 }), 'wait_ms'],
    ['ConsumeOutcomes without a group', () => t.matching.consumeOutcomes({ group: '', consumer: 'c' }), 'group'],
    ['ConsumeOutcomes with a bad consumer', () => t.matching.consumeOutcomes({ group: 'g', consumer: 'a b' }), 'consumer'],
    ['ConsumeOutcomes over the max count', () => t.matching.consumeOutcomes({ group: 'g', consumer: 'c', max_count: 5000 }), 'max_count'],
    ['ConsumeOutcomes acking a malformed id', () => t.matching.consumeOutcomes({ group: 'g', consumer: 'c', ack: ['zzz'] }), 'ack[0]'],
    ['AckOutcomes with no ids', () => t.matching.ackOutcomes({ group: 'g', outcome_ids: [] }), 'outcome_ids'],
    ['AckOutcomes with a malformed id', () => t.matching.ackOutcomes({ group: 'g', outcome_ids: ['1-1-1', 'x'] }), 'outcome_ids[1]'],
    ['CancelFlow without a tenant', () => t.matching.cancelFlow({ tenant: '', flow_id: 'f' }), 'tenant'],
    ['CancelFlow with a control character', () => t.matching.cancelFlow({ tenant: 'acme', flow_id: '\u0000' }), 'flow_id'],
    ['DescribeQueues without a tenant', () => t.matching.describeQueues({ tenant: '' }), 'tenant'],
    ['DescribeQueues with a bad flow type', () => t.matching.describeQueues({ tenant: 'acme', flow_type: 'a:b' }), 'flow_type'],
    ['InvokeRpc without a tenant', () => t.matching.invokeRpc({ ...rpc, tenant: '' }), 'tenant'],
    ['InvokeRpc without a flow id', () => t.matching.invokeRpc({ ...rpc, flow_id: '' }), 'flow_id'],
    ['InvokeRpc with a flow type over maxFlowTypeLength', () => t.matching.invokeRpc({ ...rpc, flow_type: long(257) }), 'flow_type'],
    ['InvokeRpc with an rpc name over maxQueueLength', () => t.matching.invokeRpc({ ...rpc, rpc_name: long(257) }), 'rpc_name'],
    ['InvokeRpc with an oversized input', () => t.matching.invokeRpc({ ...rpc, input: Buffer.alloc(1025) }), 'input'],
    ['InvokeRpc with a timeout over a year', () => t.matching.invokeRpc({ ...rpc, timeout_ms: 400 * 86_400_000 }), 'timeout_ms'],
    // A node timer holds 2^31-1 ms: a longer run budget fired at once, as "did not answer in time".
    ['InvokeRpc with a timeout of 30 days, past what a timer holds', () => t.matching.invokeRpc({ ...rpc, timeout_ms: 30 * 86_400_000 }), 'timeout_ms'],
    ['InvokeRpc with a sticky worker id with a control character', () => t.matching.invokeRpc({ ...rpc, sticky_worker_id: 'w\n' }), 'sticky_worker_id'],
  ];
  for (const [name, call, field, code] of cases) {
    it(name, async () => {
      await rejects(call, field, code);
    });
  }
});

describe('Register', () => {
  // An over-long name's error names the config key of its limit too: what an operator would raise.
  it.each<[string, Partial<pb.IRegister>, string, string]>([
    ['tenant over maxQueueLength', { tenant: long(257) }, 'register.tenant', '(matching.maxQueueLength)'],
    ['app worker id over maxQueueLength', { app_worker_id: long(257) }, 'register.app_worker_id', '(matching.maxQueueLength)'],
    ['app worker id with a space', { app_worker_id: 'w 1' }, 'register.app_worker_id', ''],
    ['flow type over maxFlowTypeLength', { flow_types: ['order', long(257)] }, 'register.flow_types[1]', '(matching.maxFlowTypeLength)'],
  ])('%s', async (_name, over, field, limitKey) => {
    const before = await snapshot();
    const slot = openSlot(t.worker, registerFrame(over));
    const err = (await slot.ended) as (Error & { code?: Status; details?: string }) | null;
    expect(err?.code).toBe(Status.INVALID_ARGUMENT);
    expect(err?.details).toContain(field);
    expect(err?.details).toContain(limitKey);
    expect(t.node.gateway.streamCount).toBe(0);
    expect(await snapshot()).toEqual(before);
  });
});

describe('a first frame that is no Register', () => {
  // docs/errors.md: ZD_NOT_REGISTERED, FAILED_PRECONDITION. A worker client that retries only on other statuses must not loop on it.
  it.each<[string, pb.IWorkerFrame]>([
    ['a Pong', { pong: { sent_at_ms: 1 } }],
    ['a StepResult', { step_result: { task_token: 'x', output: Buffer.from('out') } }],
    ['an empty frame', {}],
  ])('ends the stream with FAILED_PRECONDITION ZD_NOT_REGISTERED for %s, registering nothing', async (_name, first) => {
    const before = await snapshot();
    const slot = openSlot(t.worker, first);
    const err = (await slot.ended) as (Error & { code?: Status; details?: string }) | null;
    expect(err?.code).toBe(Status.FAILED_PRECONDITION);
    expect(err?.details).toBe('ZD_NOT_REGISTERED: the first frame of a stream must be Register');
    expect(t.node.gateway.streamCount).toBe(0);
    expect(await snapshot()).toEqual(before);
  });
});

describe('Register at its limits', () => {
  it('takes an sdk_name and sdk_version of exactly 64 characters, the longest worker.proto allows', async () => {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: 'sdk-64', sdk_name: 'n'.repeat(64), sdk_version: 'v'.repeat(64) }));
    expect((await slot.nextOf('registered')).registered).toBeTruthy();
    slot.halfClose();
    expect(await slot.ended).toBeNull();
  });
});

describe('a second Register on a registered stream', () => {
  it.each<[string, boolean]>([['an idle slot', false], ['a slot holding a Step', true]])('ends the stream of %s with INVALID_ARGUMENT naming register', async (_name, holding) => {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: `again-${holding}` }));
    await slot.nextOf('registered');
    let taskId = '';
    if (holding) {
      taskId = (await t.matching.enqueueStep({ step: spec({ flow_id: 'again', step_execution_id: 'a1' }) })).task_id!;
      await slot.nextOf('step_task');
    }
    slot.send(registerFrame({ app_worker_id: 'someone-else', flow_types: ['other'] }));
    const err = (await slot.ended) as (Error & { code?: Status; details?: string }) | null;
    expect(err?.code).toBe(Status.INVALID_ARGUMENT);
    expect(err?.details).toContain('register');
    expect(t.node.gateway.streamCount).toBe(0);
    if (holding) {
      // As a reset would: the attempt it held is spent, and the Step runs again as attempt 2.
      const task = (await t.matching.getTask({ task_id: taskId })).task!;
      expect(task.attempt).toBe(2);
      await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'again' });
    }
  });
});

describe('a WorkerFrame that does not decode', () => {
  /** A Connect call that sends these bytes as its frames, then waits; what came back, and how it ended. */
  async function connectRaw(frames: (() => Promise<Uint8Array>)[]) {
    const def = { connect: { ...WorkerTaskServiceDefinition.connect, requestSerialize: (b: Uint8Array) => b } };
    const raw = createClient(def as never, t.channel) as { connect(req: AsyncIterable<Uint8Array>): AsyncIterable<pb.ServerFrame> };
    const got: pb.ServerFrame[] = [];
    const err = await (async () => {
      for await (const f of raw.connect((async function* () {
        for (const frame of frames) yield await frame();
        await new Promise((r) => setTimeout(r, 3000));
      })())) got.push(f);
    })().then(() => undefined, (e: unknown) => e as ClientError);
    return { got, err };
  }
  const garbage = Uint8Array.from([0x0a, 0xff, 0xff, 0xff]); // field 1 as a length-delimited run past the end

  it('ends the stream with INVALID_ARGUMENT naming the frame when it comes first, not as a missing Register', async () => {
    const { got, err } = await connectRaw([async () => garbage]);
    expect(got).toEqual([]);
    expect(err).toMatchObject({ code: Status.INVALID_ARGUMENT });
    expect(err!.details).toMatch(/^ZD_INVALID_ARGUMENT: frame: is not a valid WorkerFrame protobuf message/);
  });

  it('ends the stream when a later frame does not decode, instead of ignoring it with the attempt left running', async () => {
    const enqueued = { taskId: '' };
    const { got, err } = await connectRaw([
      async () => pb.WorkerFrame.encode(pb.WorkerFrame.fromObject(registerFrame({ app_worker_id: 'garbled' }))).finish(),
      async () => {
        await new Promise((r) => setTimeout(r, 200));
        enqueued.taskId = (await t.matching.enqueueStep({ step: spec({ flow_id: 'garbled', step_execution_id: 'g1' }) })).task_id!;
        await new Promise((r) => setTimeout(r, 300));
        return garbage; // a StepResult mangled on the way
      },
    ]);
    expect(got.map((f) => f.frame).filter((f) => f !== 'ping')).toEqual(['registered', 'step_task']);
    expect(err).toMatchObject({ code: Status.INVALID_ARGUMENT });
    expect(err!.details).toContain('frame: is not a valid WorkerFrame protobuf message');
    // As a reset would: the attempt it held is spent, and the Step runs again as attempt 2.
    expect((await t.matching.getTask({ task_id: enqueued.taskId })).task).toMatchObject({ attempt: 2 });
    await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'garbled' });
  });
});

describe('StepResult and RpcResult', () => {
  let seq = 0;
  /** A running Step on a slot of its own; its hash as Redis holds it. */
  async function running() {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: `res${++seq}` }));
    await slot.nextOf('registered');
    const r = await t.matching.enqueueStep({ step: spec({ flow_id: `res-${seq}`, step_execution_id: 'x' }) });
    const task = (await slot.nextOf('step_task')).step_task!;
    return { slot, r, task };
  }

  it.each<[string, (token: string) => pb.IStepResult, string]>([
    ['neither output nor failure', (token) => ({ task_token: token }), 'step_result.result'],
    ['a failure message over 4096 characters', (token) => ({ task_token: token, failure: { message: long(4097) } }), 'step_result.failure.message'],
    ['a failure type over 256 characters', (token) => ({ task_token: token, failure: { message: 'm', type: long(257) } }), 'step_result.failure.type'],
    ['a retry hint over 365 days', (token) => ({ task_token: token, failure: { message: 'm', retry_after_ms: 365 * 86_400_000 + 1 } }), 'step_result.failure.retry_after_ms'],
  ])('refuses a StepResult with %s, and the attempt runs on', async (_name, result, field) => {
    const { slot, r, task } = await running();
    const before = await snapshot();
    slot.send({ step_result: result(task.task_token!) });
    const ack = (await slot.nextOf('result_ack')).result_ack!;
    expect(ack.verdict).toBe(pb.ResultVerdict.REFUSED_INVALID);
    expect(ack.error).toContain(field);
    expect(await snapshot()).toEqual(before);
    expect((await t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });
    // Still the slot's: a good result is accepted for the same attempt.
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
    slot.reset();
  });

  it('refuses an output over limits.maxPayloadBytes and spends the attempt, saying a retry is scheduled', async () => {
    const { slot, r, task } = await running();
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.alloc(1025) } });
    const ack = (await slot.nextOf('result_ack')).result_ack!;
    expect(ack).toMatchObject({ verdict: pb.ResultVerdict.REFUSED_INVALID, retry_scheduled: true });
    expect(ack.error).toContain('step_result.output');
    expect((await t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ attempt: 2 });
    slot.reset();
  });

  it('answers an output over limits.maxPayloadBytes for an attempt already cancelled as cancelled, not as a failure', async () => {
    const { slot, r, task } = await running();
    await t.matching.cancelFlow({ tenant: 'acme', flow_id: `res-${seq}` });
    expect((await slot.nextOf('cancel')).cancel!.task_token).toBe(task.task_token);
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.alloc(1025) } });
    const ack = (await slot.nextOf('result_ack')).result_ack!;
    expect(ack).toMatchObject({ verdict: pb.ResultVerdict.REFUSED_CANCELLED, retry_scheduled: false });
    expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.CANCELLED, attempt: 1 });
    slot.reset();
  });

  it('answers a Decline naming no attempt of the stream as stale, and the attempt it holds runs on', async () => {
    const { slot, r, task } = await running();
    slot.send({ decline: { task_token: 'bogus', reason: pb.DeclineReason.UNKNOWN_TYPE } });
    const ack = (await slot.nextOf('result_ack')).result_ack!;
    expect(ack).toMatchObject({ task_token: 'bogus', verdict: pb.ResultVerdict.REFUSED_STALE });
    expect(ack.error).toContain('decline.task_token');
    expect((await t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    slot.reset();
  });

  it('refuses an RpcResult with neither output nor failure, and the caller still gets the good one', async () => {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: 'rpc-res' }));
    await slot.nextOf('registered');
    const call = t.matching.invokeRpc({ ...rpc, timeout_ms: 3000 });
    const task = (await slot.nextOf('rpc_task')).rpc_task!;
    slot.send({ rpc_result: { task_token: task.task_token } });
    const ack = (await slot.nextOf('result_ack')).result_ack!;
    expect(ack.verdict).toBe(pb.ResultVerdict.REFUSED_INVALID);
    expect(ack.error).toContain('rpc_result.result');
    slot.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('fine') } });
    expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    expect(Buffer.from((await call).output!).toString()).toBe('fine');
    slot.reset();
  });
});

it('still works after all that: a good enqueue is accepted', async () => {
  const r = await t.matching.enqueueStep({ step: good });
  expect(r.created).toBe(true);
});
