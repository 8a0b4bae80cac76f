/**
 * Which node an RPC runs on (src/node/routing.ts, DESIGN §4): the sticky
 * worker's idle slot wherever it is, else an idle slot here, else a peer's
 * idle slot, else a busy worker here; a node whose workers lack the name is
 * passed over, and each next node gets only what is left of the dispatch
 * window. A real CapacityView holds the peers' snapshots; this node's gateway
 * and the mesh are stand-ins that record where the call went.
 */
import { ClientError, Status } from 'nice-grpc';
import { CapacityView } from '../../../src/cluster/capacity-view';
import { Routing, type RpcRequest } from '../../../src/node/routing';
import { rpcDeclineType } from '../../../src/wire';

function setup() {
  const local = { presence: 'absent', idleRpc: false, connected: false, draining: false, notFound: false };
  const now = { ms: 1_000 };
  const went: { node: string; waitMs: number; runMs: number }[] = [];
  /** Peers whose workers answer NOT_FOUND. */
  const lacking = new Set<string>();
  const gateway = {
    presence: () => local.presence,
    hasIdleRpcSlot: () => local.idleRpc,
    hasConnected: () => local.connected,
    get isDraining() { return local.draining; },
    invokeRpc: (c: { deadline: number; runDeadline: number }) => {
      went.push({ node: 'me', waitMs: c.deadline - now.ms, runMs: c.runDeadline - now.ms });
      return Promise.resolve(local.notFound ? { kind: 'not-found' } : { kind: 'result', output: Buffer.from('ok'), appWorkerId: 'here' });
    },
  };
  const mesh = {
    invokeRpc: (node: string, req: { timeout_ms: number }, _signal: AbortSignal, waitMs: number) => {
      went.push({ node, waitMs, runMs: req.timeout_ms });
      now.ms += 300; // it waited there
      if (lacking.has(node)) return Promise.reject(new ClientError('/zd.Peer/InvokeRpc', Status.NOT_FOUND, 'no such RPC'));
      return Promise.resolve({ output: Buffer.from('ok'), app_worker_id: node });
    },
  };
  const view = new CapacityView();
  const unused = {} as never;
  const r = new Routing('me', 4, unused, { liveIds: () => ['me'] } as never, unused, gateway as never, mesh as never, view,
    unused, unused, { now: () => now.ms } as never, unused, unused, { dispatchWaitMs: 2_000, maxRunMs: 60_000 });
  return { r, view, local, went, lacking };
}

let seq = 0;
const worker = (app: string, over: Record<string, unknown> = {}) => ({
  tenant: 'acme', app_worker_id: app, flow_types: ['order'], step_flow_types: ['order'], idle_step_slots: 0, idle_rpc_slots: 0, busy_slots: 1, ...over,
});
const snap = (node: string, workers: ReturnType<typeof worker>[], declined: { app: string; name: string }[] = []) => ({
  node_id: node, seq: ++seq, entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 0 }], workers,
  declined: declined.map((d) => ({ tenant: 'acme', flow_type: 'order', type: rpcDeclineType(d.name), app_worker_id: d.app })),
  step_flow_types_advertised: true,
});
const call = (over: Partial<RpcRequest> = {}): RpcRequest => ({
  tenant: 'acme', flowId: 'f1', flowType: 'order', rpcName: 'quote', input: Buffer.alloc(0), sticky: '', waitMs: 1_000, runMs: 5_000, ...over,
});
const signal = new AbortController().signal;

it('runs a sticky call on its worker\'s idle slot at a peer before waiting for it busy here, and counts that slot taken', async () => {
  const s = setup();
  s.local.presence = 'busy';
  s.local.connected = true;
  s.view.apply(snap('a', [worker('w', { idle_rpc_slots: 1, busy_slots: 0 })]));
  await s.r.invokeRpc(call({ sticky: 'w' }), signal);
  await s.r.invokeRpc(call({ sticky: 'w' }), signal);
  expect(s.went.map((w) => w.node)).toEqual(['a', 'me']);
});

it('keeps a sticky call for its worker busy here rather than send it to a peer where that worker is busy too', async () => {
  const s = setup();
  s.local.presence = 'busy';
  s.local.connected = true;
  s.view.apply(snap('a', [worker('w')]));
  await s.r.invokeRpc(call({ sticky: 'w' }), signal);
  expect(s.went.map((w) => w.node)).toEqual(['me']);
});

it('sends a sticky call whose worker is not here to the peer holding it, unless it declined the name there', async () => {
  const s = setup();
  s.local.idleRpc = true;
  s.view.apply(snap('a', [worker('w')]));
  s.view.apply(snap('b', [worker('v')], [{ app: 'v', name: 'quote' }]));
  await s.r.invokeRpc(call({ sticky: 'w' }), signal);
  await s.r.invokeRpc(call({ sticky: 'v' }), signal);
  expect(s.went.map((w) => w.node)).toEqual(['a', 'me']);
});

it('prefers an idle slot here, then a peer\'s idle slot, then a busy worker here', async () => {
  const s = setup();
  s.local.idleRpc = true;
  s.local.connected = true;
  s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
  await s.r.invokeRpc(call(), signal);
  s.local.idleRpc = false;
  await s.r.invokeRpc(call(), signal);
  await s.r.invokeRpc(call(), signal); // a's one idle slot counts as taken
  expect(s.went.map((w) => w.node)).toEqual(['me', 'a', 'me']);
});

it('does not wait on a draining node\'s busy workers when a peer has workers of the flow type', async () => {
  const s = setup();
  s.local.connected = true;
  s.local.draining = true;
  s.view.apply(snap('a', [worker('x')]));
  await s.r.invokeRpc(call(), signal);
  expect(s.went.map((w) => w.node)).toEqual(['a']);
});

it('answers not-found at once when every peer worker of the flow type declined the name and none is here', async () => {
  const s = setup();
  s.view.apply(snap('a', [worker('x')], [{ app: 'x', name: 'quote' }]));
  expect(await s.r.invokeRpc(call(), signal)).toEqual({ kind: 'not-found' });
  expect(s.went).toEqual([]);
});

it('passes over a node whose workers lack the name, giving the next only what is left of both windows', async () => {
  const s = setup();
  s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
  s.view.apply(snap('b', [worker('y')]));
  s.lacking.add('a');
  const res = await s.r.invokeRpc(call(), signal);
  expect(res).toMatchObject({ kind: 'result', appWorkerId: 'b' });
  expect(s.went).toEqual([{ node: 'a', waitMs: 1_000, runMs: 5_000 }, { node: 'b', waitMs: 700, runMs: 4_700 }]);
});

it('ends the search once the caller\'s budget is spent', async () => {
  const s = setup();
  s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
  s.view.apply(snap('b', [worker('y')]));
  s.lacking.add('a');
  const res = await s.r.invokeRpc(call({ runMs: 300 }), signal);
  expect(res).toMatchObject({ kind: 'unavailable' });
  expect(s.went.map((w) => w.node)).toEqual(['a']);
});

it('looks for a worker for a call a peer sent here no longer than the window the peer left', async () => {
  const s = setup();
  await s.r.serveRpc({ tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'quote', input: new Uint8Array(), sticky_worker_id: '', timeout_ms: 5_000 } as never, signal, 400);
  await s.r.serveRpc({ tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'quote', input: new Uint8Array(), sticky_worker_id: '', timeout_ms: 0 } as never, signal);
  expect(s.went).toEqual([{ node: 'me', waitMs: 400, runMs: 5_000 }, { node: 'me', waitMs: 2_000, runMs: 60_000 }]);
});
