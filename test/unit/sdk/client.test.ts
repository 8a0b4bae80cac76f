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
/** The last request of each method below that the fakes saw, by method. */
const lastReq: Record<string, unknown> = {};

/** The methods but the enqueues, which each fake brings. */
const rest = {
  async getTask(req: pb.GetTaskRequest) {
    lastReq.getTask = req;
    if (req.task_id === 'empty') return {};
    return {
      task: {
        task_id: req.task_id, partition: 3, state: pb.TaskState.RUNNING, tenant: 't', flow_id: 'f', flow_type: 'o', step_type: 's',
        step_execution_id: 'e', attempt: 2, ready_at_ms: 1000, enqueued_at_ms: 900, app_worker_id: 'w1', node_id: 'n1',
        last_error: { message: 'm', type: 'T', non_retryable: true, retry_after_ms: 50 }, input: Buffer.from('in'), flow_deadline_ms: 5000, max_attempts: 4,
      },
    };
  },
  async waitOutcome(req: pb.WaitOutcomeRequest) {
    lastReq.waitOutcome = req;
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
  async consumeOutcomes(req: pb.ConsumeOutcomesRequest) {
    lastReq.consumeOutcomes = req;
    if (req.group === 'slow') await sleep(req.wait_ms);
    return { outcomes: [{ outcome_id: '1-0', task_id: 'c1', status: pb.OutcomeStatus.FAILED, attempt: 3, error: { message: 'boom', type: 'X' } }] };
  },
  async ackOutcomes(req: pb.AckOutcomesRequest) {
    lastReq.ackOutcomes = req;
    return { acked: req.outcome_ids.length };
  },
  async cancelFlow(req: pb.CancelFlowRequest) {
    lastReq.cancelFlow = req;
    return { cancelled_queued: 2, cancelled_running: 1 };
  },
  async describeQueues(req: pb.DescribeQueuesRequest) {
    lastReq.describeQueues = req;
    return { queues: [{ tenant: req.tenant, flow_type: 'o', step_type: 's', ready: 7, delayed: 3, oldest_ready_at_ms: 2000, running: 5 }] };
  },
  async describeCluster() {
    return {
      partitions: 16,
      nodes: [{ node_id: 'n1', address: 'a:1', last_heartbeat_ms: 3000, owned_partitions: 9, live: true }],
      partition_owners: [{ partition: 4, owner: 'n1', epoch: 12 }],
    };
  },
  async listOutcomeGroups() {
    return {
      groups: [
        { tenant: 't', group: 'g1', lag: 4, pending: 2, consumers: 3, idle_ms: 60, partitions: 8, registered: true },
        { tenant: 't', group: 'g2', lag: -1, pending: 0, consumers: 0, idle_ms: -1, partitions: 1, registered: false },
      ],
    };
  },
  async dropOutcomeGroup(req: pb.DropOutcomeGroupRequest) {
    lastReq.dropOutcomeGroup = req;
    return { partitions: 6, pending: 11 };
  },
  async invokeRpc(req: pb.InvokeRpcRequest) {
    rpcTimeoutMs = Number(req.timeout_ms);
    if (req.rpc_name === 'busy') throw new ServerError(Status.UNAVAILABLE, 'ZD_RPC_UNAVAILABLE: no worker took rpc busy within 10000 ms');
    if (req.rpc_name === 'later') await sleep(100);
    if (req.rpc_name === 'unserved') {
      // As a node does: it looks for a worker for the whole timeout it was sent, then gives up.
      await sleep(Number(req.timeout_ms));
      throw new ServerError(Status.UNAVAILABLE, `ZD_RPC_UNAVAILABLE: no worker took rpc unserved within ${Number(req.timeout_ms)} ms`);
    }
    if (req.rpc_name === 'bad') return { failure: { message: 'nope', type: 'Bad', non_retryable: true, retry_after_ms: 250 }, app_worker_id: 'w1' };
    if (req.rpc_name === 'mute') return { failure: { type: 'Bad' }, app_worker_id: 'w2' };
    return { output: Buffer.concat([Buffer.from('echo:'), req.input]), app_worker_id: 'w1' };
  },
};

describe('Client', () => {
  let server: Server;
  let client: Client;
  let address: string;
  const seen: { req?: pb.EnqueueStreamRequest; auth?: string; version?: string; streams: number; unary: number; unaryIds: string[]; ended: number } = {
    streams: 0, unary: 0, unaryIds: [], ended: 0,
  };

  beforeAll(async () => {
    server = createServer();
    server.add(MatchingServiceDefinition, {
      enqueueStep: unimplemented,
      // As a draining node does: what its streams no longer read, it still enqueues unary.
      async enqueueSteps(req: pb.EnqueueStepsRequest) {
        seen.unary++;
        seen.unaryIds.push(...req.steps.map((s) => s.step_execution_id ?? ''));
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
          if (first.step_execution_id === 'toolarge') throw new ServerError(Status.RESOURCE_EXHAUSTED, 'Received message larger than max');
          if (first.step_execution_id?.startsWith('later')) await sleep(100);
          if (first.step_execution_id === 'noresult') {
            yield { request_id: req.request_id, results: [] };
            continue;
          }
          if (first.step_execution_id === 'fail') throw new ServerError(Status.UNAVAILABLE, 'ZD_DRAINING: this node is draining');
          if (!first.tenant) {
            yield { request_id: req.request_id, error: { code: Status.INVALID_ARGUMENT, message: 'ZD_INVALID_ARGUMENT: step.tenant: must not be empty' } };
            continue;
          }
          yield { request_id: req.request_id, results: req.steps.map((s) => resultOf(s, req.steps.length === 1)) };
        }
        seen.ended++;
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

  it('sends an enqueue that may pass 64 KiB, by its input or its non-retryable types, as a unary call of its own', async () => {
    const before = seen.unary;
    const big = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's' };
    await client.enqueueStep({ ...big, stepExecutionId: 'big-input', input: Buffer.alloc(64 * 1024) });
    await client.enqueueStep({ ...big, stepExecutionId: 'big-types', retryPolicy: { nonRetryable: ['x'.repeat(22_000)] } });
    expect(seen.unaryIds.slice(before)).toEqual(['big-input', 'big-types']);
  });

  it('sends again as unary calls what a stream ended for a request past the node\'s limit carried', async () => {
    const before = seen.unary;
    expect((await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'toolarge' })).taskId).toBe('id-toolarge');
    expect(seen.unaryIds.slice(before)).toEqual(['toolarge']);
  });

  it('never sends again an enqueue its caller gave up on (timeout, abort) when its stream ends unread', async () => {
    const c = new Client({ address, credential: () => 'secret', defaultTimeoutMs: 2000 });
    try {
      const step = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's' };
      const before = seen.unary;
      await expect(c.enqueueStep({ ...step, stepExecutionId: 'slow' }, { timeoutMs: 50 })).rejects.toBeInstanceOf(ZdDeadlineExceededError);
      const ac = new AbortController();
      const aborted = c.enqueueStep({ ...step, stepExecutionId: 'slow' }, { signal: ac.signal });
      await sleep(20);
      ac.abort(new Error('gave up'));
      await expect(aborted).rejects.toThrow('gave up');
      // The stream ends with OK (a drain): only what is still awaited goes again.
      await c.enqueueStep({ ...step, stepExecutionId: 'drop' });
      expect(seen.unaryIds.slice(before)).toEqual(['drop']);
    } finally {
      c.close();
    }
  });

  it('sends nothing for an enqueue whose deadline passed while its credential resolved', async () => {
    let release!: () => void;
    const c = new Client({ address, credential: () => new Promise<string>((r) => { release = () => r('secret'); }) });
    try {
      const before = { streams: seen.streams, unary: seen.unary };
      await expect(c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'late-token' }, { timeoutMs: 50 }))
        .rejects.toBeInstanceOf(ZdDeadlineExceededError);
      release();
      await sleep(50);
      expect([seen.streams - before.streams, seen.unary - before.unary]).toEqual([0, 0]);
    } finally {
      c.close();
    }
  });

  it('fails an enqueue at once with its credential\'s failure, sending nothing', async () => {
    const c = new Client({ address, credential: () => { throw new Error('vault down'); } });
    try {
      const before = { streams: seen.streams, unary: seen.unary };
      const startedAt = Date.now();
      await expect(c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'no-token' }))
        .rejects.toThrow('credential function failed: vault down');
      expect(Date.now() - startedAt).toBeLessThan(1000); // not held to its deadline
      expect([seen.streams - before.streams, seen.unary - before.unary]).toEqual([0, 0]);
    } finally {
      c.close();
    }
  });

  it('ends the older stream of a rotated credential once its answers are in', async () => {
    let token = 'one';
    const c = new Client({ address, credential: () => token });
    try {
      const ended = seen.ended;
      const first = c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'later-r' });
      await sleep(20);
      token = 'two';
      await c.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'r3' });
      expect((await first).taskId).toBe('id-later-r');
      await sleep(50);
      expect(seen.ended - ended).toBe(1); // the older one; the current one stays open
    } finally {
      c.close();
    }
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
    expect(err).toMatchObject({ name: 'RpcFailedError', message: 'nope', type: 'Bad', nonRetryable: true, retryAfterMs: 250, appWorkerId: 'w1' });
    // A failure without a message still says what happened.
    const mute = await client.invokeRpc({ tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'mute' }).catch((e) => e);
    expect(mute).toMatchObject({ name: 'RpcFailedError', message: 'the rpc handler failed', type: 'Bad', nonRetryable: false, retryAfterMs: 0, appWorkerId: 'w2' });
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

  it('sends each method\'s fields as given: the tenant of an ack, the reason of a cancel, the filter and flags of an operator call', async () => {
    await client.ackOutcomes('g', ['1-0'], { tenant: 'acme' });
    expect(lastReq.ackOutcomes).toMatchObject({ group: 'g', outcome_ids: ['1-0'], tenant: 'acme' });
    await client.cancelFlow('t', 'f', 'user asked');
    expect(lastReq.cancelFlow).toMatchObject({ tenant: 't', flow_id: 'f', reason: 'user asked' });
    await client.describeQueues('t', 'orders');
    expect(lastReq.describeQueues).toMatchObject({ tenant: 't', flow_type: 'orders' });
    await client.dropOutcomeGroup('g', { tenant: 'acme', force: true });
    expect(lastReq.dropOutcomeGroup).toMatchObject({ group: 'g', tenant: 'acme', force: true });
    await client.consumeOutcomes({ group: 'g', tenant: 'acme', consumer: 'c', maxCount: 9, waitMs: 40, ack: ['0-1'], redeliverAfterMs: 700 });
    expect(lastReq.consumeOutcomes).toMatchObject({ group: 'g', tenant: 'acme', consumer: 'c', max_count: 9, wait_ms: 40, ack: ['0-1'], redeliver_after_ms: 700 });
    await client.getTask('task-9');
    expect(lastReq.getTask).toMatchObject({ task_id: 'task-9' });
    await client.waitOutcome('task-9', { waitMs: 25 });
    expect(lastReq.waitOutcome).toMatchObject({ task_id: 'task-9', wait_ms: 25 });
  });

  it('maps each method\'s reply to camelCase, counts as numbers and times as Dates', async () => {
    expect(await client.getTask('task-9')).toMatchObject({
      taskId: 'task-9', partition: 3, state: 'RUNNING', tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e', attempt: 2,
      readyAt: new Date(1000), enqueuedAt: new Date(900), appWorkerId: 'w1', nodeId: 'n1', flowDeadline: new Date(5000), maxAttempts: 4,
      lastError: { message: 'm', type: 'T', nonRetryable: true, retryAfterMs: 50 }, input: Buffer.from('in'), outcome: undefined,
    });
    expect(await client.consumeOutcomes({ group: 'g', consumer: 'c' })).toMatchObject([
      { outcomeId: '1-0', taskId: 'c1', status: 'FAILED', attempt: 3, error: { message: 'boom', type: 'X', nonRetryable: false } },
    ]);
    expect(await client.describeQueues('t')).toEqual([
      { tenant: 't', flowType: 'o', stepType: 's', ready: 7, delayed: 3, oldestReadyAt: new Date(2000), running: 5 },
    ]);
    expect(await client.describeCluster()).toEqual({
      partitions: 16,
      nodes: [{ nodeId: 'n1', address: 'a:1', lastHeartbeat: new Date(3000), ownedPartitions: 9, live: true }],
      partitionOwners: [{ partition: 4, owner: 'n1', epoch: 12 }],
    });
    // A lag or idle time the node could not tell (-1) is undefined, not a number.
    expect(await client.listOutcomeGroups()).toEqual([
      { tenant: 't', group: 'g1', lag: 4, pending: 2, consumers: 3, idleMs: 60, partitions: 8, registered: true },
      { tenant: 't', group: 'g2', lag: undefined, pending: 0, consumers: 0, idleMs: undefined, partitions: 1, registered: false },
    ]);
    expect(await client.dropOutcomeGroup('g')).toEqual({ partitions: 6, pending: 11 });
  });

  it('names the Step of a batch a refused value belongs to', async () => {
    const ok = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'b0' };
    await expect(client.enqueueSteps([ok, { ...ok, tenant: 5 as never }])).rejects.toThrow(/^StepSpec option steps\[1\]\.tenant: must be a string/);
  });

  it('refuses a reply without the task or result it must carry, naming the method', async () => {
    await expect(client.getTask('empty')).rejects.toThrow('GetTask empty: the server answered without a task');
    await expect(client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'noresult' }))
      .rejects.toThrow('EnqueueStep: the server answered without a result');
  });

  it('gives consumeOutcomes without a timeout of its own its whole wait on top of the default timeout', async () => {
    const c = new Client({ address, defaultTimeoutMs: 200 });
    try {
      expect(await c.consumeOutcomes({ group: 'slow', consumer: 'c', waitMs: 300 })).toHaveLength(1);
    } finally {
      c.close();
    }
  });
});

describe('Client against a server without EnqueueStream', () => {
  let server: Server;
  let client: Client;
  const calls = { stream: 0, step: 0, steps: 0 };
  /** The unary enqueues of stepExecutionId "slow" the client cancelled. */
  let cancelled = 0;
  let port: number;

  beforeAll(async () => {
    server = createServer();
    server.add(MatchingServiceDefinition, {
      async enqueueStep() {
        calls.step++;
        throw new ServerError(Status.INTERNAL, 'the Client sends EnqueueSteps');
      },
      async enqueueSteps(req: pb.EnqueueStepsRequest, ctx: CallContext) {
        calls.steps++;
        if (req.steps[0]?.step_execution_id === 'slow') {
          ctx.signal.addEventListener('abort', () => cancelled++);
          return never();
        }
        return { results: req.steps.map((s) => resultOf(s, true)) };
      },
      // eslint-disable-next-line require-yield
      async *enqueueStream(): AsyncIterable<pb.IEnqueueStreamResponse> {
        calls.stream++;
        throw new ServerError(Status.UNIMPLEMENTED, 'Method not found');
      },
      ...rest,
    });
    port = await server.listen('127.0.0.1:0');
    client = new Client({ address: `127.0.0.1:${port}`, defaultTimeoutMs: 2000 });
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

  it('cancels the unary enqueue its caller gave up on: at its deadline, at its signal, at close()', async () => {
    const slow = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'slow' };
    const c = new Client({ address: `127.0.0.1:${port}`, defaultTimeoutMs: 2000 });
    try {
      const sent = async () => {
        const at = calls.steps;
        while (calls.steps === at) await sleep(5);
      };
      await c.enqueueStep({ ...slow, stepExecutionId: 'first' }); // learns the server has no stream
      const before = cancelled;
      const timedOut = c.enqueueStep(slow, { timeoutMs: 100 }).catch((e) => e);
      expect(await timedOut).toBeInstanceOf(ZdDeadlineExceededError);
      const ac = new AbortController();
      const aborted = c.enqueueStep(slow, { signal: ac.signal }).catch((e) => e);
      await sent();
      ac.abort(new Error('gave up'));
      expect(await aborted).toMatchObject({ message: 'gave up' });
      const closed = c.enqueueStep(slow).catch((e) => e);
      await sent();
      c.close();
      expect((await closed as Error).message).toMatch(/the client is closed/);
      await sleep(50);
      expect(cancelled - before).toBe(3);
    } finally {
      c.close();
    }
  });
});
