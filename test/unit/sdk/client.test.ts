/** The Client against a hand-written MatchingService on a real nice-grpc server. */
import { createServer, ServerError, Status, type CallContext, type Server } from 'nice-grpc';
import { MatchingServiceDefinition, pb, PROTOCOL_VERSION } from '../../../src/wire';
import { Client, RpcFailedError, ZdDeadlineExceededError, ZdInvalidArgumentError, ZdUnavailableError } from '../../../src';

describe('Client', () => {
  let server: Server;
  let client: Client;
  const seen: { req?: unknown; auth?: string; version?: string } = {};
  const never = () => new Promise<never>(() => {});

  beforeAll(async () => {
    server = createServer();
    const unimplemented = async (): Promise<never> => { throw new ServerError(Status.UNIMPLEMENTED, 'not in this fake'); };
    server.add(MatchingServiceDefinition, {
      async enqueueStep(req: pb.EnqueueStepRequest, ctx: CallContext) {
        seen.req = req;
        seen.auth = ctx.metadata.get('authorization');
        seen.version = ctx.metadata.get('zd-protocol-version');
        if (!req.step!.tenant) throw new ServerError(Status.INVALID_ARGUMENT, 'ZD_INVALID_ARGUMENT: step.tenant: must not be empty');
        return { task_id: `id-${req.step!.step_execution_id}`, created: true, partition: 5 };
      },
      async enqueueSteps(req: pb.EnqueueStepsRequest) {
        return { results: req.steps.map((s) => ({ task_id: `id-${s.step_execution_id}`, created: false, partition: 1 })) };
      },
      getTask: unimplemented,
      async waitOutcome(req: pb.WaitOutcomeRequest) {
        if (req.task_id === 'slow') return never();
        if (req.task_id === 'none') return {};
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
      async invokeRpc(req: pb.InvokeRpcRequest) {
        if (req.rpc_name === 'busy') throw new ServerError(Status.UNAVAILABLE, 'ZD_RPC_UNAVAILABLE: no worker took rpc busy within 10000 ms');
        if (req.rpc_name === 'bad') return { failure: { message: 'nope', type: 'Bad', non_retryable: true }, app_worker_id: 'w1' };
        return { output: Buffer.concat([Buffer.from('echo:'), req.input]), app_worker_id: 'w1' };
      },
    });
    const port = await server.listen('127.0.0.1:0');
    client = new Client({ address: `127.0.0.1:${port}`, credential: () => 'secret', defaultTimeoutMs: 2000 });
  });

  afterAll(async () => {
    client.close();
    client.close(); // idempotent
    await server.shutdown();
  });

  it('enqueues a Step with mapped fields and credentials', async () => {
    const res = await client.enqueueStep({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e1', input: 'x' });
    expect(res).toEqual({ taskId: 'id-e1', created: true, partition: 5 });
    expect(seen.auth).toBe('Bearer secret');
    expect(seen.version).toBe(String(PROTOCOL_VERSION)); // on every call: the server checks it
    expect((seen.req as pb.EnqueueStepRequest).step!.flow_id).toBe('f');
    expect(await client.enqueueSteps([{ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e2' }]))
      .toEqual([{ taskId: 'id-e2', created: false, partition: 1 }]);
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

  it('acks and cancels', async () => {
    expect(await client.ackOutcomes('g', ['1-0', '2-0'])).toBe(2);
    expect(await client.cancelFlow('t', 'f', 'user')).toEqual({ cancelledQueued: 2, cancelledRunning: 1 });
  });
});
