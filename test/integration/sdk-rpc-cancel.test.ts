/**
 * An RPC whose caller went away gets a Cancel on its stream: through the
 * Worker SDK its handler's signal aborts with a TaskCancelledError, and the
 * late result the node refuses (REFUSED_STALE: nobody waits for it) is the
 * expected end of a cancelled task, logged as such, not a warning that a
 * result was lost.
 */
import { Client, TaskCancelledError, Worker } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { aborted, recordingLogger } from '../helpers/sdk';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
const cleanups: Array<() => unknown> = [];
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('sdk-rpc-cancel'));
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await t.close();
});

it('aborts a running RPC handler whose caller went away, and logs the refusal of its late result as expected', async () => {
  let started = false;
  let reason: unknown;
  const logger = recordingLogger();
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger,
    flowTypes: {
      order: {
        rpcs: {
          status: async (ctx) => {
            started = true;
            reason = await aborted(ctx.signal);
            return 'late answer'; // a result, not a throw: nobody reads it
          },
        },
      },
    },
  });
  const running = w.start();
  cleanups.push(() => running.catch(() => undefined), () => w.stop());
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  const c = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 5000 });
  cleanups.push(() => c.close());

  const caller = new AbortController();
  const call = c.invokeRpc({ tenant: 'acme', flowId: 'f', flowType: 'order', rpcName: 'status', timeoutMs: 5000 }, { signal: caller.signal });
  await waitFor(() => started, { description: 'the handler to start' });
  caller.abort(new Error('caller gave up'));
  await expect(call).rejects.toThrow('caller gave up');

  await waitFor(() => reason !== undefined, { description: 'the handler signal' });
  expect(reason).toBeInstanceOf(TaskCancelledError);
  expect((reason as Error).message).toMatch(/caller went away/);
  await waitFor(() => logger.count('result refused: task was cancelled', { rpcName: 'status', verdict: 'REFUSED_STALE' }) === 1, {
    description: 'the refusal logged as expected', timeoutMs: 3000,
  });
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
});
