/**
 * dexzd_matching_rpcs_total{result} counts what InvokeRpc answered: a call
 * whose caller went away was answered nothing, and is no UNAVAILABLE (the
 * ZdmatchRpcUnavailable alert reads that share as workers missing).
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { metricValue } from '../helpers/sdk';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t?.close());

const rpc = { tenant: 'acme', flow_id: 'r', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q') };

it('counts an RPC its caller cancelled while a worker ran it as no UNAVAILABLE, and one no worker took as one', async () => {
  t = await startTestNode(redis.url, uniquePrefix('mrpc'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const registry = t.node.metrics.registry;

  const caller = new AbortController();
  const call = t.matching.invokeRpc(rpc, { signal: caller.signal }).catch((e: Error) => e);
  const task = (await s.nextOf('rpc_task')).rpc_task!;
  caller.abort();
  await call;
  // The worker hears the caller went away, and the slot is idle again.
  expect((await s.nextOf('cancel')).cancel!.task_token).toBe(task.task_token);
  s.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('late') } });
  await s.nextOf('result_ack');

  // A call that found a worker and got its answer, for comparison.
  const done = t.matching.invokeRpc(rpc);
  const next = (await s.nextOf('rpc_task')).rpc_task!;
  s.send({ rpc_result: { task_token: next.task_token, output: Buffer.from('fine') } });
  await done;
  // And one no worker took within its timeout (a flow type nobody serves): a real UNAVAILABLE.
  const none = await t.matching.invokeRpc({ ...rpc, flow_type: 'nobody', timeout_ms: 200 }).then(() => undefined, (e: Error) => e);
  expect(none?.message).toMatch(/ZD_RPC_UNAVAILABLE/);
  await waitFor(async () => (await metricValue(registry, 'dexzd_matching_rpcs_total', { result: 'result' })) === 1, { timeoutMs: 2000, description: 'the answered RPC counted' });
  expect(await metricValue(registry, 'dexzd_matching_rpcs_total', { result: 'unavailable' })).toBe(1);
  s.reset();
});
