/**
 * Unknown-type declines are per kind (DESIGN §4: a worker that lacks "the Step
 * type or RPC name" declines; the gateway remembers what it lacks). A Step type
 * and an RPC name are separate namespaces in a worker (`steps` and `rpcs`): a
 * worker that lacks the RPC `refund` may well run the Step `refund`, and the
 * other way round. A decline of one must not stop the other from reaching it.
 * The SDK against one real node and a real redis-server.
 */
import { Client, Worker, ZdNotFoundError, type FlowTypeHandlers } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger } from '../helpers/sdk';

const redis = useEmbeddedRedis();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

async function setup(handlers: FlowTypeHandlers) {
  const t: TestNode = await startTestNode(redis.url, uniquePrefix('dk'), { 'matching.dispatchWait': '1500ms', 'matching.stickyWait': '500ms' });
  cleanups.push(() => t.close());
  const c = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 5000 });
  cleanups.push(() => c.close());
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', flowTypes: { order: handlers }, maxConcurrentTasks: 1, reservedRpcTasks: 0,
    logger: recordingLogger(), reconnectBackoff: { initialMs: 50, maxMs: 200 },
  });
  cleanups.push(() => w.stop());
  void w.start().catch(() => undefined);
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  return { t, c, w };
}

it('a worker that declined the RPC "refund" still gets the Step "refund"', async () => {
  const { c, w } = await setup({ steps: { refund: () => 'refunded' } });
  const err = await c.invokeRpc({ tenant: 'acme', flowId: 'f-rpc', flowType: 'order', rpcName: 'refund', input: 'q' }, { timeoutMs: 4000 })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ZdNotFoundError);
  expect((err as ZdNotFoundError).code).toBe('ZD_RPC_NOT_FOUND');

  const { taskId } = await c.enqueueStep({ tenant: 'acme', flowId: 'f-step', flowType: 'order', stepType: 'refund', stepExecutionId: 's1', input: 'in' });
  const o = await c.waitOutcome(taskId, { waitMs: 3000 });
  expect(o).toMatchObject({ status: 'COMPLETED', attempt: 1, appWorkerId: w.appWorkerId });
});

it('a worker that declined the Step "approve" still gets the RPC "approve"', async () => {
  const { c, w } = await setup({ steps: { charge: () => 'ok' }, rpcs: { approve: () => 'approved' } });
  const { taskId } = await c.enqueueStep({ tenant: 'acme', flowId: 'f-step', flowType: 'order', stepType: 'approve', stepExecutionId: 's1', input: 'in' });
  // Declined (unknown Step type) and back in the queue, unconsumed.
  const deadline = Date.now() + 3000;
  while ((await c.getTask(taskId)).state !== 'QUEUED' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(await c.getTask(taskId)).toMatchObject({ state: 'QUEUED', attempt: 1 });

  const r = await c.invokeRpc({ tenant: 'acme', flowId: 'f-rpc', flowType: 'order', rpcName: 'approve', input: 'q' }, { timeoutMs: 4000 });
  expect(r.output.toString()).toBe('approved');
  expect(r.appWorkerId).toBe(w.appWorkerId);
});

it('a decline drops once every stream of the worker is gone: the same worker id back with the type gets the Step', async () => {
  const { t, c, w } = await setup({ steps: { charge: () => 'ok' } });
  const { taskId } = await c.enqueueStep({ tenant: 'acme', flowId: 'f-step', flowType: 'order', stepType: 'approve', stepExecutionId: 's1', input: 'in' });
  const deadline = Date.now() + 3000;
  while ((await c.getTask(taskId)).state !== 'QUEUED' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(await c.getTask(taskId)).toMatchObject({ state: 'QUEUED', attempt: 1 });
  await w.stop();

  // Redeployed with the Step type, under the same app worker id.
  const again = new Worker({
    address: t.node.apiAddress, tenant: 'acme', appWorkerId: w.appWorkerId, flowTypes: { order: { steps: { approve: () => 'approved' } } },
    maxConcurrentTasks: 1, reservedRpcTasks: 0, logger: recordingLogger(), reconnectBackoff: { initialMs: 50, maxMs: 200 },
  });
  cleanups.push(() => again.stop());
  void again.start().catch(() => undefined);
  const o = await c.waitOutcome(taskId, { waitMs: 8000 });
  expect(o).toMatchObject({ status: 'COMPLETED', attempt: 1, appWorkerId: w.appWorkerId });
});
