/**
 * The peers' advertised backlogs in the capacity view (CapacityUpdate
 * backlog_advertised, busy_queues, waiting_flows, backlog_loading): what lets
 * a node start a new Step at enqueue without cutting in front of Steps that
 * wait at another owner. Pure data: snapshots in, a decision out.
 */
import { CapacityView } from '../../../src/cluster/capacity-view';
import { rpcDeclineType } from '../../../src/wire';

const Q = 'acme:order:charge';
let seq = 0;
const snapshot = (node: string, backlog?: { busy?: string[]; waiting?: string[]; loading?: boolean }) => ({
  node_id: node, seq: ++seq, entries: [], workers: [], declined: [],
  ...(backlog ? { backlog_advertised: true, busy_queues: backlog.busy ?? [], waiting_flows: backlog.waiting ?? [], backlog_loading: backlog.loading ?? false } : {}),
});

it('allows a start at enqueue when no peer names the queue, its flow type, or a loading partition', () => {
  const v = new CapacityView();
  v.apply(snapshot('a', { busy: ['acme:order:other', 'beta:order:charge'], waiting: ['acme:invoice'] }));
  v.apply(snapshot('b', {}));
  expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a', 'b'], true)).toBe(true);
});

it('refuses while a peer owner holds ready Steps of the queue, waits with Steps of its flow type, or is loading', () => {
  for (const backlog of [{ busy: [Q] }, { waiting: ['acme:order'] }, { loading: true }]) {
    const v = new CapacityView();
    v.apply(snapshot('a', backlog));
    expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a'], false)).toBe(false);
    expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a'], true)).toBe(false);
    // the newest snapshot wins: the backlog drained
    v.apply(snapshot('a', {}));
    expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a'], true)).toBe(true);
  }
});

it('for a partition owned elsewhere, needs every peer to have said; for its own, ignores peers that do not say', () => {
  const v = new CapacityView();
  v.apply(snapshot('a', {}));
  v.apply(snapshot('old')); // a build that does not advertise its backlog
  expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a', 'old'], true)).toBe(false);
  expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a', 'old'], false)).toBe(true);
  // a live peer not heard from yet
  expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a', 'new'], true)).toBe(false);
  expect(v.peersAllowStartAtEnqueue(Q, 'acme', 'order', ['a', 'new'], false)).toBe(true);
});

it('tells an owner whether another owner holds ready Steps of a queue (its placement then skips the sync-match wait)', () => {
  const v = new CapacityView();
  v.apply(snapshot('old'));
  v.apply(snapshot('a', { waiting: ['acme:order'], loading: true }));
  expect(v.peerHasBacklog(Q)).toBe(false); // waiting Steps and loading are not a backlog of ready Steps
  v.apply(snapshot('b', { busy: [Q] }));
  expect(v.peerHasBacklog(Q)).toBe(true);
  v.retainOnly(new Set(['a', 'old'])); // b left the cluster
  expect(v.peerHasBacklog(Q)).toBe(false);
});

describe('which peers\' workers can run a Step type', () => {
  const worker = (app: string, over: Record<string, unknown> = {}) => ({
    tenant: 'acme', app_worker_id: app, flow_types: ['order'], step_flow_types: ['order'], idle_step_slots: 0, busy_slots: 1, ...over,
  });
  const peer = (node: string, workers: ReturnType<typeof worker>[], advertised = true) => ({
    node_id: node, seq: ++seq, entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 0 }], workers, declined: [],
    step_flow_types_advertised: advertised,
  });

  it('leaves out RPC-only workers, stopping ones, and those that declined the type', () => {
    const v = new CapacityView();
    v.apply(peer('a', [worker('rpc', { step_flow_types: [] })]));
    expect(v.canServe('acme', 'order', 'charge')).toBe(false);
    expect(v.presence('acme', 'rpc', 'order', 'charge')).toBe('absent');
    v.apply(peer('a', [worker('stopping', { draining: true })]));
    expect(v.canServe('acme', 'order', 'charge')).toBe(false);
    v.apply({ ...peer('a', [worker('w')]), declined: [{ tenant: 'acme', flow_type: 'order', type: 'charge', app_worker_id: 'w' }] });
    expect(v.canServe('acme', 'order', 'charge')).toBe(false);
    expect(v.canServe('acme', 'order', 'pack')).toBe(true);
    v.apply(peer('a', [worker('rpc', { step_flow_types: [] }), worker('w')]));
    expect(v.canServe('acme', 'order', 'charge')).toBe(true);
    expect(v.presence('acme', 'w', 'order', 'charge')).toBe('busy');
  });

  it('takes every worker of a peer that does not say which slots run Steps as able to', () => {
    const v = new CapacityView();
    v.apply(peer('old', [worker('rpc', { step_flow_types: undefined })], false));
    expect(v.canServe('acme', 'order', 'charge')).toBe(true);
  });
});

describe('reserving a peer\'s idle slot for a sticky Step (of one app worker)', () => {
  const peer = (node: string, worker: Record<string, unknown>, declined: { type: string }[] = []) => ({
    node_id: node, seq: ++seq, entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 1 }],
    workers: [{ tenant: 'acme', app_worker_id: 'w', flow_types: ['order'], step_flow_types: ['order'], idle_step_slots: 1, busy_slots: 0, ...worker }],
    declined: declined.map((d) => ({ tenant: 'acme', flow_type: 'order', type: d.type, app_worker_id: 'w' })),
    step_flow_types_advertised: true,
  });

  it('takes the worker\'s idle slot at the peer that holds it, once until the peer\'s next snapshot', () => {
    const v = new CapacityView();
    v.apply(peer('a', {}));
    expect(v.reserve('acme', 'order', 'charge', 'w')).toBe('a');
    expect(v.reserve('acme', 'order', 'charge', 'w')).toBeUndefined();
  });

  it('offers nothing to the worker where it is stopping: a drained worker takes no new Step', () => {
    const v = new CapacityView();
    v.apply(peer('a', { draining: true }));
    expect(v.reserve('acme', 'order', 'charge', 'w')).toBeUndefined();
  });

  it('offers nothing to the worker while it has no idle Step slot, though another worker of the peer has one', () => {
    const v = new CapacityView();
    const u = peer('a', { idle_step_slots: 0, busy_slots: 1 });
    u.workers.push({ ...u.workers[0]!, app_worker_id: 'other', idle_step_slots: 1, busy_slots: 0 });
    v.apply(u);
    expect(v.reserve('acme', 'order', 'charge', 'w')).toBeUndefined();
    expect(v.reserve('acme', 'order', 'charge', 'other')).toBe('a');
  });

  it('offers nothing to the worker where it declined the Step type, and still offers it the types it runs', () => {
    const v = new CapacityView();
    v.apply(peer('a', {}, [{ type: 'charge' }]));
    expect(v.reserve('acme', 'order', 'charge', 'w')).toBeUndefined();
    expect(v.reserve('acme', 'order', 'pack', 'w')).toBe('a');
  });
});

describe('what the view tells routing of the peers\' snapshots', () => {
  const worker = (app: string, over: Record<string, unknown> = {}) => ({
    tenant: 'acme', app_worker_id: app, flow_types: ['order'], step_flow_types: ['order'], idle_step_slots: 1, idle_rpc_slots: 0, busy_slots: 0, ...over,
  });
  const decline = (app: string, type: string) => ({ tenant: 'acme', flow_type: 'order', type, app_worker_id: app });
  const snap = (node: string, over: Record<string, unknown> = {}) => ({
    node_id: node, seq: ++seq, entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 1 }],
    workers: [worker('w')], declined: [], step_flow_types_advertised: true, ...over,
  });

  it('keeps the newest snapshot of a node: an older one arriving late changes nothing', () => {
    // Guards: a late snapshot bringing back idle slots the node no longer has.
    const v = new CapacityView();
    const old = snap('a');
    const newer = snap('a', { entries: [], workers: [worker('w', { idle_step_slots: 0, busy_slots: 1 })] });
    expect(v.apply(newer)).toBe(true);
    expect(v.apply(old)).toBe(false);
    expect(v.apply({ ...newer })).toBe(false);
    expect(v.reserve('acme', 'order', 'charge')).toBeUndefined();
    expect(v.presence('acme', 'w', 'order', 'charge')).toBe('busy');
  });

  it('names the peers whose fetches wait on a topic, and those where fetches asked for it lately', () => {
    const v = new CapacityView();
    v.apply(snap('a', { fetch_topics: ['acme:order:charge'] }));
    v.apply(snap('b', { fetched_topics: ['acme:order:pack'] }));
    expect(v.fetchWaiters('acme:order:charge')).toEqual(['a']);
    expect(v.fetchWaiters('acme:order:pack')).toEqual([]);
    expect(v.fetchedAnywhere('acme:order:charge')).toBe(true); // waiting counts as asked
    expect(v.fetchedAnywhere('acme:order:pack')).toBe(true);
    expect(v.fetchedAnywhere('acme:order:ship')).toBe(false);
    expect(v.fetchTopicsOf('a')).toEqual(['acme:order:charge']);
  });

  it('says which fetch topics and Step declines a snapshot adds, and nothing for one it would ignore', () => {
    const v = new CapacityView();
    const first = snap('a', { fetch_topics: ['t1'], declined: [decline('w', 'charge'), decline('w', rpcDeclineType('quote'))] });
    expect(v.newFetchTopics(first)).toEqual(['t1']);
    // RPC declines are not Step types
    expect(v.newStepDeclines(first)).toEqual([{ tenant: 'acme', flowType: 'order', stepType: 'charge', appWorkerId: 'w' }]);
    v.apply(first);
    const next = snap('a', { fetch_topics: ['t1', 't2'], declined: [decline('w', 'charge'), decline('w', 'pack')] });
    expect(v.newFetchTopics(next)).toEqual(['t2']);
    expect(v.newStepDeclines(next)).toEqual([{ tenant: 'acme', flowType: 'order', stepType: 'pack', appWorkerId: 'w' }]);
    v.apply(next);
    const stale = { ...snap('a', { fetch_topics: ['t3'], declined: [decline('w', 'ship')] }), seq: 1 };
    expect(v.newFetchTopics(stale)).toEqual([]);
    expect(v.newStepDeclines(stale)).toEqual([]);
  });

  it('says nothing of a snapshot of the same sequence as the one held: apply ignores it', () => {
    const v = new CapacityView();
    const held = snap('a', { fetch_topics: ['t1'] });
    v.apply(held);
    const same = { ...snap('a', { fetch_topics: ['t1', 't2'], declined: [decline('w', 'pack')], workers: [] }), seq: held.seq };
    expect(v.apply({ ...same })).toBe(false);
    expect(v.newFetchTopics(same)).toEqual([]);
    expect(v.newStepDeclines(same)).toEqual([]);
    expect(v.leaving(same)).toEqual([]);
  });

  it('names the workers a snapshot no longer offers: gone or now draining, not those that were draining already', () => {
    const v = new CapacityView();
    const first = snap('a', { workers: [worker('stays'), worker('goes'), worker('drains'), worker('was-draining', { draining: true })] });
    expect(v.leaving(first)).toEqual([]); // a node not heard from yet offered nothing
    v.apply(first);
    const next = snap('a', { workers: [worker('stays'), worker('drains', { draining: true })] });
    expect(v.leaving(next).map((w) => w.appWorkerId).sort()).toEqual(['drains', 'goes']);
    expect(v.leaving({ ...next, seq: 1 })).toEqual([]);
  });

  it('drops the snapshots of nodes that left, naming their available workers', () => {
    const v = new CapacityView();
    v.apply(snap('a', { workers: [worker('w1'), worker('w2', { draining: true })] }));
    v.apply(snap('b'));
    expect(v.retainOnly(new Set(['b']))).toEqual([{ tenant: 'acme', appWorkerId: 'w1' }]);
    expect(v.has('a')).toBe(false);
    expect(v.has('b')).toBe(true);
  });

  it('rings outcomes to a peer with waiters, or one that has not said; not to one that said it has none', () => {
    const v = new CapacityView();
    expect(v.wantsOutcomes('a')).toBe(true);
    v.apply(snap('a')); // an older build: generation 0
    expect(v.wantsOutcomes('a')).toBe(true);
    v.apply(snap('a', { outcome_waiter_gen: 3, outcome_waiters: 0 }));
    expect(v.wantsOutcomes('a')).toBe(false);
    expect(v.outcomeGen('a')).toBe(3);
    v.apply(snap('a', { outcome_waiter_gen: 3, outcome_waiters: 2 }));
    expect(v.wantsOutcomes('a')).toBe(true);
  });

  it('reserves a peer slot for any worker only where some worker runs the Step type, and counts it taken', () => {
    const v = new CapacityView();
    v.apply(snap('a', { declined: [decline('w', 'charge')] }));
    v.apply(snap('b', { entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 2 }], workers: [worker('x', { idle_step_slots: 2 })] }));
    expect(v.reserve('acme', 'order', 'charge')).toBe('b');
    expect(v.presence('acme', 'x', 'order', 'charge')).toBe('idle');
    expect(v.reserve('acme', 'order', 'charge')).toBe('b');
    // both of x's slots taken: it counts as busy, not gone, until b's next snapshot
    expect(v.presence('acme', 'x', 'order', 'charge')).toBe('busy');
    expect(v.reserve('acme', 'order', 'charge')).toBeUndefined();
    expect(v.reserve('acme', 'order', 'pack')).toBe('a');
  });

  it('counts one worker\'s slot taken per reservation, and reserves at a peer that names no workers by its idle count', () => {
    const v = new CapacityView();
    v.apply(snap('a', { entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 2 }], workers: [worker('x'), worker('y')] }));
    expect(v.reserve('acme', 'order', 'charge')).toBe('a');
    expect(['x', 'y'].map((w) => v.presence('acme', w, 'order', 'charge')).sort()).toEqual(['busy', 'idle']);
    const old = new CapacityView();
    old.apply(snap('old', { workers: [], step_flow_types_advertised: false }));
    expect(old.reserve('acme', 'order', 'charge')).toBe('old');
    expect(old.nodesFor('acme', 'order', 'quote')).toEqual(['old']);
  });

  it('does not reserve a sticky worker\'s slot where its slots run only RPCs', () => {
    const v = new CapacityView();
    v.apply(snap('a', { workers: [worker('w', { step_flow_types: [] })] }));
    expect(v.reserve('acme', 'order', 'charge', 'w')).toBeUndefined();
  });

  it('sees a worker absent where it declined the type, and idle only with an idle Step slot', () => {
    const v = new CapacityView();
    v.apply(snap('a', { declined: [decline('w', 'charge')] }));
    expect(v.presence('acme', 'w', 'order', 'charge')).toBe('absent');
    expect(v.presence('acme', 'w', 'order', 'pack')).toBe('idle');
  });

  it('counts a peer able to serve a flow type only where it has the flow type connected', () => {
    const v = new CapacityView();
    v.apply(snap('a', { entries: [{ tenant: 'acme', flow_type: 'invoice', idle_step_slots: 1 }] }));
    expect(v.canServe('acme', 'order', 'charge')).toBe(false);
  });

  it('finds the node of a worker for a sticky RPC only where it runs the flow type and the name, and is not stopping', () => {
    const v = new CapacityView();
    v.apply(snap('a', { workers: [worker('w', { draining: true })] }));
    v.apply(snap('b', { workers: [worker('w', { flow_types: ['invoice'] })] }));
    v.apply(snap('c', { workers: [worker('w')], declined: [decline('w', rpcDeclineType('quote'))] }));
    expect(v.nodeOfWorker('acme', 'w')).toBe('b');
    expect(v.nodeOfWorker('acme', 'w', { flowType: 'order', rpcName: 'quote' })).toBeUndefined();
    expect(v.nodeOfWorker('acme', 'w', { flowType: 'order', rpcName: 'price' })).toBe('c');
  });

  it('finds an idle slot of a worker for an RPC, RPC-only or shared, where it has not declined the name', () => {
    const v = new CapacityView();
    v.apply(snap('a', { workers: [worker('w', { idle_step_slots: 0, idle_rpc_slots: 1 })], declined: [decline('w', rpcDeclineType('quote'))] }));
    expect(v.workerIdleAt('a', 'acme', 'w', 'order', 'price')).toBe(true);
    expect(v.workerIdleAt('a', 'acme', 'w', 'order', 'quote')).toBe(false);
    expect(v.idleNodeOfWorker('acme', 'w', 'order', 'price')).toBe('a');
    expect(v.idleNodeOfWorker('acme', 'w', 'order', 'quote')).toBeUndefined();
    v.apply(snap('b', { workers: [worker('s', { idle_step_slots: 1, idle_rpc_slots: 0 })] }));
    expect(v.workerIdleAt('b', 'acme', 's', 'order', 'price')).toBe(true); // a shared slot alone runs it
  });

  it('counts no slot of a stopping worker, or of another tenant\'s, taken by a reservation', () => {
    const v = new CapacityView();
    v.apply(snap('a', { workers: [worker('d', { draining: true, idle_step_slots: 0, idle_rpc_slots: 1 }), worker('w', { idle_step_slots: 0, idle_rpc_slots: 1 })] }));
    expect(v.idleNodeFor('acme', 'order')).toBe('a');
    v.reserveRpc('a', 'acme', 'order', 'price');
    expect(v.workerIdleAt('a', 'acme', 'w', 'order', 'price')).toBe(false);
    expect(v.idleNodeFor('acme', 'order')).toBeUndefined(); // the stopping worker's idle slot takes nothing

    const two = new CapacityView();
    two.apply(snap('b', { workers: [{ ...worker('g'), tenant: 'globex' }, worker('w')] }));
    expect(two.reserve('acme', 'order', 'charge')).toBe('b');
    expect(two.presence('globex', 'g', 'order', 'charge')).toBe('idle');
    expect(two.presence('acme', 'w', 'order', 'charge')).toBe('busy');
  });

  it('counts an RPC sent to a peer as taking an RPC-only slot first, then a shared one (and its Step slot)', () => {
    const v = new CapacityView();
    v.apply(snap('a', { workers: [worker('w', { idle_rpc_slots: 1 })] }));
    v.reserveRpc('a', 'acme', 'order', 'price');
    // the shared slot is still there for a Step
    expect(v.reserve('acme', 'order', 'charge')).toBe('a');
    v.apply(snap('a'));
    v.reserveRpc('a', 'acme', 'order', 'price');
    expect(v.reserve('acme', 'order', 'charge')).toBeUndefined();
    expect(v.idleNodeFor('acme', 'order', 'price')).toBeUndefined();
  });

  it('finds a peer with an idle slot for an RPC, passing over skipped peers and those that declined the name', () => {
    const v = new CapacityView();
    v.apply(snap('a', { declined: [decline('w', rpcDeclineType('quote'))] }));
    v.apply(snap('b'));
    expect(v.idleNodeFor('acme', 'order', 'quote')).toBe('b');
    expect(v.idleNodeFor('acme', 'order', 'price', new Set(['a']))).toBe('b');
    expect(v.idleNodeFor('acme', 'order', 'quote', new Set(['b']))).toBeUndefined();
  });

  it('lists the peers for an RPC those with idle slots first, leaving out those whose workers all declined it', () => {
    const v = new CapacityView();
    v.apply(snap('busy', { entries: [], workers: [worker('x', { idle_step_slots: 0, busy_slots: 1 })] }));
    v.apply(snap('idle'));
    v.apply(snap('declines', { declined: [decline('w', rpcDeclineType('quote'))] }));
    expect(v.nodesFor('acme', 'order')).toEqual(['idle', 'declines', 'busy']);
    expect(v.nodesFor('acme', 'order', 'quote')).toEqual(['idle', 'busy']);
  });

  it('counts a peer as having a worker of the flow type unless its workers are all stopping; an older peer by its connected flow types', () => {
    const v = new CapacityView();
    v.apply(snap('a', { workers: [worker('w', { draining: true })] }));
    expect(v.availableFor('acme', 'order')).toBe(false);
    v.apply(snap('old', { workers: [] }));
    expect(v.availableFor('acme', 'order')).toBe(true);
    expect(v.availableFor('acme', 'invoice')).toBe(false);
  });
});
