/**
 * Client.close() "ends the calls in flight": every EnqueueStream call the
 * Client has open, not only the newest. A credential that resolves to
 * another token opens a new stream and leaves the old one to end once its
 * answers are in; close() must end that one too, rather than leave it open
 * on the node for as long as an answer is outstanding. Against a
 * hand-written MatchingService on a real nice-grpc server.
 */
import { createServer, ServerError, Status, type CallContext, type Server } from 'nice-grpc';
import { MatchingServiceDefinition, type pb } from '../../../src/wire';
import { Client } from '../../../src';

const unimplemented = async (): Promise<never> => { throw new ServerError(Status.UNIMPLEMENTED, 'not in this fake'); };
const step = (seid: string) => ({ tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: seid });

describe('Client.close() with a stream left by a rotated credential', () => {
  let server: Server;
  let address: string;
  /** Per stream the node saw: its token, and whether the call is still open. */
  const streams: Array<{ auth: string | undefined; open: boolean }> = [];

  beforeAll(async () => {
    server = createServer();
    server.add(MatchingServiceDefinition, {
      enqueueStep: unimplemented, enqueueSteps: unimplemented,
      // stepExecutionId "slow" is never answered.
      async *enqueueStream(reqs: AsyncIterable<pb.EnqueueStreamRequest>, ctx: CallContext) {
        const s = { auth: ctx.metadata.get('authorization'), open: true };
        streams.push(s);
        ctx.signal.addEventListener('abort', () => (s.open = false));
        try {
          for await (const req of reqs) {
            if (req.steps[0]!.step_execution_id === 'slow') continue;
            yield { request_id: req.request_id, results: req.steps.map(() => ({ task_id: 'x', created: true, partition: 1 })) };
          }
        } finally {
          s.open = false;
        }
      },
      getTask: unimplemented, waitOutcome: unimplemented, consumeOutcomes: unimplemented, ackOutcomes: unimplemented,
      cancelFlow: unimplemented, describeQueues: unimplemented, describeCluster: unimplemented, listOutcomeGroups: unimplemented,
      dropOutcomeGroup: unimplemented, invokeRpc: unimplemented,
    });
    address = `127.0.0.1:${await server.listen('127.0.0.1:0')}`;
  });

  afterAll(async () => {
    await server.forceShutdown();
  });

  it('ends the older stream too, and its enqueue rejects as closed', async () => {
    let token = 'first';
    const client = new Client({ address, credential: () => token, defaultTimeoutMs: 30_000 });
    const slow = client.enqueueStep(step('slow')).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 100));
    token = 'second';
    expect((await client.enqueueStep(step('quick'))).created).toBe(true);
    expect(streams.map((s) => s.auth)).toEqual(['Bearer first', 'Bearer second']);
    expect(streams[0]!.open).toBe(true); // the older one waits for its answer

    client.close();
    expect(String((await slow as Error).message)).toMatch(/the client is closed/);
    const deadline = Date.now() + 2000;
    while (streams.some((s) => s.open) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(streams.map((s) => s.open)).toEqual([false, false]);
  });
});
