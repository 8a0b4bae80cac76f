/**
 * A handler's output larger than the node accepts. Up to the node's gRPC
 * message limit (limits.maxPayloadBytes + 64 KiB) the node refuses the output
 * with a verdict and fails the attempt; past it the node's gRPC layer ends the
 * stream with RESOURCE_EXHAUSTED. That status ends a *registered* stream: it is
 * not the node rejecting the slot's registration, so it must neither turn
 * readiness false nor stop a worker set to stop on permanent rejections.
 * The worker says which task's result went down with the stream.
 * An enqueue past that limit fails alone: the Client's enqueues share one
 * EnqueueStream, and the status the node's gRPC layer ends it with must not
 * fail the other enqueues it carried.
 */
import { Client, Worker, ZdResourceExhaustedError, type StepHandler, type WorkerOptions } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger, registeredWithClient } from '../helpers/sdk';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('oversized'), { 'limits.maxPayloadBytes': 1024 });
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await t.close();
});

/** Far past what the node's gRPC server takes in one message (1 KiB + 64 KiB here). */
const HUGE = 'x'.repeat(200 * 1024);

async function setup(charge: StepHandler, options: Partial<WorkerOptions> = {}) {
  const logger = recordingLogger();
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', flowTypes: { order: { steps: { charge } } }, maxConcurrentTasks: 1, reservedRpcTasks: 0,
    logger, reconnectBackoff: { initialMs: 50, maxMs: 200 }, ...options,
  });
  const { c, running } = await registeredWithClient(w, t.node.apiAddress, cleanups);
  return { w, c, logger, running };
}

const spec = (flowId: string) => ({ tenant: 'acme', flowId, flowType: 'order', stepType: 'charge', stepExecutionId: 's1', retryPolicy: { maxAttempts: 1 } });
const huge: StepHandler = (ctx) => (ctx.flowId === 'huge' ? HUGE : 'ok');

it('a result past the node\'s message limit fails its attempt only: a worker set to stop on permanent rejections keeps running', async () => {
  const { w, c, logger, running } = await setup(huge, { stopOnPermanentStreamRejection: true });
  const big = await c.enqueueStep(spec('huge'));
  expect(await c.waitOutcome(big.taskId, { waitMs: 5000 })).toMatchObject({ status: 'FAILED', attempt: 1 });
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  const small = await c.enqueueStep(spec('small'));
  expect(await c.waitOutcome(small.taskId, { waitMs: 5000 })).toMatchObject({ status: 'COMPLETED', attempt: 1 });
  expect(w.state).toBe('running');
  expect(await Promise.race([running, new Promise((r) => setTimeout(() => r('still running'), 200))])).toBe('still running');
  expect(logger.count('slot stream rejected')).toBe(0);
});

it('a result past the node\'s message limit leaves readiness alone, and the log names its task and why', async () => {
  const { w, c, logger } = await setup(huge);
  const big = await c.enqueueStep(spec('huge'));
  const seen: boolean[] = [];
  const probe = setInterval(() => seen.push(w.readiness().isReady), 5);
  cleanups.push(() => clearInterval(probe));
  expect(await c.waitOutcome(big.taskId, { waitMs: 5000 })).toMatchObject({ status: 'FAILED', attempt: 1 });
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  await waitFor(() => w.readiness().queues.every((q) => q.hasRegisteredStream), { description: 'the stream to register again' });
  clearInterval(probe);
  expect(seen).not.toContain(false);
  expect(w.readiness().queues[0]!.lastPermanentError).toBeNull();
  const lost = logger.lines.find((l) => l.level === 'warn' && l.fields?.taskId === big.taskId);
  expect(lost?.msg).toMatch(/result/);
  expect(String(lost?.fields?.error)).toMatch(/RESOURCE_EXHAUSTED/);
});

it('an enqueue past the node\'s message limit fails alone, not the enqueues sharing its stream', async () => {
  const c = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 10_000 });
  cleanups.push(() => c.close());
  await c.enqueueStep(spec('first')); // the stream is open
  const results = await Promise.allSettled([
    c.enqueueStep(spec('before')), c.enqueueStep({ ...spec('huge'), input: HUGE }), c.enqueueStep(spec('after')),
  ]);
  // Was: all three failed with the huge one's "Received message larger than max (204… vs 66560)".
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ZdResourceExhaustedError);
  for (const r of [results[0], results[2]] as PromiseFulfilledResult<{ taskId: string }>[]) {
    expect((await c.getTask(r.value.taskId)).state).toBe('QUEUED');
  }
  expect((await c.enqueueStep(spec('next'))).created).toBe(true);
});

it('reports created: true for each new Step that shared its stream\'s moment with an enqueue past the limit', async () => {
  // Guards: the oversized request ended the shared stream; requests the node had already read
  // and written lost their answers, went again as unary calls, found their Steps there and
  // answered created: false for Steps created once, by these very calls.
  const c = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 10_000 });
  cleanups.push(() => c.close());
  await c.enqueueStep(spec('first')); // the stream is open
  for (let round = 0; round < 5; round++) {
    const before = [0, 1, 2, 3, 4].map((i) => c.enqueueStep(spec(`b${round}-${i}`)));
    await new Promise((r) => setTimeout(r, 5));
    const big = c.enqueueStep({ ...spec(`huge${round}`), input: HUGE });
    const after = c.enqueueStep(spec(`a${round}`));
    const settled = await Promise.allSettled([...before, big, after]);
    expect((settled[5] as PromiseRejectedResult).reason).toBeInstanceOf(ZdResourceExhaustedError);
    expect([...settled.slice(0, 5), settled[6]].map((r) => (r.status === 'fulfilled' ? r.value.created : r.reason)))
      .toEqual(Array(6).fill(true));
  }
});
