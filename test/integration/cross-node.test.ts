/**
 * Work that crosses nodes (DESIGN §4, §6): an InvokeRpc on one node runs on a
 * worker connected to the other (the mesh carries the call and its result),
 * routed to the flow's sticky worker there when it has one, and a CancelFlow
 * on one node reaches the running attempt's slot on the other as a Cancel.
 * Safety does not ride on those notices: an attempt or a flow deadline whose
 * notice to its owner was lost still times out (DESIGN §11).
 * Two nodes in this process, real gRPC and a real redis-server.
 */
import { ClientError, Status } from 'nice-grpc';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { useNodePair } from '../helpers/node-pair';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const pair = useNodePair(redis, 'xnode');
const slotAt = pair.slotAt;
let a: TestNode;
let b: TestNode;
beforeEach(() => ({ a, b } = pair));

const seesWorker = (node: TestNode, appWorkerId: string) =>
  waitFor(() => node.node.view.nodeOfWorker('acme', appWorkerId) !== undefined, { timeoutMs: 5000, description: `the peer sees ${appWorkerId}` });

it("runs an InvokeRpc on the other node's worker and returns its output", async () => {
  const w = await slotAt(b, 'w-b');
  await seesWorker(a, 'w-b');
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q') });
  const task = (await w.nextOf('rpc_task')).rpc_task!;
  expect(task).toMatchObject({ rpc_name: 'status', flow_id: 'f1' });
  expect(Buffer.from(task.input!).toString()).toBe('q');
  w.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('fine') } });
  const r = await call;
  expect(Buffer.from(r.output!).toString()).toBe('fine');
  expect(r.app_worker_id).toBe('w-b');
});

it("routes an InvokeRpc to the flow's remembered sticky worker on the other node", async () => {
  // an idle worker on a's node too: without the sticky key a would run the call there
  const local = await slotAt(a, 'w-a');
  const sticky = await slotAt(b, 'w-b');
  await seesWorker(a, 'w-b');
  const p = partitionOf('acme', 'f2', a.config.cluster.partitions);
  await redis.command('SET', a.node.keys.sticky(p, 'acme', 'f2'), 'w-b');
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'f2', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q') });
  const task = (await sticky.nextOf('rpc_task')).rpc_task!;
  sticky.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('sticky') } });
  expect((await call).app_worker_id).toBe('w-b');
  await expect(local.nextOf('rpc_task', 200)).rejects.toThrow(/no frame/);
});

it("runs an InvokeRpc on the other node's idle worker when the worker here is busy", async () => {
  const local = await slotAt(a, 'w-a');
  await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  await local.nextOf('step_task'); // w-a is busy with a Step for the rest of the test
  const remote = await slotAt(b, 'w-b');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === b.node.nodeId, { timeoutMs: 5000, description: "a sees b's idle slot" });
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'r1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
  const task = (await remote.nextOf('rpc_task', 2000)).rpc_task!;
  remote.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from b') } });
  expect((await call).app_worker_id).toBe('w-b');
});

it("runs an InvokeRpc on the other node's worker when the workers here lack the name", async () => {
  const local = await slotAt(a, 'w-a');
  const first = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'r2', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
  const t1 = (await local.nextOf('rpc_task')).rpc_task!;
  local.send({ decline: { task_token: t1.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  await first.catch(() => undefined); // no other worker yet: NOT_FOUND
  const remote = await slotAt(b, 'w-b');
  await seesWorker(a, 'w-b');
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'r3', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
  const task = (await remote.nextOf('rpc_task', 2000)).rpc_task!;
  remote.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from b') } });
  expect((await call).app_worker_id).toBe('w-b');
});

it('delivers a CancelFlow to the running attempt on the other node', async () => {
  const w = await slotAt(b, 'w-b');
  const step = { tenant: 'acme', flow_id: 'f3', flow_type: 'order', step_type: 'charge', step_execution_id: 's' };
  await b.matching.enqueueStep({ step });
  const task = (await w.nextOf('step_task')).step_task!;
  // cancelled through a: whichever node owns the flow's partition, the slot is b's
  const c = await a.matching.cancelFlow({ tenant: 'acme', flow_id: 'f3', reason: 'user asked' });
  expect(c).toMatchObject({ cancelled_queued: 0, cancelled_running: 1 });
  expect((await w.nextOf('cancel')).cancel!.task_token).toBe(task.task_token);
  // the late result is refused with the CANCELLED outcome's verdict
  w.send({ step_result: { task_token: task.task_token, output: Buffer.from('late') } });
  expect((await w.nextOf('result_ack')).result_ack!.verdict).not.toBe(pb.ResultVerdict.ACCEPTED);
});

it("keeps a type that the other node's only worker declined away from that node", async () => {
  const w = await slotAt(b, 'w-b');
  await seesWorker(a, 'w-b');
  const ownedByA = (step_type: string, n: number) => {
    for (let i = 0; ; i++) {
      const flow_id = `d${n}-${i}`;
      if (a.node.leases.holds(partitionOf('acme', flow_id, a.config.cluster.partitions))) {
        return { tenant: 'acme', flow_id, flow_type: 'order', step_type, step_execution_id: 's' };
      }
    }
  };
  // the first Step of type x reaches w-b (offered by a, or started at enqueue) and is declined
  await a.matching.enqueueStep({ step: ownedByA('x', 1) });
  const first = (await w.nextOf('step_task')).step_task!;
  w.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  await waitFor(() => !a.node.view.canServe('acme', 'order', 'x'), { timeoutMs: 5000, description: "a has heard of b's decline" });
  // a does not offer type x to b again (no offer crosses the mesh), but still offers it other types
  const offers = async () => {
    const m = await a.node.metrics.registry.getSingleMetricAsString('dexzd_mesh_messages_total');
    return Number(/message="offer_batch"} (\d+)/.exec(m)?.[1] ?? 0) + Number(/message="offer"} (\d+)/.exec(m)?.[1] ?? 0);
  };
  const before = await offers();
  await a.matching.enqueueStep({ step: ownedByA('x', 2) });
  await expect(w.nextOf('step_task', 400)).rejects.toThrow(/no frame/);
  expect(await offers()).toBe(before);
  const y = await a.matching.enqueueStep({ step: ownedByA('y', 3) });
  expect((await w.nextOf('step_task')).step_task!.task_id).toBe(y.task_id);
});

describe('clocks that disagree', () => {
  let owner: TestNode;
  let late: TestNode;
  beforeEach(async () => {
    const prefix = uniquePrefix('skew');
    const config = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1500ms', 'cluster.leaseTtl': '1500ms' };
    [owner, late] = await Promise.all([
      startTestNode(redis.url, prefix, { ...config, 'cluster.nodeId': 'n-owner' }),
      // this node's clock runs 300 ms behind the owner's
      startTestNode(redis.url, prefix, { ...config, 'cluster.nodeId': 'n-late' }, { clock: { now: () => Date.now() - 300 } }),
    ]);
    const partitions = owner.config.cluster.partitions;
    await waitFor(() => owner.node.leases.heldPartitions().length === partitions / 2 && late.node.leases.heldPartitions().length === partitions / 2,
      { timeoutMs: 30_000, description: 'each node holds its half of the partitions' });
  });
  afterEach(() => Promise.all([owner.close(), late.close()]));

  it("starts a delayed Step the owner finds ready on a node whose clock is behind", async () => {
    const w = await slotAt(late, 'w-late');
    await seesWorker(owner, 'w-late');
    let step;
    for (let i = 0; ; i++) {
      const flow_id = `k${i}`;
      if (owner.node.leases.holds(partitionOf('acme', flow_id, owner.config.cluster.partitions))) {
        step = { tenant: 'acme', flow_id, flow_type: 'order', step_type: 'charge', step_execution_id: 's', ready_at_ms: Date.now() + 400 };
        break;
      }
    }
    const r = await owner.matching.enqueueStep({ step });
    // offered at the owner's readyAt; the late node must not refuse it as not ready yet
    // (it was found again only by the 5-s backlog count before)
    const task = (await w.nextOf('step_task', 2000)).step_task!;
    expect(task.task_id).toBe(r.task_id);
  });
});

it("offers a Step again when the other node's slot could not take it, and the worker that gets it runs the same attempt", async () => {
  // Guards the owner's handling of a peer's no-slot answer (registry.ts settle): the head goes back to the
  // front of its queue and is offered again once capacity shows, with the attempt not spent.
  const ghost = b.node.gateway.register({
    tenant: 'acme', appWorkerId: 'ghost', flowTypes: ['order'], kind: 'STEP_AND_RPC', taskLimit: 1, sdk: 'test',
    acceptsTaskAfterAck: false, acceptsTaskInAck: false,
  });
  ghost.out.close(); // its stream is gone: b's write of an offered task fails
  await seesWorker(a, 'ghost');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === b.node.nodeId, { timeoutMs: 5000, description: "a sees b's idle slot" });
  let flowId = '';
  for (let i = 0; !flowId; i++) if (a.node.leases.holds(partitionOf('acme', `nb${i}`, a.config.cluster.partitions))) flowId = `nb${i}`;
  const noSlot = async () => (await a.node.metrics.registry.getSingleMetric('dexzd_matching_offers_total')!.get())
    .values.find((v) => v.labels.result === 'no-slot')?.value ?? 0;
  const before = await noSlot();
  const r = await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  await waitFor(async () => (await noSlot()) > before, { timeoutMs: 5000, description: "b's no-slot answer reaches a" });
  expect((await a.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
  await b.node.gateway.unregister(ghost, true);

  const w = await slotAt(b, 'w-b');
  const task = (await w.nextOf('step_task', 5000)).step_task!;
  expect(task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  w.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await w.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
});

/** A flow whose partition node `owner` holds. */
function flowOwnedBy(owner: TestNode, prefix: string): string {
  const partitions = owner.config.cluster.partitions;
  for (let i = 0; ; i++) if (owner.node.leases.holds(partitionOf('acme', `${prefix}${i}`, partitions)) !== undefined) return `${prefix}${i}`;
}

/** Makes `node` drop the doorbells of `kind` it would send its peers, as a broken link does. */
function dropBells(node: TestNode, kind: pb.DoorbellEvent.Kind): void {
  const mesh = node.node.mesh as unknown as { ring: (peer: string, e: pb.IDoorbellEvent) => void };
  const real = mesh.ring.bind(mesh);
  mesh.ring = (peer, e) => {
    if (e.kind !== kind) real(peer, e);
  };
}

it("times out an attempt on the other node's worker whose start notice to the owner was lost", async () => {
  dropBells(b, pb.DoorbellEvent.Kind.ATTEMPT);
  const w = await slotAt(b, 'w-b');
  const flow = flowOwnedBy(a, 'lost-attempt-');
  const r = await b.matching.enqueueStep({ step: {
    tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's',
    heartbeat_timeout_ms: 300, retry_policy: { max_attempts: 3, initial_interval_ms: 50 },
  } });
  expect((await w.nextOf('step_task')).step_task!.attempt).toBe(1);
  // Silent worker: the owner, which never heard of the attempt, finds it in Redis (backlog count, every 5 s).
  const w2 = await slotAt(b, 'w-b2');
  expect((await w2.nextOf('step_task', 8000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 2 });
}, 15_000);

it('times out a Step enqueued on the other node whose flow deadline notice to the owner was lost', async () => {
  dropBells(b, pb.DoorbellEvent.Kind.FLOW_DEADLINE);
  const flow = flowOwnedBy(a, 'lost-deadline-');
  const r = await b.matching.enqueueStep({ step: {
    tenant: 'acme', flow_id: flow, flow_type: 'nobody', step_type: 'x', step_execution_id: 's', flow_deadline_ms: Date.now() + 300,
  } });
  const outcome = (await a.matching.waitOutcome({ task_id: r.task_id, wait_ms: 8000 })).outcome;
  expect(outcome?.status).toBe(pb.OutcomeStatus.TIMED_OUT);
}, 15_000);

it('runs an InvokeRpc on a busy worker that has the name, not NOT_FOUND for the peer whose idle worker declined it', async () => {
  // RPC-only: the Step below must go to w-a, whichever node owns it.
  const wb = await slotAt(b, 'w-b', { slot_kind: pb.SlotKind.RPC_ONLY });
  // w-b lacks the name: the only worker anywhere, so NOT_FOUND is right this once.
  const first = b.matching.invokeRpc({ tenant: 'acme', flow_id: 'r0', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 2000 })
    .catch((e: ClientError) => e.code);
  wb.send({ decline: { task_token: (await wb.nextOf('rpc_task')).rpc_task!.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  expect(await first).toBe(Status.NOT_FOUND);
  // w-a has it, and is busy with a Step when the call comes.
  const wa = await slotAt(a, 'w-a');
  await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  const step = (await wa.nextOf('step_task')).step_task!;
  await waitFor(() => a.node.view.presence('acme', 'w-b', 'order', 'status') === 'absent' && a.node.view.idleNodeFor('acme', 'order') === 'n-b',
    { timeoutMs: 5000, description: "a sees b's idle slot and its decline" });
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'r1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 5000 });
  await new Promise((r) => setTimeout(r, 300));
  wa.send({ step_result: { task_token: step.task_token, output: Buffer.from('ok') } });
  await wa.nextOf('result_ack');
  const task = (await wa.nextOf('rpc_task', 3000)).rpc_task!;
  wa.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-a') } });
  expect((await call).app_worker_id).toBe('w-a');
});

it("runs an InvokeRpc on a peer's idle worker although this node's member list lacks the peer for a moment", async () => {
  const remote = await slotAt(b, 'w-b');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === b.node.nodeId, { timeoutMs: 5000, description: "a sees b's idle slot" });
  // What a stalled event loop leaves behind (b's heartbeat read late, b's entry expired here), or a
  // peer whose capacity arrived before its first heartbeat was read: a's members lack b.
  (a.node.membership as unknown as { members: Map<string, unknown> }).members.delete(b.node.nodeId);
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'r9', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
  const task = (await remote.nextOf('rpc_task', 2000)).rpc_task!;
  remote.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from b') } });
  expect((await call).app_worker_id).toBe('w-b');
});

it("sends an InvokeRpc arriving at a draining node to wait at a peer's busy worker, not for its own leaving ones", async () => {
  const wa = await slotAt(a, 'w-a');
  await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy-a', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  const stepA = (await wa.nextOf('step_task', 10_000)).step_task!;
  const wb = await slotAt(b, 'w-b');
  await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy-b', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  const stepB = (await wb.nextOf('step_task', 10_000)).step_task!;
  await seesWorker(a, 'w-b');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === undefined, { timeoutMs: 5000, description: 'a sees w-b busy' });
  const drained = a.node.drain(); // waits for w-a's Step
  await wa.nextOf('reconnect', 10_000);
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'r-drain', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 20_000 });
  await waitFor(() => b.node.gateway.rpcsWaiting === 1, { timeoutMs: 10_000, description: 'the call waits at b' });
  await new Promise((r) => setTimeout(r, 300)); // and stays there: a's own worker is leaving
  expect([a.node.gateway.rpcsWaiting, b.node.gateway.rpcsWaiting]).toEqual([0, 1]);
  wb.send({ step_result: { task_token: stepB.task_token, output: Buffer.from('ok') } });
  await wb.nextOf('result_ack', 10_000);
  const task = (await wb.nextOf('rpc_task', 10_000)).rpc_task!;
  wb.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-b') } });
  expect((await call).app_worker_id).toBe('w-b');
  wa.send({ step_result: { task_token: stepA.task_token, output: Buffer.from('ok') } });
  await drained;
}, 60_000);

it("does not count a peer's RPC-only worker as one that can run the flow type's Steps", async () => {
  // Guards the RPC-only slots in the capacity view: a peer's worker of the flow type counted
  // whatever its slots ran, so queued Steps no worker could run showed as served
  // (dexzd_matching_unserved_task_queues stayed 0) and new Steps queued behind them.
  const rpcOnly = await slotAt(b, 'w-rpc', { slot_kind: pb.SlotKind.RPC_ONLY });
  await seesWorker(a, 'w-rpc');
  expect(a.node.view.canServe('acme', 'order', 'charge')).toBe(false);
  expect(a.node.view.nodesFor('acme', 'order')).toEqual([b.node.nodeId]); // counted as no_supporting_worker, not no_worker

  const steps = await slotAt(b, 'w-steps');
  await waitFor(() => a.node.view.canServe('acme', 'order', 'charge'), { timeoutMs: 5000, description: "a sees b's Step worker" });
  rpcOnly.reset();
  steps.reset();
});

it("hears a peer's capacity snapshot larger than a payload: many workers of many long flow types", async () => {
  // Guards the mesh's message limit: held to limits.maxPayloadBytes, a 1.3 MB snapshot (ten
  // workers of 256 long flow types, within the limits) was refused on every send, and the
  // peer never learned of any of the workers.
  const flowTypes = Array.from({ length: 256 }, (_, i) => `${'f'.repeat(240)}-${String(i).padStart(5, '0')}`);
  for (let w = 0; w < 10; w++) await slotAt(b, `many-${w}`, { flow_types: flowTypes });
  await seesWorker(a, 'many-9');
});

it('runs nothing for an RPC whose caller left before it reached the gateway', async () => {
  // Guards an already-aborted signal: its abort event never fires, and the call went to an
  // idle worker that ran it with nobody waiting for the answer.
  const w = await slotAt(a, 'w-a');
  const settled = await a.node.routing.invokeRpc({
    tenant: 'acme', flowId: 'f', flowType: 'order', rpcName: 'x', input: Buffer.from('q'), sticky: '', waitMs: 2000, runMs: 5000,
  }, AbortSignal.abort());
  expect(settled).toMatchObject({ kind: 'unavailable' });
  await expect(w.nextOf('rpc_task', 500)).rejects.toThrow(/no frame/);
});
