/**
 * Which idle slot an RPC takes (DESIGN §4, §5): RPC-only slots before shared
 * ones, so the shared slot stays free for a Step (Steps never use RPC-only
 * slots); the sticky worker still comes first. A freed slot serves a waiting
 * RPC before waiting Steps; an RPC whose stream half-closes unanswered runs on
 * another slot. Raw streams, real gRPC, real redis-server.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
const open: RawSlot[] = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('rpc-slot'), { 'matching.dispatchWait': '5s', 'matching.stickyWait': '5s' });
});
afterEach(async () => {
  for (const s of open.splice(0)) s.reset();
  await t.close();
});

async function slot(app: string, kind: pb.SlotKind): Promise<RawSlot> {
  const s = openSlot(t.worker, registerFrame({ app_worker_id: app, slot_kind: kind }));
  open.push(s);
  await s.nextOf('registered');
  return s;
}

const rpc = (over: Partial<pb.IInvokeRpcRequest> = {}) =>
  t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 10_000, ...over });

/** The one of `slots` that receives the next frame of `kind`, and that frame (frames of no slot are lost: a timed-out wait leaves its queue). */
async function frameFrom(slots: RawSlot[], kind: string): Promise<[RawSlot, pb.ServerFrame]> {
  for (let round = 0; round < 50; round++) {
    for (const s of slots) {
      const f = await s.nextOf(kind, 100).catch(() => undefined);
      if (f) return [s, f];
    }
  }
  throw new Error(`no slot received a ${kind}`);
}

/** Steps in their sticky or sync-match phase and RPCs waiting for a slot (dexzd_matching_queued_tasks). */
async function queuedInMemory(): Promise<number> {
  const m = await t.node.metrics.registry.getSingleMetric('dexzd_matching_queued_tasks')!.get();
  return Number(m.values[0]?.value ?? 0);
}

async function answer(s: RawSlot, task: pb.IRpcTask, output: string): Promise<void> {
  s.send({ rpc_result: { task_token: task.task_token, output: Buffer.from(output) } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
}

it('runs an RPC on the worker\'s idle RPC-only slot, not its shared one, which a Step then takes while the RPC runs', async () => {
  // The shared slot registers first: it would be the first idle slot found without the preference.
  const shared = await slot('A', pb.SlotKind.STEP_AND_RPC);
  const rpcOnly = await slot('A', pb.SlotKind.RPC_ONLY);
  const call = rpc();
  const [took, frame] = await frameFrom([shared, rpcOnly], 'rpc_task');
  expect(took === rpcOnly ? 'rpc-only' : 'shared').toBe('rpc-only');
  // The RPC still runs: the shared slot is free for a Step at once.
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f2', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' } });
  const step = (await shared.nextOf('step_task')).step_task!;
  expect(step.flow_id).toBe('f2');
  await answer(rpcOnly, frame.rpc_task!, 'fine');
  expect(Buffer.from((await call).output!).toString()).toBe('fine');
});

it('runs an RPC on another worker\'s idle RPC-only slot before an idle shared one', async () => {
  const shared = await slot('A', pb.SlotKind.STEP_AND_RPC);
  const rpcOnly = await slot('B', pb.SlotKind.RPC_ONLY);
  const call = rpc();
  const [took, frame] = await frameFrom([shared, rpcOnly], 'rpc_task');
  expect(took === rpcOnly ? 'rpc-only' : 'shared').toBe('rpc-only');
  await answer(rpcOnly, frame.rpc_task!, 'b');
  expect((await call).app_worker_id).toBe('B');
});

it('runs a sticky RPC on its sticky worker\'s RPC-only slot before its shared one, and on neither of another worker\'s', async () => {
  const otherRpcOnly = await slot('B', pb.SlotKind.RPC_ONLY);
  const shared = await slot('A', pb.SlotKind.STEP_AND_RPC);
  const rpcOnly = await slot('A', pb.SlotKind.RPC_ONLY);
  const call = rpc({ sticky_worker_id: 'A' });
  const [took, frame] = await frameFrom([otherRpcOnly, shared, rpcOnly], 'rpc_task');
  expect(took === rpcOnly ? 'A rpc-only' : took === shared ? 'A shared' : 'B rpc-only').toBe('A rpc-only');
  await answer(rpcOnly, frame.rpc_task!, 'a');
  expect((await call).app_worker_id).toBe('A');
});

it('runs an RPC on a shared slot while the RPC-only slot is busy', async () => {
  const shared = await slot('A', pb.SlotKind.STEP_AND_RPC);
  const rpcOnly = await slot('A', pb.SlotKind.RPC_ONLY);
  const first = rpc({ flow_id: 'f1' });
  const one = (await rpcOnly.nextOf('rpc_task')).rpc_task!;
  const second = rpc({ flow_id: 'f2' });
  const two = (await shared.nextOf('rpc_task')).rpc_task!;
  expect(two.flow_id).toBe('f2');
  await answer(shared, two, '2');
  await answer(rpcOnly, one, '1');
  expect(Buffer.from((await first).output!).toString()).toBe('1');
  expect(Buffer.from((await second).output!).toString()).toBe('2');
});

it('drops a waiting call whose caller went away: it leaves the waiting RPCs, and the slot that frees runs the next Step instead', async () => {
  const shared = await slot('A', pb.SlotKind.STEP_AND_RPC);
  const step = (id: string) => t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: id, flow_type: 'order', step_type: 'charge', step_execution_id: id } });
  await step('busy');
  const busy = (await shared.nextOf('step_task')).step_task!;
  const caller = new AbortController();
  const call = t.matching.invokeRpc(
    { tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 10_000 }, { signal: caller.signal },
  ).catch((e: unknown) => e);
  await waitFor(() => t.node.gateway.rpcsWaiting === 1, { timeoutMs: 5000, description: 'the call waits for the busy slot' });
  caller.abort();
  await call;
  await waitFor(() => t.node.gateway.rpcsWaiting === 0, { timeoutMs: 5000, description: 'the abandoned call leaves the waiting RPCs' });
  await step('next');
  shared.send({ step_result: { task_token: busy.task_token, output: Buffer.from('ok') } });
  expect((await shared.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  // nextOf fails on any other frame first: an rpc_task here would be the abandoned call run.
  expect((await shared.nextOf('step_task')).step_task!.flow_id).toBe('next');
});

it('gives a freed shared slot to the waiting RPC before a Step waiting in memory for it, then runs the Step there', async () => {
  const shared = await slot('A', pb.SlotKind.STEP_AND_RPC);
  const step = (id: string, over: Partial<pb.IStepSpec> = {}) =>
    t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: id, flow_type: 'order', step_type: 'charge', step_execution_id: id, ...over } });
  await step('busy');
  const busy = (await shared.nextOf('step_task')).step_task!;
  // A Step for A as its sticky worker: it waits in memory (matching.stickyWait, 5 s here) while A is busy,
  // and would take A's slot at once were Steps served first.
  await step('sticky', { sticky_worker_id: 'A' });
  const call = rpc();
  await waitFor(async () => t.node.gateway.rpcsWaiting === 1 && await queuedInMemory() === 2,
    { timeoutMs: 5000, description: 'the RPC and the sticky Step both waiting for the busy slot' });
  shared.send({ step_result: { task_token: busy.task_token, output: Buffer.from('ok') } });
  expect((await shared.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  // nextOf fails on any other frame first: a step_task here would be the Step served before the RPC.
  const task = (await shared.nextOf('rpc_task')).rpc_task!;
  await answer(shared, task, 'first');
  expect(Buffer.from((await call).output!).toString()).toBe('first');
  expect((await shared.nextOf('step_task')).step_task!.flow_id).toBe('sticky');
});

it('runs an RPC whose worker half-closes its stream without answering on another worker\'s slot, not UNAVAILABLE', async () => {
  const a = await slot('A', pb.SlotKind.RPC_ONLY);
  const b = await slot('B', pb.SlotKind.RPC_ONLY);
  const call = rpc({ input: Buffer.from('same input') });
  const [took, first] = await frameFrom([a, b], 'rpc_task');
  const other = took === a ? b : a;
  // A graceful half-close (the SDK's stop()) with no result: the worker did not run it (DESIGN §6).
  took.halfClose();
  const again = (await other.nextOf('rpc_task')).rpc_task!;
  expect(again.flow_id).toBe(first.rpc_task!.flow_id);
  expect(Buffer.from(again.input!).toString()).toBe('same input');
  await answer(other, again, 'from the other');
  const r = await call;
  expect(Buffer.from(r.output!).toString()).toBe('from the other');
  expect(r.app_worker_id).toBe(other === a ? 'A' : 'B');
});
