/**
 * The peers' advertised backlogs in the capacity view (CapacityUpdate
 * backlog_advertised, busy_queues, waiting_flows, backlog_loading): what lets
 * a node start a new Step at enqueue without cutting in front of Steps that
 * wait at another owner. Pure data: snapshots in, a decision out.
 */
import { CapacityView } from '../../../src/cluster/capacity-view';

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

  it('offers nothing to the worker where it declined the Step type, and still offers it the types it runs', () => {
    const v = new CapacityView();
    v.apply(peer('a', {}, [{ type: 'charge' }]));
    expect(v.reserve('acme', 'order', 'charge', 'w')).toBeUndefined();
    expect(v.reserve('acme', 'order', 'pack', 'w')).toBe('a');
  });
});
