/**
 * Step-type declines and RPC-name declines stay apart across nodes too (the
 * one-node case: decline-kinds.test.ts). Here the Step's owner is the other
 * node: it reads the worker's declines from the capacity snapshot, where an RPC
 * name travels as rpcDeclineType(name), so an RPC the worker lacks does not keep
 * the Step of the same name away from it. Two nodes in this process, raw slots,
 * a real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { useNodePair } from '../helpers/node-pair';
import { useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const pair = useNodePair(redis, 'dkx', { 'matching.dispatchWait': '1500ms', 'matching.stickyWait': '500ms' });

it('a worker on the other node that declined the RPC "refund" still gets the Step "refund"', async () => {
  const { a, b } = pair;
  const w = await pair.slotAt(b, 'w-b');
  await waitFor(() => a.node.view.nodeOfWorker('acme', 'w-b') !== undefined, { timeoutMs: 5000, description: 'a sees w-b' });

  // The RPC reaches w-b, which lacks the name: NOT_FOUND, and the decline is advertised.
  const call = b.matching.invokeRpc({ tenant: 'acme', flow_id: 'f-rpc', flow_type: 'order', rpc_name: 'refund', input: Buffer.from('q') })
    .catch((e: unknown) => e);
  const rpc = (await w.nextOf('rpc_task')).rpc_task!;
  w.send({ decline: { task_token: rpc.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  expect(String(await call)).toContain('ZD_RPC_NOT_FOUND');
  await waitFor(() => b.node.gateway.capacitySnapshot().declined.length > 0, { description: 'b records the decline' });
  await new Promise((r) => setTimeout(r, 300)); // a few capacity snapshots reach a

  // A Step "refund" whose partition node a owns: a offers it to w-b, the only worker.
  let flow_id = '';
  for (let i = 0; ; i++) {
    flow_id = `refund-${i}`;
    if (a.node.leases.holds(partitionOf('acme', flow_id, a.config.cluster.partitions))) break;
  }
  const { task_id } = await a.matching.enqueueStep({
    step: { tenant: 'acme', flow_id, flow_type: 'order', step_type: 'refund', step_execution_id: 's' },
  });
  const task = (await w.nextOf('step_task', 3000)).step_task!;
  expect(task).toMatchObject({ task_id, step_type: 'refund', attempt: 1 });
});
