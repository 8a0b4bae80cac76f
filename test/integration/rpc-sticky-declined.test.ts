/**
 * An RPC whose sticky worker is connected to another node but cannot run it
 * there — it declined the rpc name, or it does not register the flow type —
 * skips the sticky phase at once (DESIGN §4: "When it has no connected
 * stream, is draining, or has declined the type, skip this phase at once"):
 * an idle worker of the flow type takes it, instead of the call waiting out
 * matching.stickyWait at the sticky worker's node. Two nodes in this
 * process, raw streams, real gRPC and a real redis-server.
 */
import { ClientError, Status } from 'nice-grpc';
import { pb, rpcDeclineType } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { useNodePair } from '../helpers/node-pair';
import type { TestNode } from '../helpers/node';
import type { RawSlot } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const STICKY_WAIT = 2500;
const pair = useNodePair(redis, 'rpcstickydecl', {
  'matching.stickyWait': `${STICKY_WAIT}ms`, 'matching.dispatchWait': '4000ms', 'matching.syncMatchWait': '200ms',
});
const slotAt = pair.slotAt;

let seq = 0;
async function stepAt(node: TestNode): Promise<void> {
  await node.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `busy${++seq}`, flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
}

const rpcAt = (node: TestNode, over: Partial<pb.IInvokeRpcRequest> = {}) => node.matching.invokeRpc({
  tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 6000, ...over,
});

/** An RPC sticky to S, sent to `node`, reaches idle W there well before the sticky wait would have run out. */
async function expectIdleWorkerAtOnce(node: TestNode, w: RawSlot): Promise<void> {
  const since = Date.now();
  const call = rpcAt(node, { sticky_worker_id: 'S' });
  const task = (await w.nextOf('rpc_task', STICKY_WAIT + 1500)).rpc_task!;
  expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 3);
  w.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from W') } });
  expect((await call).app_worker_id).toBe('W');
}

it('gives an RPC to an idle worker at once when its sticky worker on another node declined the rpc name', async () => {
  const { a, b } = pair;
  // S, on b, declines "status" (it is the only worker then: NOT_FOUND), then runs a Step.
  const s = await slotAt(b, 'S');
  const first = rpcAt(b).catch((e: unknown) => e);
  const declined = (await s.nextOf('rpc_task')).rpc_task!;
  s.send({ decline: { task_token: declined.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  expect(((await first) as ClientError).code).toBe(Status.NOT_FOUND);
  await stepAt(b);
  await s.nextOf('step_task');
  // C, on b, has the name but is busy; W, on a, is idle.
  const c = await slotAt(b, 'C');
  await stepAt(b);
  await c.nextOf('step_task');
  const w = await slotAt(a, 'W');
  await waitFor(() => a.node.view.presence('acme', 'S', 'order', rpcDeclineType('status')) === 'absent'
    && a.node.view.presence('acme', 'C', 'order', 'charge') === 'busy', { timeoutMs: 5000, description: "a sees S's decline and C busy" });

  await expectIdleWorkerAtOnce(a, w);
});

it('gives an RPC to an idle worker at once when its sticky worker on another node does not register the flow type', async () => {
  const { a, b } = pair;
  // S, on b, serves another flow type only; C, on b, serves "order" and is busy; W, on a, is idle.
  await slotAt(b, 'S', { flow_types: ['billing'] });
  const c = await slotAt(b, 'C');
  await stepAt(b);
  await c.nextOf('step_task');
  const w = await slotAt(a, 'W');
  await waitFor(() => a.node.view.nodeOfWorker('acme', 'S') === 'n-b' && a.node.view.presence('acme', 'C', 'order', 'charge') === 'busy',
    { timeoutMs: 5000, description: 'a sees S and C on b' });

  await expectIdleWorkerAtOnce(a, w);
});

it('moves on the other calls waiting for a sticky worker once it declines their rpc name, not after the sticky wait', async () => {
  const { a } = pair;
  // S, two slots: one busy with a Step, one idle; W, two idle slots; all on one node.
  const s1 = await slotAt(a, 'S');
  const s2 = await slotAt(a, 'S');
  await stepAt(a);
  // The one that got it (the other's wait for a frame ends unanswered, quietly).
  const got = await Promise.all([s1, s2].map((s) => s.nextOf('step_task', 3000).then(() => true, () => false)));
  expect(got.filter(Boolean)).toHaveLength(1);
  const idle = got[0] ? s2 : s1;
  const w1 = await slotAt(a, 'W');
  const w2 = await slotAt(a, 'W');
  // Two calls sticky to S: the first reaches S's idle slot, the second waits for S.
  const first = rpcAt(a, { sticky_worker_id: 'S' });
  const declined = (await idle.nextOf('rpc_task')).rpc_task!;
  const second = rpcAt(a, { sticky_worker_id: 'S', flow_id: 'f2' });
  await new Promise((r) => setTimeout(r, 200));
  // S lacks the name: the first goes to W, and so does the second, at once.
  const since = Date.now();
  idle.send({ decline: { task_token: declined.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  const tasks = await Promise.all([w1, w2].map(async (w) => {
    const t = (await w.nextOf('rpc_task', STICKY_WAIT + 1500)).rpc_task!;
    w.send({ rpc_result: { task_token: t.task_token, output: Buffer.from('from W') } });
    return t;
  }));
  expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 3);
  expect(tasks.map((t) => t.flow_id).sort()).toEqual(['f1', 'f2']);
  expect([(await first).app_worker_id, (await second).app_worker_id]).toEqual(['W', 'W']);
});
