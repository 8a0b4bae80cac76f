/**
 * An RPC's sticky phase lasts matching.stickyWait; after it any worker of the
 * flow type may run the call (DESIGN §4), on any node: a peer's idle worker
 * takes it once the sticky worker's window closes, instead of the call
 * waiting out matching.dispatchWait for the sticky worker's node alone.
 * Two nodes in this process, real gRPC and a real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import { useEmbeddedRedis } from '../helpers/redis';
import { useNodePair } from '../helpers/node-pair';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const STICKY_WAIT = 300;
const pair = useNodePair(redis, 'rpcsticky', { 'matching.stickyWait': `${STICKY_WAIT}ms`, 'matching.dispatchWait': '3000ms' });
const slotAt = pair.slotAt;

it.each([
  ['remembered', false],
  ['named in the request', true],
])('runs an RPC on a peer\'s idle worker once the window of its busy sticky worker (%s) closes', async (_how, inRequest) => {
  const { a, b } = pair;
  const wa = await slotAt(a, 'w-a');
  await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  await wa.nextOf('step_task'); // w-a stays busy
  const wb = await slotAt(b, 'w-b');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === 'n-b', { timeoutMs: 5000, description: "a sees b's idle slot" });
  if (!inRequest) await redis.command('SET', a.node.keys.sticky(partitionOf('acme', 'f9', a.config.cluster.partitions), 'acme', 'f9'), 'w-a');
  const since = Date.now();
  const call = a.matching.invokeRpc({
    tenant: 'acme', flow_id: 'f9', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 5000,
    ...(inRequest ? { sticky_worker_id: 'w-a' } : {}),
  });
  const task = (await wb.nextOf('rpc_task', 2000)).rpc_task!;
  // Not before the sticky window closed, and long before the dispatch window's end.
  expect(Date.now() - since).toBeGreaterThanOrEqual(STICKY_WAIT - 50);
  expect(Date.now() - since).toBeLessThan(2000);
  wb.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-b') } });
  const r = await call;
  expect(r.app_worker_id).toBe('w-b');
  expect(Buffer.from(r.output!).toString()).toBe('from w-b');
});
