/**
 * ctx.heartbeat() is throttled in the SDK: each Heartbeat frame is a script
 * call at the node, and DESIGN §3 budgets three per Step. A handler may call
 * it as often as it likes; the attempt still never times out while it does.
 * A transparent tap (test/helpers/worker-tap.ts) counts the frames.
 */
import { Client, Worker, type StepHandler } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger, registeredWithClient } from '../helpers/sdk';
import { sleep } from '../helpers/wait';
import { startWorkerTap, type WorkerTap } from '../helpers/worker-tap';

const redis = useEmbeddedRedis();
let t: TestNode;
let tap: WorkerTap;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('hb'));
  tap = await startWorkerTap(t.node.apiAddress);
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await tap.close();
  await t.close();
});

/** A one-slot worker behind the tap and a Client; resolves once registered. */
async function setup(charge: StepHandler): Promise<Client> {
  const w = new Worker({
    address: tap.address, tenant: 'acme', flowTypes: { order: { steps: { charge } } }, maxConcurrentTasks: 1, reservedRpcTasks: 0,
    logger: recordingLogger(),
  });
  const { c } = await registeredWithClient(w, t.node.apiAddress, cleanups);
  return c;
}

const spec = { tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1', heartbeatTimeoutMs: 3000 };
const heartbeats = () => tap.frames.filter((f) => f.kind === 'heartbeat');

it('2000 heartbeats in a burst cost a handful of frames; the latest details go last', async () => {
  const c = await setup(async (ctx) => {
    for (let i = 1; i <= 2000; i++) {
      ctx.heartbeat(`${i}`);
      await new Promise((r) => setImmediate(r));
    }
    await sleep(1500); // past one throttle interval: the latest details must still go out
    return 'ok';
  });
  const { taskId } = await c.enqueueStep({ ...spec, retryPolicy: { maxAttempts: 1 } });
  expect(await c.waitOutcome(taskId, { waitMs: 20_000 })).toMatchObject({ status: 'COMPLETED', attempt: 1 });
  const frames = heartbeats();
  expect(frames.length).toBeGreaterThanOrEqual(1);
  expect(frames.length).toBeLessThanOrEqual(10);
  const details = frames.map((f) => Buffer.from((f.frame as { heartbeat: { details: Uint8Array } }).heartbeat.details).toString());
  expect(details[0]).toBe('1'); // the first is never held back
  expect(details.at(-1)).toBe('2000');
});

it('a handler heartbeating steadily past the heartbeat timeout keeps its attempt', async () => {
  const c = await setup(async (ctx) => {
    const until = Date.now() + 5000; // well past the 3 s heartbeat timeout
    while (Date.now() < until) {
      ctx.heartbeat();
      await sleep(20);
    }
    return 'ok';
  });
  const { taskId } = await c.enqueueStep({ ...spec, retryPolicy: { maxAttempts: 1 } });
  expect(await c.waitOutcome(taskId, { waitMs: 20_000 })).toMatchObject({ status: 'COMPLETED', attempt: 1 });
  // About one per second (timeout / 3); unthrottled it was one per call, ~250.
  expect(heartbeats().length).toBeLessThanOrEqual(15);
});

it('refuses heartbeat details that are neither a string nor bytes, naming them, and sends no empty frame for them', async () => {
  let refused = '';
  const c = await setup(async (ctx) => {
    try {
      ctx.heartbeat({ progress: 50 } as unknown as string);
    } catch (err) {
      refused = (err as Error).message;
    }
    ctx.heartbeat('50%');
    return 'ok';
  });
  const { taskId } = await c.enqueueStep({ ...spec, retryPolicy: { maxAttempts: 1 } });
  expect(await c.waitOutcome(taskId, { waitMs: 20_000 })).toMatchObject({ status: 'COMPLETED' });
  expect(refused).toMatch(/heartbeat option details: must be a string, Buffer or Uint8Array/);
  const details = heartbeats().map((f) => Buffer.from((f.frame as { heartbeat: { details: Uint8Array } }).heartbeat.details).toString());
  expect(details).toEqual(['50%']);
});
