/**
 * How often a Client sends an enqueue again when its node drains. A draining
 * node ends each EnqueueStream with OK without reading it; the Client sends
 * what it left unanswered once more, as one unary call, and then only for the
 * call's deadline: a node that ends every stream it is sent must not turn an
 * enqueue into a loop of new streams. The calls the Client makes are counted
 * on its own gRPC stub. A real node and redis-server.
 */
import { Client, ZdDeadlineExceededError, type StepSpec } from '../../src';
import { drainHeldOpen, startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  jest.restoreAllMocks();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const spec = (flowId: string): StepSpec => ({ tenant: 'acme', flowId, flowType: 'order', stepType: 's', stepExecutionId: '1' });

/** A node held draining (a busy slot), a Client of it, and what that Client sends. */
async function drainingNode(): Promise<{ t: TestNode; client: Client; streams: () => number; unary: () => number }> {
  const t = await startTestNode(redis.url, uniquePrefix('drain-resend'), { 'drain.timeout': '6s' });
  cleanups.push(() => t.close());
  const client = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 3000 });
  cleanups.push(() => client.close());
  const stub = (client as unknown as { stub: { enqueueStream: unknown; enqueueSteps: unknown } }).stub;
  const streams = jest.spyOn(stub as { enqueueStream: () => unknown }, 'enqueueStream');
  const unary = jest.spyOn(stub as { enqueueSteps: () => unknown }, 'enqueueSteps');
  const { slot, drained } = await drainHeldOpen(t);
  cleanups.push(async () => {
    slot.reset();
    await drained;
  });
  return { t, client, streams: () => streams.mock.calls.length, unary: () => unary.mock.calls.length };
}

it('sends an enqueue a draining node left unread once more, as one unary call, and fails it at its deadline when that call hangs', async () => {
  const { client, streams, unary } = await drainingNode();
  // The node's Redis takes no writes: the unary call hangs (it would be answered once they resume).
  await redis.command('CLIENT', 'PAUSE', '3000', 'WRITE');
  cleanups.push(() => redis.command('CLIENT', 'UNPAUSE'));
  const start = performance.now();
  const err = await client.enqueueStep(spec('hung'), { timeoutMs: 400 }).then(() => undefined, (e: unknown) => e);
  const took = performance.now() - start;
  expect(err).toBeInstanceOf(ZdDeadlineExceededError);
  expect((err as Error).message).toBe('enqueueStep did not finish within 400 ms');
  expect(took).toBeLessThan(1000);
  // The stream the node ended unread, then one unary call: no stream after stream until the deadline.
  expect(streams()).toBe(1);
  expect(unary()).toBe(1);
});

it('tries a stream again after each drain\'s unary second, each enqueue costing one stream and one unary call', async () => {
  const { t, client, streams, unary } = await drainingNode();
  // A clock the test moves on past the Client's second of unary calls after a drain, rather than wait it out.
  const now = performance.now.bind(performance);
  let skew = 0;
  jest.spyOn(performance, 'now').mockImplementation(() => now() + skew);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    skew += 1100;
    const r = await client.enqueueStep(spec(`during${i}`));
    expect(r.created).toBe(true);
    ids.push(r.taskId);
    expect({ streams: streams(), unary: unary() }).toEqual({ streams: i + 1, unary: i + 1 });
  }
  // Within that second, an enqueue goes straight as a unary call.
  await client.enqueueStep(spec('within'));
  expect({ streams: streams(), unary: unary() }).toEqual({ streams: 4, unary: 5 });
  expect((await Promise.all(ids.map((id) => t.matching.getTask({ task_id: id })))).map((r) => r.task?.task_id)).toEqual(ids);
});
