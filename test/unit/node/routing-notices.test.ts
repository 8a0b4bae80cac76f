/**
 * Where a clustered node sends its notices (src/node/routing.ts): owner
 * notices to the partition's owner, outcomes and fetch notices only to the
 * peers that wait for them, and what a peer's capacity snapshot sets off
 * (our snapshot to a node just heard from, a look-again to its new fetch
 * topics and outcome waiters, sticky Steps moving on, freed slots for the
 * owner). A real CapacityView holds the peers' snapshots; the node's other
 * parts are stand-ins that record what they are told.
 */
import { CapacityView } from '../../../src/cluster/capacity-view';
import { ownerOf } from '../../../src/cluster/rendezvous';
import { Routing } from '../../../src/node/routing';
import { pb } from '../../../src/wire';

const Kind = pb.DoorbellEvent.Kind;
const PARTITIONS = 16;

function setup(held: number[] = []) {
  const calls: string[] = [];
  const rung: { node: string; kind: number; partition?: number | null; task_id?: string | null; queue?: string | null }[] = [];
  const leases = { holds: (p: number) => held.includes(p), acquireNow: (p: number) => calls.push(`acquire ${p}`) };
  const membership = { liveIds: () => ids };
  const ids = Object.freeze(['me', 'a', 'b']);
  const owner = {
    taskEnqueued: (p: number, _q: string, id: string) => calls.push(`enqueued ${p} ${id}`) > 0,
    taskReady: (p: number, _q: string, id: string) => calls.push(`ready ${p} ${id}`) > 0,
    flowDeadlineSet: (p: number, at: number) => calls.push(`flow-deadline ${p} ${at}`) > 0,
    attemptStarted: (p: number, at: number) => calls.push(`attempt ${p} ${at}`) > 0,
    capacityAvailable: (t: string, ft: string, w: string) => calls.push(`capacity ${t} ${ft} ${w}`),
    typeDeclined: (t: string, ft: string, st: string, w: string) => calls.push(`declined ${t} ${ft} ${st} ${w}`),
    workerUnavailable: (t: string, w: string) => calls.push(`unavailable ${t} ${w}`),
  };
  const gateway = {
    hasWorker: () => false,
    moveStickyRpcs: () => 0,
    moveWaitingRpcs: () => 0,
    cancelAttempts: (list: { taskId: string }[]) => calls.push(`cancel here ${list.map((a) => a.taskId).join(',')}`),
  };
  const mesh = {
    ring: (node: string, e: pb.IDoorbellEvent) => rung.push({ node, kind: e.kind!, partition: e.partition, task_id: e.task_id, queue: e.queue }),
    sendSnapshotTo: (node: string) => calls.push(`snapshot to ${node}`),
    cancelAttempts: (node: string, list: { task_id: string }[]) => calls.push(`cancel at ${node} ${list.map((a) => a.task_id).join(',')}`),
  };
  const bell = { ring: (p: number, id: string) => calls.push(`outcome ${p} ${id}`), wakeAll: () => calls.push('outcome wake all') };
  const fetchBell = { ringAt: (q: string) => calls.push(`fetch ${q}`) };
  const view = new CapacityView();
  const unused = {} as never;
  const r = new Routing('me', PARTITIONS, leases as never, membership as never, owner as never, gateway as never,
    mesh as never, view, bell as never, fetchBell as never, unused, unused, unused);
  return { r, view, calls, rung };
}

/** A partition whose rendezvous owner among the peers is `node`. */
const partitionOf = (node: string) => Array.from({ length: PARTITIONS }, (_, p) => p).find((p) => ownerOf(p, ['a', 'b']) === node)!;

let seq = 0;
const snap = (node: string, over: Record<string, unknown> = {}) => ({
  node_id: node, seq: ++seq, entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 0 }],
  workers: [{ tenant: 'acme', app_worker_id: 'w', flow_types: ['order'], step_flow_types: ['order'], idle_step_slots: 0, busy_slots: 1 }],
  declined: [], step_flow_types_advertised: true, ...over,
});

it('sends a new Step\'s notices, its flow deadline among them, to its partition\'s owner', () => {
  const mine = partitionOf('b'); // held here: the lease says so, whatever rendezvous says
  const s = setup([mine]);
  s.r.taskEnqueued(mine, 'acme:order:charge', 't1', 0, '', 5000);
  expect(s.calls).toEqual([`enqueued ${mine} t1`, `flow-deadline ${mine} 5000`]);
  const p = partitionOf('a');
  s.r.taskEnqueued(p, 'acme:order:charge', 't2', 0, '', 7000);
  expect(s.rung.map((e) => [e.node, e.kind])).toEqual([['a', Kind.READY], ['a', Kind.FLOW_DEADLINE]]);
});

it('arms nothing for an attempt with no deadline', () => {
  const s = setup([3]);
  s.r.attemptStarted(3, Number.MAX_SAFE_INTEGER);
  s.r.attemptStarted(partitionOf('a'), Number.MAX_SAFE_INTEGER);
  expect([s.calls, s.rung]).toEqual([[], []]);
  s.r.attemptStarted(3, 900);
  expect(s.calls).toEqual(['attempt 3 900']);
});

it('rings outcomes to the peers that have waiters or have not said, and never to itself', () => {
  const s = setup();
  s.view.apply(snap('a', { outcome_waiter_gen: 1, outcome_waiters: 0 }));
  s.r.outcomeWritten(2, 't1');
  expect(s.calls).toEqual(['outcome 2 t1']);
  expect(s.rung.map((e) => e.node)).toEqual(['b']);
});

it('rings a fetchable task to the peers whose fetches wait on its queue, and not back to itself', () => {
  const s = setup();
  s.view.apply(snap('a', { fetch_topics: ['acme:order:charge'] }));
  s.view.apply(snap('me', { fetch_topics: ['acme:order:charge'] }));
  s.r.taskFetchable('acme:order:charge', 0);
  expect(s.rung.map((e) => [e.node, e.kind])).toEqual([['a', Kind.FETCH]]);
});

it('tells a peer that lost notices to look again: its fetch topics, and its outcome waiters', () => {
  const s = setup();
  s.view.apply(snap('a', { fetch_topics: ['q1'], outcome_waiter_gen: 1, outcome_waiters: 1 }));
  s.r.noticesLost('a');
  expect(s.rung.map((e) => [e.kind, e.queue ?? e.task_id])).toEqual([[Kind.FETCH, 'q1'], [Kind.OUTCOME, '']]);
});

it('tells the new owner of a partition it gave up, and takes one handed to it at once', () => {
  const s = setup();
  const p = partitionOf('b');
  s.r.leaseReleased(p);
  expect(s.rung).toEqual([{ node: 'b', kind: Kind.LEASE_RELEASED, partition: p, task_id: undefined, queue: undefined }]);
  s.r.onDoorbell([{ kind: Kind.LEASE_RELEASED, partition: 4 }, { kind: Kind.LEASE_RELEASED, partition: PARTITIONS }], 'b');
  expect(s.calls).toEqual(['acquire 4']); // a partition past the count is ignored
});

it('wakes every outcome waiter on a notice that names no task', () => {
  const s = setup();
  s.r.onDoorbell([{ kind: Kind.OUTCOME, partition: 0, task_id: '' }, { kind: Kind.OUTCOME, partition: 1, task_id: 't1' }], 'a');
  expect(s.calls).toEqual(['outcome wake all', 'outcome 1 t1']);
});

it('sends cancels to the node holding each attempt\'s slot', () => {
  const s = setup();
  const a = (taskId: string, nodeId: string) => ({ taskId, attempt: 1, nonce: 'n', nodeId, streamId: 's' });
  s.r.cancelAttempts([a('t1', 'me'), a('t2', 'a'), a('t3', 'me')], 'cancelled');
  expect(s.calls).toEqual(['cancel here t1,t3', 'cancel at a t2']);
});

describe('a peer\'s capacity snapshot', () => {
  it('gets our snapshot sent back the first time only, and rings its new fetch topics', () => {
    const s = setup();
    s.r.onCapacity(snap('a', { fetch_topics: ['q1'] }));
    expect(s.calls).toEqual(['snapshot to a']);
    s.r.onCapacity(snap('a', { fetch_topics: ['q1', 'q2'] }));
    expect(s.calls).toEqual(['snapshot to a']);
    expect(s.rung.map((e) => [e.node, e.kind, e.queue])).toEqual([['a', Kind.FETCH, 'q1'], ['a', Kind.FETCH, 'q2']]);
  });

  it('rings its outcome waiters once when a new generation of them arrives', () => {
    const s = setup();
    s.r.onCapacity(snap('a', { outcome_waiter_gen: 1, outcome_waiters: 1 }));
    s.r.onCapacity(snap('a', { outcome_waiter_gen: 1, outcome_waiters: 2 }));
    expect(s.rung.filter((e) => e.kind === Kind.OUTCOME)).toHaveLength(1);
    s.r.onCapacity(snap('a', { outcome_waiter_gen: 2, outcome_waiters: 1 }));
    expect(s.rung.filter((e) => e.kind === Kind.OUTCOME)).toHaveLength(2);
  });

  it('hands the owner freed Step slots of workers that are not stopping, and declines of Step types', () => {
    const s = setup();
    s.r.onCapacity(snap('a'));
    s.calls.length = 0;
    const worker = (app: string, over: Record<string, unknown>) => ({ tenant: 'acme', app_worker_id: app, flow_types: ['order'], step_flow_types: ['order'], busy_slots: 0, ...over });
    s.r.onCapacity(snap('a', {
      workers: [worker('w', { idle_step_slots: 1 }), worker('rpc', { idle_rpc_slots: 1 }), worker('stopping', { idle_step_slots: 1, draining: true })],
      declined: [{ tenant: 'acme', flow_type: 'order', type: 'charge', app_worker_id: 'w' }],
    }));
    expect(s.calls).toEqual(['declined acme order charge w', 'capacity acme order w']);
  });

  it('moves on the sticky Steps of a worker the peer no longer offers, unless another peer holds it', () => {
    const s = setup();
    const worker = (app: string) => ({ tenant: 'acme', app_worker_id: app, flow_types: ['order'], step_flow_types: ['order'], busy_slots: 1 });
    s.r.onCapacity(snap('a', { workers: [worker('w'), worker('x')] }));
    s.r.onCapacity(snap('b', { workers: [worker('x')] }));
    s.calls.length = 0;
    s.r.onCapacity(snap('a', { workers: [] }));
    expect(s.calls).toEqual(['unavailable acme w']);
    s.calls.length = 0;
    s.r.workerGoneHere('acme', 'x'); // still at b
    s.r.workerGoneHere('acme', 'y');
    expect(s.calls).toEqual(['unavailable acme y']);
  });
});
