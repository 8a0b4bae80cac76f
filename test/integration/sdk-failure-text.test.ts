/**
 * A handler's error text reaches the outcome whatever it holds. A message the SDK
 * cut to the limit inside a surrogate pair (an emoji at the boundary), or one
 * built with a lone surrogate, went out as bytes that are no UTF-8: the node
 * refused the whole frame and ended the stream, and the attempt failed as worker
 * lost and ran again, its own failure and its nonRetryable lost. The SDK, a real
 * node and a real redis-server.
 */
import { StepFailure, Worker } from '../../src';
import { FAILURE_LIMITS } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger, registeredWithClient } from '../helpers/sdk';

const redis = useEmbeddedRedis();
let t: TestNode;
const cleanups: Array<() => unknown> = [];
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('failure-text'));
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await t.close();
});

it.each([
  ['cut inside a surrogate pair', 'a'.repeat(FAILURE_LIMITS.messageChars - 1) + '\u{1F600} and more', /a\uFFFD$/],
  ['with a lone surrogate', 'bad \uDE00 text \uD83D', /^bad \uFFFD text \uFFFD$/],
])('a failure message %s ends the attempt as the handler said', async (_what, message, expected) => {
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger: recordingLogger(),
    flowTypes: { order: { steps: { charge: () => { throw new StepFailure(message, { type: 'Bad', nonRetryable: true }); } } } },
  });
  const { c } = await registeredWithClient(w, t.node.apiAddress, cleanups);
  const { taskId } = await c.enqueueStep({ tenant: 'acme', flowId: 'f', flowType: 'order', stepType: 'charge', stepExecutionId: 's' });
  const outcome = await c.waitOutcome(taskId, { waitMs: 5000 });
  expect(outcome).toMatchObject({ status: 'FAILED', attempt: 1, error: { type: 'Bad', nonRetryable: true } });
  expect(outcome!.error!.message).toMatch(expected);
});
