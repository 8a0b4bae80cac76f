/** The Client against a hand-written MatchingService on a real nice-grpc server. */
import { createServer, ServerError, Status, type CallContext, type Server } from 'nice-grpc';
import { MatchingServiceDefinition, pb, PROTOCOL_VERSION } from '../../../src/wire';
import { Client, MAX_TIMER_MS, RpcFailedError, ZdDeadlineExceededError, ZdInvalidArgumentError, ZdUnavailableError } from '../../../src';

const never = () => new Promise<never>(() => {});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unimplemented = async (): Promise<never> => { throw new ServerError(Status.UNIMPLEMENTED, 'not in this fake'); };

/** What a fake answers for one Step: a single one names its field `step`, as the unary EnqueueStep does. */
function resultOf(s: pb.IStepSpec, created: boolean): pb.IEnqueueStepResponse {
  return { task_id: `id-${s.step_execution_id}`, created, partition: created ? 5 : 1 };
}

/** The timeout_ms of the last InvokeRpc the fakes saw. */
let rpcTimeoutMs: number | undefined;

/** The methods but the enqueues, which each fake brings. */
const rest = {
  getTask: unimplemented,
  async waitOutcome(req: pb.WaitOutcomeRequest) {
    if (req.task_id === 'slow') return never();
    if (req.task_id === 'none') return {};
    if (req.task_id === 'waits') {
      // A long poll that ends without an outcome once its whole wait is over.
      await sleep(req.wait_ms);
      return {};
    }
    if (req.task_id === 'later') await sleep(100);
    return { outcome: { task_id: req.task_id, status: pb.OutcomeStatus.COMPLETED, output: Buffer.from('ok') } };
  },
  consumeOutcomes: unimplemented,
  async ackOutcomes(req: pb.AckOutcomesRequest) {
    return { acked: req.outcome_ids.length };
  },
  async cancelFlow() {
    return { cancelled_queued: 2, cancelled_running: 1 };
  },
  describeQueues: unimplemented,
  describeCluster: unimplemented,
  listOutcomeGroups: unimplemented,
  dropOutcomeGroup: unimplemented,
  async invokeRpc(req: pb.InvokeRpcRequest) {
    rpcTimeoutMs = Number(req.timeout_ms);
    if (req.rpc_name === 'busy') throw new ServerError(Status.UNAVAILABLE, 'ZD_RPC_UNAVAILABLE: no worker took rpc busy within 10000 ms');
    if (req.rpc_name === 'later') await sleep(100);
    if (req.rpc_name === 'unserved') {
      // As a node does: it looks for a worker for the whole timeout it was sent, then gives up.
      await sleep(Number(req.timeout_ms));
      throw new ServerError(Status.UNAVAILABLE, `ZD_RPC_UNAVAILABLE: no worker took rpc unserved within ${Number(req.timeout_ms)} ms`);
    }
    if (req.rpc_name === 'bad') return { failure: { message: 'nope', type: 'Bad', non_retryable: true }, app_worker_id: 'w1' };
    return { output: Buffer.concat([Buffer.from('echo:'), req.input]), app_worker_id: 'w1' };
  },
};

describe('Client', () => {
  let server: Server;
  let client: Client;
  let address: string;
  const seen: { req?: pb.EnqueueStreamRequest; auth?: string; version?: string; streams: number; unary: number } = { streams: 0, unary: 0 };

  beforeAll(async () => {
    server = createServer();
    server.add(MatchingServiceDefinition, {
      enqueueStep: unimplemented,
      // As a draining node does: what its streams no longer read, it still enqueues unary.
      async enqueueSteps(req: pb.EnqueueStepsRequest) {
        seen.unary++;
        return { results: req.steps.map((s) => resultOf(s, req.steps.length === 1)) };
      },
      // Answers each request by its id; stepExecutionId "slow" never, "drop" ends the stream unread (a drain).
      async *enqueueStream(reqs: AsyncIterable<pb.EnqueueStreamRequest>, ctx: CallContext) {
        seen.streams++;
        seen.auth = ctx.metadata.get('authorization');
        seen.version = ctx.metadata.get('zd-protocol-version');
        for await (const req of reqs) {
          seen.req = req;
          const first = req.steps[0]!;
          if (first.step_execution_id === 'slow') continue;
          if (first.step_execution_id === 'drop') return;
          if (first.step_execution_id === 'fail') throw new ServerError(Status.UNAVAILABLE, 'ZD_DRAINING: this node is draining');
          if (!first.tenant) {
            yield { request_id: req.request_id, error: { code: Status.INVALID_ARGUMENT, message: 'ZD_INVALID_ARGUMENT: step.tenant: must not be empty' } };
            continue;
          }
          yield { request_id: req.request_id, results: req.steps.map((s) => resultOf(s, req.steps.length === 1)) };
        }
      },
      ...rest,
    });
    const port = await server.listen('127.0.0.1:0');
    address = `127.0.0.1:${port}`;
    client = new Client({ address, credential: () => 'secret', defaultTimeoutMs: 2000 });
  });

  afterAll(async () => {
    client.close();
    client.close(); // idempotent
    await server.shutdown();
  });

  it('enqueues a Step with mapped fields and credentials, over one stream', async () => {
    const res = await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e1', input: 'x' });
    expect(res).toEqual({ taskId: 'id-e1', created: true, partition: 5 });
    expect(seen.auth).toBe('Bearer secret');
    expect(seen.version).toBe(String(PROTOCOL_VERSION)); // on every call: the server checks it
    expect(seen.req!.steps[0]!.flow_id).toBe('f');
    const two = [{ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e2' }, { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e3' }];
    expect(await client.enqueueSteps(two)).toEqual([{ taskId: 'id-e2', created: false, partition: 1 }, { taskId: 'id-e3', created: false, partition: 1 }]);
    // many at once, each answered by its own request id
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: `m${i}` })));
    expect(many.map((r) => r.taskId)).toEqual(Array.from({ length: 20 }, (_, i) => `id-m${i}`));
    expect(seen.streams).toBe(1);
  });

  it('times out an enqueue its stream does not answer, and goes on with the next', async () => {
    const err = await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'slow' }, { timeoutMs: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(ZdDeadlineExceededError);
    expect((await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'after' })).taskId).toBe('id-after');
  });

  it('keeps each enqueue’s own deadline, a shorter one after a longer included, and nothing keeping the process up once none is in flight', async () => {
    const slow = (timeoutMs: number) => client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'slow' }, { timeoutMs })
      .then(() => 'answered', (e: unknown) => (e instanceof ZdDeadlineExceededError ? `deadline ${Date.now() - t0}` : String(e)));
    const lane = (client as unknown as { lane: { deadlineTimer?: NodeJS.Timeout } }).lane;
    const t0 = Date.now();
    const long = slow(1500);
    await new Promise((r) => setTimeout(r, 20));
    expect(lane.deadlineTimer?.hasRef()).toBe(true); // an enqueue in flight keeps it
    const short = await slow(150);
    // The lane's timer was armed for the first deadline; the second one, earlier, moved it.
    expect(short).toMatch(/^deadline /);
    expect(Number(short.split(' ')[1])).toBeLessThan(1200);
    expect(Number((await long).split(' ')[1])).toBeGreaterThanOrEqual(1450);
    expect((await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'then' })).taskId).toBe('id-then');
    // Nothing in flight: nothing keeps the process up.
    expect(lane.deadlineTimer?.hasRef() ?? false).toBe(false);
  });

  it('holds the process up again for an enqueue whose deadline is later than the armed one', async () => {
    const lane = (client as unknown as { lane: { deadlineTimer?: NodeJS.Timeout } }).lane;
    // Answered at once: its deadline stays armed, unreferenced.
    await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'quick' }, { timeoutMs: 300 });
    expect(lane.deadlineTimer?.hasRef()).toBe(false);
    const pending = client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'slow' }, { timeoutMs: 600 }).catch((e) => e);
    await new Promise((r) => setImmediate(r)); // the credential resolves before the lane sees the call
    expect(lane.deadlineTimer?.hasRef()).toBe(true);
    expect(await pending).toBeInstanceOf(ZdDeadlineExceededError);
  });

  it('gives up an enqueue when its caller’s signal aborts, with the signal’s reason', async () => {
    const ac = new AbortController();
    const pending = client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'slow' }, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('caller gave up')), 50);
    await expect(pending).rejects.toThrow('caller gave up');
    const already = new AbortController();
    already.abort(new Error('aborted before'));
    await expect(client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'x' }, { signal: already.signal }))
      .rejects.toThrow('aborted before');
    expect((await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'next2' })).taskId).toBe('id-next2');
  });

  it('sends what a stream that ended with OK (a drain) did not answer as a unary call, and so the next enqueues for a moment', async () => {
    // A Client of its own: this one's lane goes unary for a while.
    const c = new Client({ address, credential: () => 'secret', defaultTimeoutMs: 2000 });
    try {
      const before = { streams: seen.streams, unary: seen.unary };
      const res = await c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'drop' }, { timeoutMs: 1000 });
      expect(res.taskId).toBe('id-drop');
      expect((await c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'next' })).taskId).toBe('id-next');
      // One stream (the drained one), no new stream to the draining node; both enqueues unary.
      expect([seen.streams - before.streams, seen.unary - before.unary]).toEqual([1, 2]);
    } finally {
      c.close();
    }
  });

  it('fails the enqueues of a stream that fails with its status', async () => {
    const err = await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'fail' }).catch((e) => e);
    expect(err).toBeInstanceOf(ZdUnavailableError);
    expect(err).toMatchObject({ code: 'ZD_DRAINING' });
    expect((await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'again' })).taskId).toBe('id-again');
  });

  it('opens a new stream when the credential resolves to another token', async () => {
    let token = 'one';
    const c = new Client({ address, credential: () => token });
    try {
      const before = seen.streams;
      await c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'r1' });
      expect(seen.auth).toBe('Bearer one');
      token = 'two';
      await c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'r2' });
      expect(seen.auth).toBe('Bearer two');
      expect(seen.streams - before).toBe(2);
    } finally {
      c.close();
    }
  });

  it('maps server errors to named errors with the ZD code', async () => {
    const err = await client.enqueueStep({ tenant: '', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e' }).catch((e) => e);
    expect(err).toBeInstanceOf(ZdInvalidArgumentError);
    expect(err).toMatchObject({ code: 'ZD_INVALID_ARGUMENT', status: Status.INVALID_ARGUMENT, message: 'ZD_INVALID_ARGUMENT: step.tenant: must not be empty' });
    await expect(client.invokeRpc({ tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'busy' })).rejects.toBeInstanceOf(ZdUnavailableError);
  });

  it('waits for outcomes, returning null when none', async () => {
    const o = await client.waitOutcome('t1', { waitMs: 10 });
    expect(o).toMatchObject({ taskId: 't1', status: 'COMPLETED' });
    expect(o!.output.toString()).toBe('ok');
    expect(await client.waitOutcome('none')).toBeNull();
  });

  it('gives a long poll without a timeout of its own its whole wait on top of the default timeout', async () => {
    const c = new Client({ address, defaultTimeoutMs: 200 });
    try {
      expect(await c.waitOutcome('waits', { waitMs: 600 })).toBeNull();
    } finally {
      c.close();
    }
  });

  it('times out a call that sets a timeout', async () => {
    const err = await client.waitOutcome('slow', { waitMs: 0 }, { timeoutMs: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(ZdDeadlineExceededError);
  });

  it('invokes RPCs; a handler failure is an RpcFailedError', async () => {
    const res = await client.invokeRpc({ tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'get', input: 'hi', timeoutMs: 1000 });
    expect(res.output.toString()).toBe('echo:hi');
    expect(res.appWorkerId).toBe('w1');
    const err = await client.invokeRpc({ tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'bad' }).catch((e) => e);
    expect(err).toBeInstanceOf(RpcFailedError);
    expect(err).toMatchObject({ message: 'nope', type: 'Bad', nonRetryable: true, appWorkerId: 'w1' });
  });

  it('surfaces the node\'s own answer to an RPC no worker took within its timeout, not a client deadline', async () => {
    // The server's search for a worker ends at the timeout sent; the call's own deadline
    // is later, so the caller learns it may retry (UNAVAILABLE), not that the call hung.
    const err = await client.invokeRpc({ tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'unserved', timeoutMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(ZdUnavailableError);
    expect(err).toMatchObject({ code: 'ZD_RPC_UNAVAILABLE', status: Status.UNAVAILABLE });
  });

  it('sends invokeRpc\'s effective timeout to the server: the smaller one given, else the default', async () => {
    const rpc = { tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'get' };
    await client.invokeRpc({ ...rpc, timeoutMs: 5000 }, { timeoutMs: 700 });
    expect(rpcTimeoutMs).toBe(700);
    await client.invokeRpc({ ...rpc, timeoutMs: 600 }, { timeoutMs: 5000 });
    expect(rpcTimeoutMs).toBe(600);
    await client.invokeRpc(rpc);
    expect(rpcTimeoutMs).toBe(2000);
  });

  it('close() ends the calls in flight', async () => {
    const c = new Client({ address, defaultTimeoutMs: 10_000 });
    const pending = c.waitOutcome('slow', { waitMs: 5000 }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 100));
    const closedAt = Date.now();
    c.close();
    const err = await pending;
    expect(Date.now() - closedAt).toBeLessThan(2000);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('waitOutcome: the client is closed');
    await expect(c.getTask('x')).rejects.toThrow('getTask: the client is closed');
    await expect(c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'after-close' }))
      .rejects.toThrow('enqueueStep: the client is closed');
  });

  // A Node.js timer holds at most 2^31 - 1 ms (MAX_TIMER_MS); a longer one, Infinity too, fires after 1 ms.
  describe('timeouts a timer cannot hold', () => {
    const step = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'big' };
    const rpc = { tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'later' };

    it.each([Infinity, 2 ** 31, 40 * 86_400_000, 0, -1, NaN])('refuses a defaultTimeoutMs of %p, naming it', (defaultTimeoutMs) => {
      expect(() => new Client({ address, defaultTimeoutMs })).toThrow(/defaultTimeoutMs/);
    });

    it('waits out a long poll with a defaultTimeoutMs of MAX_TIMER_MS (its wait added to it is still a timer it holds)', async () => {
      const c = new Client({ address, defaultTimeoutMs: MAX_TIMER_MS });
      try {
        // Was: MAX_TIMER_MS + waitMs armed as is, so the call timed out after 1 ms.
        expect(await c.waitOutcome('later', { waitMs: 10_000 })).toMatchObject({ taskId: 'later', status: 'COMPLETED' });
        expect(await c.waitOutcome('later')).toMatchObject({ taskId: 'later' });
        expect((await c.invokeRpc({ ...rpc, input: 'a' })).output.toString()).toBe('echo:a');
        expect(rpcTimeoutMs).toBe(MAX_TIMER_MS);
        expect((await c.enqueueStep(step)).taskId).toBe('id-big');
      } finally {
        c.close();
      }
    });

    it('waits out calls whose own timeout is MAX_TIMER_MS', async () => {
      expect(await client.waitOutcome('later', { waitMs: 10 }, { timeoutMs: MAX_TIMER_MS })).toMatchObject({ taskId: 'later' });
      // invokeRpc's deadline is its budget plus a margin: was past what a timer holds.
      expect((await client.invokeRpc({ ...rpc, input: 'b', timeoutMs: MAX_TIMER_MS })).output.toString()).toBe('echo:b');
      expect(rpcTimeoutMs).toBe(MAX_TIMER_MS);
      expect((await client.invokeRpc({ ...rpc, input: 'c' }, { timeoutMs: MAX_TIMER_MS })).output.toString()).toBe('echo:c');
      expect((await client.enqueueStep(step, { timeoutMs: MAX_TIMER_MS })).taskId).toBe('id-big');
    });

    it.each([Infinity, 2 ** 31, -1, NaN])('refuses a per-call timeoutMs of %p, naming the method and option', async (timeoutMs) => {
      await expect(client.waitOutcome('later', {}, { timeoutMs })).rejects.toThrow(/waitOutcome option timeoutMs/);
      await expect(client.ackOutcomes('g', ['1-0'], { timeoutMs })).rejects.toThrow(/ackOutcomes option timeoutMs/);
      await expect(client.enqueueStep(step, { timeoutMs })).rejects.toThrow(/enqueueStep option timeoutMs/);
      await expect(client.enqueueSteps([step], { timeoutMs })).rejects.toThrow(/enqueueSteps option timeoutMs/);
      await expect(client.invokeRpc(rpc, { timeoutMs })).rejects.toThrow(/invokeRpc option timeoutMs/);
      await expect(client.invokeRpc({ ...rpc, timeoutMs })).rejects.toThrow(/invokeRpc option request\.timeoutMs/);
      const err = await client.getTask('x', { timeoutMs }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
    });

    it('refuses a per-call timeoutMs of 0 (it timed the call out at once), but for invokeRpc, where 0 is unset', async () => {
      await expect(client.waitOutcome('later', {}, { timeoutMs: 0 })).rejects.toThrow(/waitOutcome option timeoutMs/);
      await expect(client.enqueueStep(step, { timeoutMs: 0 })).rejects.toThrow(/enqueueStep option timeoutMs/);
      expect((await client.invokeRpc({ ...rpc, input: 'd', timeoutMs: 0 }, { timeoutMs: 0 })).output.toString()).toBe('echo:d');
      expect(rpcTimeoutMs).toBe(2000);
    });

    it.each([Infinity, 2 ** 31, -1, NaN])('refuses a waitMs of %p, naming it', async (waitMs) => {
      await expect(client.waitOutcome('later', { waitMs })).rejects.toThrow(/waitOutcome option waitMs/);
      await expect(client.consumeOutcomes({ group: 'g', consumer: 'c', waitMs })).rejects.toThrow(/consumeOutcomes option waitMs/);
    });

    // protobufjs cut a fraction to whole ms: refused, naming the option.
    it.each([1.5, 0.5])('refuses a duration of %p ms, not a whole number', async (ms) => {
      expect(() => new Client({ address, defaultTimeoutMs: ms })).toThrow(/^Client option defaultTimeoutMs: must be a whole number of ms/);
      await expect(client.waitOutcome('later', { waitMs: ms })).rejects.toThrow(/^waitOutcome option waitMs: must be a whole number of ms/);
      await expect(client.consumeOutcomes({ group: 'g', consumer: 'c', waitMs: ms })).rejects.toThrow(/consumeOutcomes option waitMs/);
      await expect(client.getTask('x', { timeoutMs: ms })).rejects.toThrow(/^getTask option timeoutMs: must be a whole number of ms/);
      await expect(client.enqueueStep(step, { timeoutMs: ms })).rejects.toThrow(/^enqueueStep option timeoutMs: must be a whole number of ms/);
      await expect(client.invokeRpc({ ...rpc, timeoutMs: ms })).rejects.toThrow(/^invokeRpc option request\.timeoutMs: must be a whole number of ms/);
      await expect(client.invokeRpc(rpc, { timeoutMs: ms })).rejects.toThrow(/^invokeRpc option timeoutMs: must be a whole number of ms/);
    });

    it('never arms the enqueue lane’s timer past what a timer holds', () => {
      const realSetTimeout = global.setTimeout;
      const delays: number[] = [];
      const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
        delays.push(ms ?? 0);
        return realSetTimeout(fn, 0).unref();
      }) as typeof setTimeout);
      try {
        const lane = (client as unknown as { lane: { armDeadlineTimer(at: number): void; clearDeadlineTimer(): void } }).lane;
        lane.armDeadlineTimer(Date.now() + 10 * MAX_TIMER_MS);
        lane.clearDeadlineTimer();
      } finally {
        spy.mockRestore();
      }
      expect(delays).toHaveLength(1);
      expect(delays[0]).toBeLessThanOrEqual(MAX_TIMER_MS);
    });
  });

  it('acks and cancels', async () => {
    expect(await client.ackOutcomes('g', ['1-0', '2-0'])).toBe(2);
    expect(await client.cancelFlow('t', 'f', 'user')).toEqual({ cancelledQueued: 2, cancelledRunning: 1 });
  });
});

describe('Client against a server without EnqueueStream', () => {
  let server: Server;
  let client: Client;
  const calls = { stream: 0, step: 0, steps: 0 };

  beforeAll(async () => {
    server = createServer();
    server.add(MatchingServiceDefinition, {
      async enqueueStep() {
        calls.step++;
        throw new ServerError(Status.INTERNAL, 'the Client sends EnqueueSteps');
      },
      async enqueueSteps(req: pb.EnqueueStepsRequest) {
        calls.steps++;
        if (req.steps[0]?.step_execution_id === 'slow') return never();
        return { results: req.steps.map((s) => resultOf(s, true)) };
      },
      // eslint-disable-next-line require-yield
      async *enqueueStream(): AsyncIterable<pb.IEnqueueStreamResponse> {
        calls.stream++;
        throw new ServerError(Status.UNIMPLEMENTED, 'Method not found');
      },
      ...rest,
    });
    client = new Client({ address: `127.0.0.1:${await server.listen('127.0.0.1:0')}`, defaultTimeoutMs: 2000 });
  });

  afterAll(async () => {
    client.close();
    await server.shutdown();
  });

  it('falls back to unary calls, once for good', async () => {
    const rs = await Promise.all([
      client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'a' }),
      client.enqueueSteps([{ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'b' }]),
    ]);
    expect(rs).toEqual([{ taskId: 'id-a', created: true, partition: 5 }, [{ taskId: 'id-b', created: true, partition: 5 }]]);
    await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'c' });
    expect(calls).toEqual({ stream: 1, step: 0, steps: 3 });
  });

  it('times out a unary enqueue with the lane’s deadline', async () => {
    const err = await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'slow' }, { timeoutMs: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(ZdDeadlineExceededError);
    expect(err.message).toBe('enqueueStep did not finish within 100 ms');
  });
});
