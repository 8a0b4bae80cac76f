/**
 * An RPC waiting at one node for a busy slot runs on the first idle slot of its
 * flow type in the cluster (DESIGN §4: a node with an idle slot), not only on
 * one of the node it waits at: a peer's slot that goes idle later takes it.
 * Two nodes in this process, real gRPC and a real redis-server.
 */
import { useEmbeddedRedis } from '../helpers/redis';
import { useNodePair } from '../helpers/node-pair';
import { pb } from '../../src/wire';
import type { RawSlot } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';
import { partitionOf } from '../../src/store/keys';

const redis = useEmbeddedRedis();
const pair = useNodePair(redis, 'rpcmove', { 'matching.dispatchWait': '4000ms', 'matching.stickyWait': '3000ms' });
const slotAt = pair.slotAt;
const step = (flow: string) => ({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });

/** A slot of `aWorker` at a and one of `bWorker` at b, each holding a Step, once a sees b's slot busy. */
async function busyAtBoth(aWorker: string, bWorker: string) {
  const { a, b } = pair;
  const wa = await slotAt(a, aWorker);
  await a.matching.enqueueStep(step('busy-a'));
  const aHeld = (await wa.nextOf('step_task')).step_task!;
  const wb = await slotAt(b, bWorker);
  await a.matching.enqueueStep(step('busy-b'));
  const bHeld = (await wb.nextOf('step_task')).step_task!;
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === undefined, { timeoutMs: 5000, description: "a sees b's slot busy" });
  return { a, b, wa, wb, aHeld, bHeld };
}

/** The slot's Step ends: its slot is idle once the ack is read. */
async function finish(slot: Awaited<ReturnType<typeof slotAt>>, held: pb.IStepTask): Promise<void> {
  slot.send({ step_result: { task_token: held.task_token, output: Buffer.from('done') } });
  await slot.nextOf('result_ack');
}

it('moves an RPC waiting for a busy slot to a peer\'s slot that goes idle later', async () => {
  const { a, wb, bHeld: held } = await busyAtBoth('w-a', 'w-b'); // w-a stays busy throughout

  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 6000 });
  await waitFor(() => a.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'it waits at a, whose worker is busy' });

  await finish(wb, held);
  const task = (await wb.nextOf('rpc_task', 2000)).rpc_task!;
  expect(a.node.gateway.rpcsWaiting).toBe(0);
  wb.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-b') } });
  const r = await call;
  expect(r.app_worker_id).toBe('w-b');
  expect(Buffer.from(r.output!).toString()).toBe('from w-b');
});

it('keeps a waiting RPC in its sticky window at its node while its sticky worker there is busy', async () => {
  const { a, wa, wb, aHeld, bHeld } = await busyAtBoth('w-a', 'w-b');

  const call = a.matching.invokeRpc({
    tenant: 'acme', flow_id: 'f2', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 6000, sticky_worker_id: 'w-a',
  });
  await waitFor(() => a.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'the call waiting at a' });
  await finish(wb, bHeld);
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === 'n-b', { timeoutMs: 5000, description: "a sees b's idle slot" });
  expect(a.node.gateway.rpcsWaiting).toBe(1); // matching.stickyWait (3 s) has not passed: w-a's, still

  await finish(wa, aHeld);
  const task = (await wa.nextOf('rpc_task', 2000)).rpc_task!;
  wa.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-a') } });
  expect((await call).app_worker_id).toBe('w-a');
});

it('brings a moved RPC back to wait for its node\'s busy worker when the peer\'s idle worker lacks the name', async () => {
  // Guards: the peer's NOT_FOUND settled the call although w-a here, busy, has the RPC;
  // the view could not know w-b lacks "status" before w-b first declined it.
  const { a, wa, wb, aHeld, bHeld } = await busyAtBoth('w-a', 'w-b');

  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'f3', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 6000 });
  await waitFor(() => a.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'the call waiting at a' });
  await finish(wb, bHeld);
  const moved = (await wb.nextOf('rpc_task', 2000)).rpc_task!;
  wb.send({ decline: { task_token: moved.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  await waitFor(() => a.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'the call back at a' });

  await finish(wa, aHeld);
  const task = (await wa.nextOf('rpc_task', 2000)).rpc_task!;
  wa.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-a') } });
  const r = await call;
  expect(r.app_worker_id).toBe('w-a');
  expect(Buffer.from(r.output!).toString()).toBe('from w-a');
});

/** w-a busy with a Step at a, w-b idle at b, and a's view of b saying so. */
async function busyHereIdleThere(): Promise<{ wa: RawSlot; aHeld: pb.IStepTask; wb: RawSlot }> {
  const { a } = pair;
  const wa = await slotAt(a, 'w-a');
  await a.matching.enqueueStep(step('busy-a'));
  const aHeld = (await wa.nextOf('step_task')).step_task!;
  const wb = await slotAt(pair.b, 'w-b');
  await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === 'n-b', { timeoutMs: 5000, description: 'a sees w-b idle at b' });
  return { wa, aHeld, wb };
}

it('sends a peer no more RPCs at once than it has idle slots: the rest wait here, and a slot freed here takes them', async () => {
  // Guards: every call of a burst went to the one idle slot a peer's snapshot named, until
  // its next snapshot said it was busy; the calls past it waited there, pinned, for that
  // slot alone, and ended UNAVAILABLE though w-a here went idle long before.
  const { a } = pair;
  const { wa, aHeld, wb } = await busyHereIdleThere();

  const rpc = (flow: string) => a.matching.invokeRpc({ tenant: 'acme', flow_id: flow, flow_type: 'order', rpc_name: 'status', input: Buffer.from(flow), timeout_ms: 6000 });
  const calls = [rpc('f6'), rpc('f7')];
  const atB = (await wb.nextOf('rpc_task', 2000)).rpc_task!;
  await waitFor(() => a.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'the other call waiting at a' });
  await finish(wa, aHeld);
  const atA = (await wa.nextOf('rpc_task', 2000)).rpc_task!;
  wa.send({ rpc_result: { task_token: atA.task_token, output: Buffer.from('from w-a') } });
  wb.send({ rpc_result: { task_token: atB.task_token, output: Buffer.from('from w-b') } });
  const answered = await Promise.all(calls);
  expect(answered.map((r) => r.app_worker_id).sort()).toEqual(['w-a', 'w-b']);
});

it("sends no RPC to a peer's idle slot this node's owner just offered a Step: the RPC waits here, and a slot freed here takes it", async () => {
  // Guards: an offered Step counted against the peer's idle slots for Steps only; an RPC
  // that came before the peer's next snapshot went to the slot the Step took, and waited
  // there, pinned, though w-a here went idle first.
  const { a } = pair;
  const { wa, aHeld, wb } = await busyHereIdleThere();
  // a Step of a partition a owns: a's owner offers it to w-b
  let flow = 'owned-0';
  for (let i = 1; !a.node.leases.holds(partitionOf('acme', flow, a.config.cluster.partitions)); i++) flow = `owned-${i}`;

  await a.matching.enqueueStep(step(flow));
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'f8', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 6000 });
  expect((await wb.nextOf('step_task', 2000)).step_task!.flow_id).toBe(flow);
  await waitFor(() => a.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'the call waiting at a' });
  await finish(wa, aHeld);
  const task = (await wa.nextOf('rpc_task', 2000)).rpc_task!;
  wa.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-a') } });
  expect((await call).app_worker_id).toBe('w-a');
});

describe('a sticky RPC whose worker is busy here but idle at a peer (its streams spread over nodes)', () => {
  // DESIGN §4: the sticky phase waits only while the worker is busy. Guards: the call waited
  // here for the whole sticky window (3 s) while the same worker had an idle slot at b.
  it('runs there at once when it arrives', async () => {
    const { a, b } = pair;
    const wa = await slotAt(a, 'w-s');
    await a.matching.enqueueStep(step('busy-a'));
    await wa.nextOf('step_task');
    const wb = await slotAt(b, 'w-s');
    await waitFor(() => a.node.view.idleNodeFor('acme', 'order') === 'n-b', { timeoutMs: 5000, description: "a sees w-s idle at b" });

    const started = Date.now();
    const call = a.matching.invokeRpc({
      tenant: 'acme', flow_id: 'f4', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 6000, sticky_worker_id: 'w-s',
    });
    const task = (await wb.nextOf('rpc_task', 1500)).rpc_task!;
    wb.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from b') } });
    expect((await call).app_worker_id).toBe('w-s');
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('moves there while it waits here, once the worker\'s slot there goes idle', async () => {
    const { a, wb, bHeld } = await busyAtBoth('w-s', 'w-s');

    const started = Date.now();
    const call = a.matching.invokeRpc({
      tenant: 'acme', flow_id: 'f5', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 6000, sticky_worker_id: 'w-s',
    });
    await waitFor(() => a.node.gateway.rpcsWaiting === 1, { timeoutMs: 2000, description: 'the call waiting at a' });
    await finish(wb, bHeld);
    const task = (await wb.nextOf('rpc_task', 1500)).rpc_task!;
    wb.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from b') } });
    expect((await call).app_worker_id).toBe('w-s');
    expect(Date.now() - started).toBeLessThan(2500); // inside the sticky window (3 s)
  });
});
