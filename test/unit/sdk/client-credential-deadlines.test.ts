/**
 * A Client whose credential never resolves (a token function stuck on a hung
 * token service): each call still ends at its own timeout (CallOptions: "the
 * whole call's timeout"), at its caller's signal, or at close(), and nothing
 * is sent without its credential. Against a hand-written MatchingService on a
 * real nice-grpc server.
 */
import { createServer, ServerError, Status, type Server } from 'nice-grpc';
import { MatchingServiceDefinition, type pb } from '../../../src/wire';
import { Client, ZdDeadlineExceededError } from '../../../src';

const unimplemented = async (): Promise<never> => { throw new ServerError(Status.UNIMPLEMENTED, 'not in this fake'); };
const step = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e' };

/** What a call settled with, or 'still waiting' past `ms`. */
function within(ms: number, p: Promise<unknown>): Promise<unknown> {
  return Promise.race([
    p.then((v) => ({ resolved: v }), (e: unknown) => e),
    new Promise((r) => setTimeout(() => r('still waiting'), ms).unref()),
  ]);
}

describe('Client with a credential that never resolves', () => {
  let server: Server;
  let address: string;
  let received = 0;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = createServer();
    server.add(MatchingServiceDefinition, {
      enqueueStep: unimplemented,
      async enqueueSteps(req: pb.EnqueueStepsRequest) {
        received++;
        return { results: req.steps.map(() => ({ task_id: 'x', created: true, partition: 1 })) };
      },
      async *enqueueStream(reqs: AsyncIterable<pb.EnqueueStreamRequest>) {
        for await (const req of reqs) {
          received++;
          yield { request_id: req.request_id, results: req.steps.map(() => ({ task_id: 'x', created: true, partition: 1 })) };
        }
      },
      async getTask() {
        received++;
        return {};
      },
      waitOutcome: unimplemented, consumeOutcomes: unimplemented, ackOutcomes: unimplemented, cancelFlow: unimplemented,
      describeQueues: unimplemented, describeCluster: unimplemented, listOutcomeGroups: unimplemented,
      dropOutcomeGroup: unimplemented, invokeRpc: unimplemented,
    });
    address = `127.0.0.1:${await server.listen('127.0.0.1:0')}`;
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await server.shutdown();
  });

  const hungClient = () => {
    const c = new Client({ address, credential: () => new Promise<string>(() => undefined), defaultTimeoutMs: 10_000 });
    clients.push(c);
    return c;
  };

  it('ends an enqueue at its timeoutMs', async () => {
    const c = hungClient();
    const t0 = Date.now();
    const err = await within(3000, c.enqueueStep(step, { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(ZdDeadlineExceededError);
    expect((err as Error).message).toBe('enqueueStep did not finish within 200 ms');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('ends a unary call at its timeoutMs', async () => {
    const c = hungClient();
    const err = await within(3000, c.getTask('1-0123456789abcdef01234567', { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(ZdDeadlineExceededError);
    expect((err as Error).message).toBe('getTask did not finish within 200 ms');
  });

  it('ends calls when their caller’s signal aborts', async () => {
    const c = hungClient();
    const ac = new AbortController();
    const enq = within(3000, c.enqueueSteps([step], { signal: ac.signal }));
    const get = within(3000, c.getTask('1-0123456789abcdef01234567', { signal: ac.signal }));
    setTimeout(() => ac.abort(new Error('caller gave up')), 100);
    expect(await enq).toMatchObject({ message: 'caller gave up' });
    expect(await get).toBeInstanceOf(Error);
    expect(await get).not.toBe('still waiting');
  });

  it('ends calls in flight at close(), with "the client is closed"', async () => {
    const c = hungClient();
    const enq = within(3000, c.enqueueStep(step));
    const get = within(3000, c.getTask('1-0123456789abcdef01234567'));
    await new Promise((r) => setTimeout(r, 100));
    c.close();
    expect(String((await enq as Error).message)).toMatch(/the client is closed/);
    expect(String((await get as Error).message)).toBe('getTask: the client is closed');
  });

  it('sent nothing without its credential', () => {
    expect(received).toBe(0);
  });
});

it('leaves no unhandled rejection behind an enqueue aborted before its failing credential settled', async () => {
  // Guards the enqueue lane's early refusal of an aborted signal: the credential's promise
  // was left without a handler, and its failure took a producer process down.
  const unhandled: unknown[] = [];
  const spy = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', spy);
  const c = new Client({ address: '127.0.0.1:1', credential: async () => { throw new Error('token service down'); } });
  try {
    await expect(c.enqueueStep(step, { signal: AbortSignal.abort() })).rejects.toThrow();
    await expect(c.enqueueSteps([step], { signal: AbortSignal.abort() })).rejects.toThrow();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', spy);
    c.close();
  }
});
