/**
 * Timeouts a timer barely holds, against a real node. A Node.js timer longer
 * than 2^31 - 1 ms (MAX_TIMER_MS) fires after 1 ms: a Client or FetchClient
 * whose defaultTimeoutMs was MAX_TIMER_MS armed that plus a long poll's wait,
 * and every long poll timed out at once. It must wait like any other.
 */
import { Client, FetchClient, MAX_TIMER_MS, Worker } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger } from '../helpers/sdk';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('longto'));
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await t.close();
});

const spec = { tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1' };

it('waitOutcome with a defaultTimeoutMs of MAX_TIMER_MS waits for a Step that completes after 300 ms', async () => {
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger: recordingLogger(),
    flowTypes: { order: { steps: { charge: async () => { await sleep(300); return 'paid'; } } } },
  });
  void w.start().catch(() => undefined);
  cleanups.push(() => w.stop());
  await w.waitPullRegistered(AbortSignal.timeout(10_000));

  const c = new Client({ address: t.node.apiAddress, defaultTimeoutMs: MAX_TIMER_MS });
  cleanups.push(() => c.close());
  const { taskId } = await c.enqueueStep(spec);
  const started = Date.now();
  const outcome = await c.waitOutcome(taskId, { waitMs: 10_000 });
  expect(outcome).toMatchObject({ taskId, status: 'COMPLETED' });
  expect(outcome!.output.toString()).toBe('paid');
  expect(Date.now() - started).toBeGreaterThanOrEqual(200); // it did wait for the handler
  // A per-call timeout of MAX_TIMER_MS holds too.
  expect(await c.waitOutcome(taskId, { waitMs: 1000 }, { timeoutMs: MAX_TIMER_MS })).toMatchObject({ taskId, status: 'COMPLETED' });
});

it('fetchAndLock with a defaultTimeoutMs of MAX_TIMER_MS waits for a task enqueued after 300 ms', async () => {
  const fetch = new FetchClient({ address: t.node.apiAddress, workerId: 'A', defaultTimeoutMs: MAX_TIMER_MS });
  cleanups.push(() => fetch.close());
  const c = new Client({ address: t.node.apiAddress });
  cleanups.push(() => c.close());
  const enqueued = sleep(300).then(() => c.enqueueStep({ ...spec, stepExecutionId: 's2' }));
  const tasks = await fetch.fetchAndLock({ topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 10_000 });
  const { taskId } = await enqueued;
  expect(tasks.map((x) => x.taskId)).toEqual([taskId]);
  await fetch.complete(taskId, { result: 'done' });
  expect(await c.waitOutcome(taskId, { waitMs: 5000 })).toMatchObject({ taskId, status: 'COMPLETED' });
});
