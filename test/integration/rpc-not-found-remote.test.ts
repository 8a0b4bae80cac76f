/**
 * An RPC whose name no connected worker supports answers NOT_FOUND naming the
 * rpc (DESIGN §4: "A name no connected worker supports: the named error
 * (`NOT_FOUND` with the rpc name)") on every node, also on one with no worker
 * of the flow type of its own, whose peers' workers all declined the name —
 * not UNAVAILABLE after matching.dispatchWait. Two nodes in this process, raw
 * streams, real gRPC and a real redis-server.
 */
import { ClientError, Status } from 'nice-grpc';
import { pb, rpcDeclineType } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { useNodePair } from '../helpers/node-pair';
import type { TestNode } from '../helpers/node';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const DISPATCH_WAIT = 2500;
const pair = useNodePair(redis, 'rpcnfremote', { 'matching.dispatchWait': `${DISPATCH_WAIT}ms`, 'matching.stickyWait': '500ms' });

const rpcAt = (node: TestNode, over: Partial<pb.IInvokeRpcRequest> = {}) => node.matching.invokeRpc({
  tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'missing', input: Buffer.from('q'), timeout_ms: 6000, ...over,
}).then(() => undefined, (e: unknown) => e as ClientError);

it.each([
  ['no sticky worker', {}],
  ['the declining worker as its sticky worker', { sticky_worker_id: 'w-b' }],
])('answers NOT_FOUND naming the rpc at once on a node without workers when every peer worker declined it (%s)', async (_how, over) => {
  const { a, b } = pair;
  // w-b, on b, the only worker of the flow type anywhere, lacks "missing".
  const w = await pair.slotAt(b, 'w-b');
  const first = rpcAt(b);
  w.send({ decline: { task_token: (await w.nextOf('rpc_task')).rpc_task!.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  expect((await first)?.code).toBe(Status.NOT_FOUND);
  await waitFor(() => a.node.view.presence('acme', 'w-b', 'order', rpcDeclineType('missing')) === 'absent'
    && a.node.view.nodeOfWorker('acme', 'w-b') === 'n-b', { timeoutMs: 5000, description: "a sees w-b and its decline" });

  const since = Date.now();
  const err = await rpcAt(a, over);
  expect({ code: err?.code, details: err?.details }).toEqual({ code: Status.NOT_FOUND, details: expect.stringContaining('missing') });
  expect(Date.now() - since).toBeLessThan(DISPATCH_WAIT / 2);
});
