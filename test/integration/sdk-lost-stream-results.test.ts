/**
 * A handler whose slot stream ends while it runs. Its result is never sent
 * again: the attempt belonged to that stream, the node fails it as worker lost
 * and the retry policy runs (DESIGN §6; reference: "When the Worker
 * disconnects or crashes, the attempt fails and the retry policy runs"). The
 * worker's log must say whose result it dropped, so the retry has a cause.
 * The node ends the stream itself here: a busy stream silent past
 * matching.busyStreamSilence (the worker's Pongs set far apart).
 */
import { Worker } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { aborted, recordingLogger, registeredWithClient } from '../helpers/sdk';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('lost'), { 'matching.busyStreamSilence': '300ms' });
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await t.close();
});

it('a handler whose stream ended while it ran: its result is not sent, the log names its task, and attempt 2 runs', async () => {
  const logger = recordingLogger();
  const reasons: unknown[] = [];
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger,
    reconnectBackoff: { initialMs: 50, maxMs: 200 }, _internal: { pongIntervalMs: 60_000 },
    flowTypes: {
      order: {
        steps: {
          charge: async (ctx) => {
            if (ctx.attempt > 1) return 'ok';
            reasons.push(await aborted(ctx.signal));
            return 'too late';
          },
        },
      },
    },
  });
  const { c } = await registeredWithClient(w, t.node.apiAddress, cleanups);

  const { taskId } = await c.enqueueStep({
    tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1',
    retryPolicy: { maxAttempts: 2, initialIntervalMs: 10 },
  });
  expect(await c.waitOutcome(taskId, { waitMs: 8000 })).toMatchObject({ status: 'COMPLETED', attempt: 2 });
  expect(reasons).toHaveLength(1);
  expect(reasons[0]).toBeInstanceOf(Error);
  await waitFor(() => logger.lines.find((l) => l.level === 'warn' && l.fields?.taskId === taskId && l.fields?.attempt === 1), {
    timeoutMs: 2000, description: 'a warning naming attempt 1 of the task',
  });
  const warning = logger.lines.find((l) => l.level === 'warn' && l.fields?.taskId === taskId)!;
  expect(warning.msg).toBe('result not sent: the task lost its slot stream while the handler ran');
  expect(warning.fields?.error).toMatch(/slot stream ended/);
});
