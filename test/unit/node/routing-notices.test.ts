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
import { Keys } from '../../../src/store/keys';
import { createRedis } from '../../../src/store/redis';
import { pb } from '../../../src/wire';
import { uniquePrefix, useEmbeddedRedis } from '../../helpers/redis';

const Kind = pb.DoorbellEvent.Kind;
const PARTITIONS = 16;

const redis = useEmbeddedRedis();

/** `refused`: partitions the owner registry does not hold (a notice for one goes on to the lease holder). */
function setup(held: number[] = [], refused: number[] = []) {
  const calls: string[] = [];
  const takes = (p: number) => !refused.includes(p);
  const rung: { node: string; kind: number; partition?: number | null; task_id?: string | null; queue?: string | null }[] = [];
  const leases = { holds: (p: number) => held.includes(p), acquireNow: (p: number) => calls.push(`acquire ${p}`) };
  const membership = { liveIds: () => ids };
  const ids = Object.freeze(['me', 'a', 'b']);
  const owner = {
    taskEnqueued: (p: number, _q: string, id: string) => calls.push(`enqueued ${p} ${id}`) > 0 && takes(p),
    taskReady: (p: number, _q: string, id: string) => calls.push(`ready ${p} ${id}`) > 0 && takes(p),
    flowDeadlineSet: (p: number, at: number) => calls.push(`flow-deadline ${p} ${at}`) > 0 && takes(p),
    attemptStarted: (p: number, at: number) => calls.push(`attempt ${p} ${at}`) > 0 && takes(p),
    capacityAvailable: (t: string, ft: string, w: string) => calls.push(`capacity ${t} ${ft} ${w}`),
    typeDeclined: (t: string, ft: string, st: string, w: string) => calls.push(`declined ${t} ${ft} ${st} ${w}`),
    workerUnavailable: (t: string, w: string) => calls.push(`unavailable ${t} ${w}`),
  };
  const here = new Set<string>();
  const moved: string[] = [];
  const gateway = {
    hasWorker: (_t: string, w: string) => here.has(w),
    moveStickyRpcs: (_t: string, w: string, idle: number) => moved.push(`${w} ${idle}`) && 0,
    moveWaitingRpcs: () => 0,
    cancelAttempts: (list: { taskId: string }[]) => calls.push(`cancel here ${list.map((a) => a.taskId).join(',')}`),
  };
  const mesh = {
    ring: (node: string, e: pb.IDoorbellEvent) => rung.push({ node, kind: e.kind!, partition: e.partition, task_id: e.task_id, queue: e.queue }),
    sendSnapshotTo: (node: string) => calls.push(`snapshot to ${node}`),
    cancelAttempts: (node: string, list: { task_id: string }[]) => calls.push(`cancel at ${node} ${list.map((a) => a.task_id).join(',')}`),
  };
  const bell = { ring: (p: number, id: string) => calls.push(`outcome ${p} ${id}`), wakeAll: () => calls.push('outcome wake all') };
  const fetchBell = { ringAt: (q: string, at: number) => calls.push(`fetch ${q} ${at}`) };
  const view = new CapacityView();
  const unused = {} as never;
  const keys = new Keys(uniquePrefix('routing'));
  const client = refused.length > 0 ? createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' }) : undefined;
  const r = new Routing('me', PARTITIONS, leases as never, membership as never, owner as never, gateway as never,
    mesh as never, view, bell as never, fetchBell as never, unused, (client ?? unused) as never, keys);
  return { r, view, calls, rung, here, moved, keys, client };
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

describe('an owner notice the owner registry does not take', () => {
  const ring = (s: ReturnType<typeof setup>) => s.rung.map((e) => [e.node, e.kind, e.partition]);
  const until = async (s: ReturnType<typeof setup>, n: number) => {
    for (let i = 0; i < 200 && s.rung.length < n; i++) await new Promise((r) => setTimeout(r, 5));
  };

  it('goes on to the lease holder Redis names, never back to its sender or to itself', async () => {
    const s = setup([6], [1, 2, 3, 4, 5, 6]);
    try {
      await s.client!.set(s.keys.lease(1), 'c:7');
      await s.client!.set(s.keys.lease(2), 'node:x:9'); // a node id with a colon of its own
      await s.client!.set(s.keys.lease(3), 'a:2'); // the sender
      await s.client!.set(s.keys.lease(4), 'me:2');
      s.r.onDoorbell([
        { kind: Kind.READY, partition: 1, task_id: 't1', queue: 'q', fresh: true },
        { kind: Kind.ATTEMPT, partition: 2, at_ms: 900 },
        { kind: Kind.READY, partition: 3, task_id: 't3', queue: 'q' },
        { kind: Kind.FLOW_DEADLINE, partition: 4, at_ms: 900 },
        { kind: Kind.FLOW_DEADLINE, partition: 5, at_ms: 900 }, // no holder: the next owner reads Redis
        { kind: Kind.READY, partition: 1, task_id: 't6', queue: 'q' },
        { kind: Kind.FLOW_DEADLINE, partition: 1, at_ms: 800 },
      ], 'a');
      await until(s, 4);
      expect(ring(s)).toEqual([['c', Kind.READY, 1], ['node:x', Kind.ATTEMPT, 2], ['c', Kind.READY, 1], ['c', Kind.FLOW_DEADLINE, 1]]);
      expect(s.calls).toEqual(['enqueued 1 t1', 'attempt 2 900', 'ready 3 t3', 'flow-deadline 4 900', 'flow-deadline 5 900', 'ready 1 t6', 'flow-deadline 1 800']);
      // A notice of our own the registry did not take goes to the holder too, even one named as sender.
      await s.client!.set(s.keys.lease(6), 'b:1');
      s.r.taskEnqueued(6, 'q', 't7', 0, '', 0);
      s.r.taskReady(6, 'q', 't8', 0);
      s.r.attemptStarted(6, 900);
      s.r.flowDeadlineSet(6, 't9', 900);
      await until(s, 8);
      expect(ring(s).slice(4)).toEqual([['b', Kind.READY, 6], ['b', Kind.READY, 6], ['b', Kind.ATTEMPT, 6], ['b', Kind.FLOW_DEADLINE, 6]]);
    } finally {
      s.client!.disconnect();
    }
  });
});

it('takes a fresh Step and a retry apart, arms no flow deadline for none, and rings fetches at their time', () => {
  const s = setup([2]);
  s.r.taskEnqueued(2, 'q', 't0', 0, '', 0);
  s.r.onDoorbell([
    { kind: Kind.READY, partition: 2, task_id: 't1', queue: 'q', fresh: true },
    { kind: Kind.READY, partition: 2, task_id: 't2', queue: 'q' },
    { kind: Kind.FETCH, partition: 0, queue: 'acme:order:charge', at_ms: 1234 },
  ], 'a');
  expect(s.calls).toEqual(['enqueued 2 t0', 'enqueued 2 t1', 'ready 2 t2', 'fetch acme:order:charge 1234']);
});

describe('a peer\'s capacity snapshot, further', () => {
  const worker = (app: string, over: Record<string, unknown> = {}) => ({ tenant: 'acme', app_worker_id: app, flow_types: ['order'], step_flow_types: ['order'], busy_slots: 1, ...over });

  it('moves on no sticky Steps of a worker the peer no longer offers while it has a stream here', () => {
    const s = setup();
    s.r.onCapacity(snap('a', { workers: [worker('w'), worker('x')] }));
    s.here.add('w');
    s.calls.length = 0;
    s.r.onCapacity(snap('a', { workers: [] }));
    expect(s.calls).toEqual(['unavailable acme x']);
  });

  it('offers RPCs waiting for a worker only the idle slots it has there', () => {
    const s = setup();
    s.r.onCapacity(snap('a', { workers: [worker('busy'), worker('idle', { idle_rpc_slots: 2 })] }));
    expect(s.moved).toEqual(['idle 2']);
  });

  it('rings no outcome waiters of a peer that says no generation, or whose new generation has none', () => {
    const s = setup();
    s.r.onCapacity(snap('a', { outcome_waiter_gen: 1, outcome_waiters: 1 }));
    s.r.onCapacity(snap('a', { outcome_waiter_gen: 0, outcome_waiters: 1 }));
    s.r.onCapacity(snap('a', { outcome_waiter_gen: 2, outcome_waiters: 0 }));
    expect(s.rung.filter((e) => e.kind === Kind.OUTCOME)).toHaveLength(1);
  });
});
