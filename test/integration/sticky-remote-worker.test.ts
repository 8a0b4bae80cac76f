/**
 * A Step waiting at its owner for its flow's sticky worker, which is
 * connected to another node and busy there, moves on at once when that worker
 * goes away (DESIGN §4: "When it has no connected stream, is draining, or has
 * declined the type, skip this phase at once: a graceful restart must cost no
 * sticky wait") — the owner hears it from the other node's CapacityUpdate.
 * Two nodes in this process, real gRPC and a real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import type { TestNode } from '../helpers/node';
import { useNodePair } from '../helpers/node-pair';
import type { RawSlot } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const STICKY_WAIT = 4000;
const pair = useNodePair(redis, 'stickyremote', { 'matching.stickyWait': `${STICKY_WAIT}ms`, 'matching.syncMatchWait': '200ms' }, ['n-owner', 'n-gateway']);
const slotAt = pair.slotAt;
let owner: TestNode;
let gateway: TestNode;
beforeEach(() => ({ a: owner, b: gateway } = pair));

let seq = 0;
function stepOwnedBy(node: TestNode, over: pb.IStepSpec = {}): pb.IStepSpec {
  for (;;) {
    const flow_id = `f${++seq}`;
    if (node.node.leases.holds(partitionOf('acme', flow_id, node.config.cluster.partitions))) {
      return { tenant: 'acme', flow_id, flow_type: 'order', step_type: 'charge', step_execution_id: 's', ...over };
    }
  }
}

/**
 * The slot's next Step within the sticky wait, past one other that may come first (a Step
 * handed back to its queue by the same move, which `w` completes).
 */
async function nextPast(w: RawSlot, taskId: string): Promise<pb.IStepTask> {
  const task = (await w.nextOf('step_task', STICKY_WAIT - 1000)).step_task!;
  if (task.task_id === taskId) return task;
  w.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  await w.nextOf('result_ack');
  return (await w.nextOf('step_task', STICKY_WAIT - 1000)).step_task!;
}

it('stops waiting for a sticky worker of another node once it has gone', async () => {
  // w1, on the gateway node, busy with a Step that ends when w1 goes (one attempt)
  const w1 = await slotAt(gateway, 'w1');
  await gateway.matching.enqueueStep({ step: stepOwnedBy(gateway, { retry_policy: { max_attempts: 1 } }) });
  await w1.nextOf('step_task');
  await waitFor(() => owner.node.view.presence('acme', 'w1', 'order', 'charge') === 'busy',
    { timeoutMs: 5000, description: "the owner sees w1 busy" });

  // w2, idle on the owner node; a Step of the owner's, sticky to w1, waits for w1
  const w2 = await slotAt(owner, 'w2');
  const r = await owner.matching.enqueueStep({ step: stepOwnedBy(owner, { sticky_worker_id: 'w1' }) });
  await expect(w2.nextOf('step_task', 300)).rejects.toThrow(/no frame/);
  expect(owner.node.owner.waitingInMemory).toBe(1);

  // w1 goes away: the Step goes to w2 at once, not after the sticky wait
  const goneAt = Date.now();
  w1.reset();
  const task = (await w2.nextOf('step_task', STICKY_WAIT - 1000)).step_task!;
  expect(task.task_id).toBe(r.task_id);
  expect(Date.now() - goneAt).toBeLessThan(STICKY_WAIT - 1000);
});

it('stops waiting for a sticky worker of another node once it drains there', async () => {
  // w1 on the gateway node with two streams, both busy
  const a = await slotAt(gateway, 'w1');
  const b = await slotAt(gateway, 'w1');
  for (let i = 0; i < 2; i++) await gateway.matching.enqueueStep({ step: stepOwnedBy(gateway) });
  await a.nextOf('step_task');
  await b.nextOf('step_task');
  await waitFor(() => owner.node.view.presence('acme', 'w1', 'order', 'charge') === 'busy',
    { timeoutMs: 5000, description: 'the owner sees w1 busy' });
  const w2 = await slotAt(owner, 'w2');
  const r = await owner.matching.enqueueStep({ step: stepOwnedBy(owner, { sticky_worker_id: 'w1' }) });
  await expect(w2.nextOf('step_task', 300)).rejects.toThrow(/no frame/);

  // one stream half-closes: the SDK's stop(), so w1 is draining (its other stream still
  // runs its Step; the half-closed one's Step goes back to its queue, and may reach w2 first)
  const drainAt = Date.now();
  a.halfClose();
  expect((await nextPast(w2, r.task_id)).task_id).toBe(r.task_id);
  expect(Date.now() - drainAt).toBeLessThan(STICKY_WAIT - 1000);
});

it('does not wait at all for a sticky worker of another node that drains there while a stream of it is still busy', async () => {
  const a = await slotAt(gateway, 'w1');
  const b = await slotAt(gateway, 'w1');
  await gateway.matching.enqueueStep({ step: stepOwnedBy(gateway) });
  const [busy, idle] = await Promise.race([
    a.nextOf('step_task', 3000).then(() => [a, b] as const),
    b.nextOf('step_task', 3000).then(() => [b, a] as const),
  ]);
  // w1 stops: its idle stream half-closes, the busy one still runs its Step
  idle.halfClose();
  await idle.ended;
  await waitFor(() => owner.node.view.nodeOfWorker('acme', 'w1') === undefined && !!busy,
    { timeoutMs: 5000, description: 'the owner sees w1 draining' });
  const w2 = await slotAt(owner, 'w2');
  const since = Date.now();
  const r = await owner.matching.enqueueStep({ step: stepOwnedBy(owner, { sticky_worker_id: 'w1' }) });
  expect((await w2.nextOf('step_task', STICKY_WAIT - 1000)).step_task!.task_id).toBe(r.task_id);
  expect(Date.now() - since).toBeLessThan(STICKY_WAIT / 4);
});

it('keeps waiting for a sticky worker whose last stream here ends while it is still connected at another node', async () => {
  // w1 busy at both nodes: here with a Step that ends when its stream does, there with one it finishes
  const here = await slotAt(owner, 'w1');
  await owner.matching.enqueueStep({ step: stepOwnedBy(owner, { retry_policy: { max_attempts: 1 } }) });
  await here.nextOf('step_task');
  const there = await slotAt(gateway, 'w1');
  await gateway.matching.enqueueStep({ step: stepOwnedBy(gateway) });
  const busy = (await there.nextOf('step_task')).step_task!;
  await waitFor(() => owner.node.view.presence('acme', 'w1', 'order', 'charge') === 'busy',
    { timeoutMs: 5000, description: 'the owner sees w1 busy at the other node' });
  const w2 = await slotAt(owner, 'w2');
  const r = await owner.matching.enqueueStep({ step: stepOwnedBy(owner, { sticky_worker_id: 'w1' }) });
  await expect(w2.nextOf('step_task', 300)).rejects.toThrow(/no frame/);

  // w1's stream here goes; w1 is still at the other node, so its Step waits for it there
  here.reset();
  await expect(w2.nextOf('step_task', 500)).rejects.toThrow(/no frame/);
  there.send({ step_result: { task_token: busy.task_token, output: Buffer.from('ok') } });
  await there.nextOf('result_ack');
  expect((await there.nextOf('step_task', STICKY_WAIT - 1500)).step_task!.task_id).toBe(r.task_id);
});

it('stops waiting for a sticky worker of another node once it declines the type there, though a waiting RPC takes its slot', async () => {
  // w1 on the gateway node, busy with an "exotic" Step it lacks; an RPC there waits for w1 as its sticky worker
  const w1 = await slotAt(gateway, 'w1');
  await gateway.matching.enqueueStep({ step: stepOwnedBy(gateway, { step_type: 'exotic', sticky_worker_id: 'w1' }) });
  const long = (await w1.nextOf('step_task')).step_task!;
  const call = gateway.matching.invokeRpc({
    tenant: 'acme', flow_id: 'r', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), sticky_worker_id: 'w1', timeout_ms: STICKY_WAIT * 2,
  });
  await waitFor(() => gateway.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'the RPC waiting for w1' });
  await waitFor(() => owner.node.view.presence('acme', 'w1', 'order', 'exotic') === 'busy',
    { timeoutMs: 5000, description: 'the owner sees w1 busy' });
  // w2, idle on the owner node; an "exotic" Step of the owner's, sticky to w1, waits for w1
  const w2 = await slotAt(owner, 'w2');
  const r = await owner.matching.enqueueStep({ step: stepOwnedBy(owner, { step_type: 'exotic', sticky_worker_id: 'w1' }) });
  await expect(w2.nextOf('step_task', 300)).rejects.toThrow(/no frame/);
  expect(owner.node.owner.waitingInMemory).toBe(1);

  // w1 declines "exotic", and its slot goes to the RPC: the Step goes to w2 at once, not after the sticky wait
  const declinedAt = Date.now();
  w1.send({ decline: { task_token: long.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  const rpcTask = (await w1.nextOf('rpc_task')).rpc_task!;
  // the declined Step goes back to its queue too, and may reach w2 first
  expect((await nextPast(w2, r.task_id)).task_id).toBe(r.task_id);
  expect(Date.now() - declinedAt).toBeLessThan(STICKY_WAIT - 1000);
  w1.send({ rpc_result: { task_token: rpcTask.task_token, output: Buffer.from('ok') } });
  expect(Buffer.from((await call).output!).toString()).toBe('ok');
});

it('keeps a second Step sticky to a worker of another node waiting for it when the first has just taken its only slot', async () => {
  // Guards: the owner counted the slot it offered the first Step as taken and not busy, so until
  // the gateway node's next snapshot w1 looked absent, and the second skipped its sticky phase.
  const w1 = await slotAt(gateway, 'w1');
  await waitFor(() => owner.node.view.presence('acme', 'w1', 'order', 'charge') === 'idle',
    { timeoutMs: 5000, description: 'the owner sees w1 idle' });
  const w2 = await slotAt(owner, 'w2');
  const steps = [stepOwnedBy(owner, { sticky_worker_id: 'w1' }), stepOwnedBy(owner, { sticky_worker_id: 'w1' })];
  const ids = (await Promise.all(steps.map((step) => owner.matching.enqueueStep({ step })))).map((r) => r.task_id);
  const first = (await w1.nextOf('step_task')).step_task!;
  await expect(w2.nextOf('step_task', 500)).rejects.toThrow(/no frame/);

  w1.send({ step_result: { task_token: first.task_token, output: Buffer.from('ok') } });
  await w1.nextOf('result_ack');
  const second = (await w1.nextOf('step_task', STICKY_WAIT - 1000)).step_task!;
  expect([first.task_id, second.task_id].sort()).toEqual([...ids].sort());
});
