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
import { PeerUnreachableError } from '../../../src/cluster/mesh';
import type { RpcCall, RpcSettlement } from '../../../src/gateway/slot';
import { Routing, type RpcRequest } from '../../../src/node/routing';
import { rpcDeclineType } from '../../../src/wire';

function setup() {
  const local = {
    presence: 'absent', idleRpc: false, connected: false, draining: false, notFound: false,
    settlement: undefined as RpcSettlement | undefined, pinned: [] as boolean[],
  };
  const now = { ms: 1_000 };
  const went: { node: string; waitMs: number; runMs: number; sticky?: string }[] = [];
  /** Peers whose workers answer NOT_FOUND. */
  const lacking = new Set<string>();
  /** Peers the mesh has no connection to. */
  const unreachable = new Set<string>();
  /** What peers' workers answer, when not the default output. */
  const answers = new Map<string, object>();
  /** Calls handed back to wait here again. */
  const back: RpcCall[] = [];
  /** What a peer's snapshot offers to move: RPCs waiting here in their sticky window. */
  const moves: { sticky: RpcCall[]; moved: boolean[] } = { sticky: [], moved: [] };
  const gateway = {
    moveStickyRpcs: (_t: string, _w: string, _max: number, run: (call: RpcCall) => boolean) => {
      for (const c of moves.sticky) moves.moved.push(run(c));
      return 0;
    },
    moveWaitingRpcs: () => 0,
    rpcBack: (c: RpcCall) => back.push(c),
    presence: () => local.presence,
    hasIdleRpcSlot: () => local.idleRpc,
    hasConnected: () => local.connected,
    get isDraining() { return local.draining; },
    invokeRpc: (c: { deadline: number; runDeadline: number; pinned: boolean }) => {
      went.push({ node: 'me', waitMs: c.deadline - now.ms, runMs: c.runDeadline - now.ms });
      local.pinned.push(c.pinned);
      if (local.settlement) return Promise.resolve(local.settlement);
      return Promise.resolve(local.notFound ? { kind: 'not-found' } : { kind: 'result', output: Buffer.from('ok'), appWorkerId: 'here' });
    },
  };
  const mesh = {
    sendSnapshotTo: () => undefined,
    ring: () => undefined,
    invokeRpc: (node: string, req: { timeout_ms: number; sticky_worker_id: string }, _signal: AbortSignal, waitMs: number) => {
      went.push({ node, waitMs, runMs: req.timeout_ms, ...(req.sticky_worker_id ? { sticky: req.sticky_worker_id } : {}) });
      now.ms += 300; // it waited there
      if (unreachable.has(node)) return Promise.reject(new PeerUnreachableError(`no connection to ${node}`));
      if (lacking.has(node)) return Promise.reject(new ClientError('/zd.Peer/InvokeRpc', Status.NOT_FOUND, 'no such RPC'));
      return Promise.resolve(answers.get(node) ?? { output: Buffer.from('ok'), app_worker_id: node });
    },
  };
  const view = new CapacityView();
  const unused = {} as never;
  const r = new Routing('me', 4, unused, { liveIds: () => ['me'] } as never, unused, gateway as never, mesh as never, view,
    unused, unused, { now: () => now.ms } as never, unused, unused, { dispatchWaitMs: 2_000, maxRunMs: 60_000 });
  return { r, view, local, went, lacking, unreachable, answers, back, moves, now };
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

it('runs a sticky call on its worker\'s idle slot here before one of the same worker at a peer', async () => {
  const s = setup();
  s.local.presence = 'idle';
  s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
  await s.r.invokeRpc(call({ sticky: 'x' }), signal);
  expect(s.went.map((w) => w.node)).toEqual(['me']);
});

it('tries the next node when a peer cannot be reached, a busy worker here first, even with the window spent', async () => {
  const s = setup();
  s.local.connected = true;
  s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
  s.unreachable.add('a');
  const res = await s.r.invokeRpc(call({ waitMs: 200 }), signal);
  expect(res).toMatchObject({ kind: 'result', appWorkerId: 'here' });
  expect(s.went).toEqual([{ node: 'a', waitMs: 200, runMs: 5_000 }, { node: 'me', waitMs: 0, runMs: 4_700 }]);
});

it('ends the search when the caller went away, saying so, with nodes still left', async () => {
  const s = setup();
  s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
  s.view.apply(snap('b', [worker('y')]));
  s.unreachable.add('a');
  const gone = new AbortController();
  gone.abort();
  expect(await s.r.invokeRpc(call(), gone.signal)).toEqual({ kind: 'unavailable', reason: 'the caller went away' });
  expect(s.went.map((w) => w.node)).toEqual(['a']);
});

it('passes a peer worker\'s failure on as a failure, its non-retryable flag kept', async () => {
  const s = setup();
  s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
  s.answers.set('a', { output: Buffer.alloc(0), failure: { message: 'no', type: 'Bad', non_retryable: true }, app_worker_id: 'x' });
  expect(await s.r.invokeRpc(call(), signal)).toEqual({
    kind: 'result', appWorkerId: 'x', failure: { message: 'no', type: 'Bad', nonRetryable: true },
  });
});

describe('a call a peer sent here', () => {
  const req = (over: Record<string, unknown> = {}) => ({
    tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'quote', input: new Uint8Array(), sticky_worker_id: '', timeout_ms: 5_000, ...over,
  }) as never;

  it('waits for our slots only, never past its own budget, and answers a failure or UNAVAILABLE as such', async () => {
    const s = setup();
    await s.r.serveRpc(req({ timeout_ms: 500 }), signal);
    expect(s.went).toEqual([{ node: 'me', waitMs: 500, runMs: 500 }]);
    expect(s.local.pinned).toEqual([true]);
    s.local.settlement = { kind: 'result', appWorkerId: 'w', failure: { message: 'boom', type: 'E', nonRetryable: true } };
    expect(await s.r.serveRpc(req(), signal)).toEqual({ failure: { message: 'boom', type: 'E', non_retryable: true }, app_worker_id: 'w' });
    s.local.settlement = { kind: 'unavailable', reason: 'no worker' };
    await expect(s.r.serveRpc(req(), signal)).rejects.toThrow(/no worker/);
  });
});

describe('a call waiting here that a peer\'s idle slot may take', () => {
  function waiting(s: ReturnType<typeof setup>, over: Partial<RpcCall> = {}) {
    const settled: RpcSettlement[] = [];
    const c = {
      token: 't', tenant: 'acme', flowId: 'f', flowType: 'order', rpcName: 'quote', input: Buffer.alloc(0), sticky: '',
      stickyUntil: 0, arrivedAt: s.now.ms - 100, deadline: s.now.ms + 500, runDeadline: s.now.ms + 4_000, signal,
      settle: (r: RpcSettlement) => settled.push(r), settled: false, ...over,
    } as RpcCall;
    return { c, settled };
  }
  const flush = () => new Promise((r) => setImmediate(r));

  it('ends here, not at the peer, when its window or its budget ran out before the move', async () => {
    const s = setup();
    s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 2, busy_slots: 0 })]));
    const late = waiting(s, { deadline: s.now.ms });
    expect(s.r.rpcToIdlePeer(late.c)).toBe(true);
    const spent = waiting(s, { runDeadline: s.now.ms });
    expect(s.r.rpcToIdlePeer(spent.c)).toBe(true);
    expect(late.settled).toEqual([{ kind: 'unavailable', reason: 'no worker took it within 100 ms' }]);
    expect(spent.settled).toHaveLength(1);
    expect(s.went).toEqual([]);
  });

  it('comes back to wait here, that peer skipped from then on, when the peer\'s workers lack the name', async () => {
    const s = setup();
    s.view.apply(snap('a', [worker('x', { idle_rpc_slots: 2, busy_slots: 0 })]));
    s.lacking.add('a');
    const w = waiting(s);
    expect(s.r.rpcToIdlePeer(w.c)).toBe(true);
    await flush();
    expect(s.went).toEqual([{ node: 'a', waitMs: 500, runMs: 4_000 }]);
    expect(w.settled).toEqual([]);
    expect(s.back).toEqual([w.c]);
    expect(s.r.rpcToIdlePeer(w.c)).toBe(false);
  });

  it('is not handed to this node itself', () => {
    const s = setup();
    s.view.apply(snap('me', [worker('x', { idle_rpc_slots: 1, busy_slots: 0 })]));
    expect(s.r.rpcToIdlePeer(waiting(s).c)).toBe(false);
  });

  it('in its sticky window runs on the peer where its worker went idle, as sticky there, unless that peer was skipped', async () => {
    const s = setup();
    const free = waiting(s, { sticky: 'x' });
    const skipped = waiting(s, { sticky: 'x', skipPeers: new Set(['a']) });
    s.moves.sticky.push(free.c, skipped.c);
    s.r.onCapacity(snap('a', [worker('x', { idle_rpc_slots: 2, busy_slots: 0 })]));
    await flush();
    expect(s.moves.moved).toEqual([true, false]);
    expect(s.went).toEqual([{ node: 'a', waitMs: 500, runMs: 4_000, sticky: 'x' }]);
    s.moves.moved.length = 0;
    s.r.onCapacity(snap('me', [worker('x', { idle_rpc_slots: 2, busy_slots: 0 })]));
    expect(s.moves.moved).toEqual([false, false]);
  });
});
