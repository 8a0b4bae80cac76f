/**
 * Whatever a handler throws becomes the attempt's failure (failure.ts), also a
 * value String() cannot turn into text: Object.create(null), an object whose
 * toString throws, an Error whose message is not a string. Turning one into a
 * failure must not throw itself: that left the attempt running, the slot busy
 * for good, and the process with an unhandled rejection (fatal in Node ≥ 15).
 */
import { Client, Worker, type StepHandler } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger, registeredWithClient } from '../helpers/sdk';

const redis = useEmbeddedRedis();
let t: TestNode;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('throws'));
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await t.close();
});

/** A one-slot worker and a Client; resolves once registered. */
async function setup(charge: StepHandler): Promise<Client> {
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', flowTypes: { order: { steps: { charge } } }, maxConcurrentTasks: 1, reservedRpcTasks: 0,
    logger: recordingLogger(),
  });
  const { c } = await registeredWithClient(w, t.node.apiAddress, cleanups);
  return c;
}

const spec = (flowId: string) => ({ tenant: 'acme', flowId, flowType: 'order', stepType: 'charge', stepExecutionId: 's1', retryPolicy: { maxAttempts: 1 } });

const unprintable: Array<[string, () => unknown]> = [
  ['Object.create(null)', () => Object.create(null)],
  ['an object whose toString throws', () => ({ toString: () => { throw new Error('no text'); } })],
  ['an Error whose message is not a string', () => Object.assign(new Error(), { message: undefined })],
];

it.each(unprintable)('a handler that throws %s fails its attempt, and the slot runs the next Step', async (_what, value) => {
  const c = await setup(async (ctx) => {
    if (ctx.flowId === 'bad') throw value();
    return 'ok';
  });
  const bad = await c.enqueueStep(spec('bad'));
  const failed = await c.waitOutcome(bad.taskId, { waitMs: 5000 });
  expect(failed).toMatchObject({ status: 'FAILED', attempt: 1 });
  expect(failed!.error?.message).toEqual(expect.any(String));
  expect(failed!.error?.message).not.toBe('');
  // The one slot is free again.
  const good = await c.enqueueStep(spec('good'));
  expect(await c.waitOutcome(good.taskId, { waitMs: 5000 })).toMatchObject({ status: 'COMPLETED', attempt: 1 });
});
