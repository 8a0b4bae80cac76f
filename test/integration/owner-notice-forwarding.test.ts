/**
 * The notices that arm an owner's timers (an attempt's method or heartbeat
 * deadline, a Step's flow deadline) go to the node the sender takes for the
 * partition's owner. A sender whose member list is behind names a node that no
 * longer owns it: that node hands the notice on to the lease holder Redis names,
 * as it does a READY (routing.ts forwardToOwner). Dropped, the owner heard of the
 * deadline only from its 5-s backlog count, so timeouts fired up to 5 s late.
 *
 * Three nodes in this process on a real redis-server. n-b's member list is held
 * still (its refresh does nothing) before n-c joins: n-a hands n-c part of its
 * share, and n-b still sends those partitions' notices to n-a. n-c's periodic
 * backlog count is stopped, so only the notice path can arm its timers.
 */
import { ownerOf, targetPartitions } from '../../src/cluster/rendezvous';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const PARTITIONS = 16;
const ids = ['n-a', 'n-b', 'n-c'];
/** Partitions n-a owns of a two-node cluster and n-c takes over when it joins. */
const moving = [...targetPartitions('n-c', ids, PARTITIONS)].filter((p) => targetPartitions('n-a', ids.slice(0, 2), PARTITIONS).has(p));

let a: TestNode;
let b: TestNode;
let c: TestNode;
const slots: RawSlot[] = [];

const config = (id: string) => ({
  'cluster.nodeId': id, 'cluster.partitions': PARTITIONS, 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1500ms', 'cluster.leaseTtl': '1500ms',
});

beforeEach(async () => {
  expect(moving.length).toBeGreaterThan(0);
  const prefix = uniquePrefix('fwd');
  [a, b] = await Promise.all([startTestNode(redis.url, prefix, config('n-a')), startTestNode(redis.url, prefix, config('n-b'))]);
  // Both must see both before n-b's list is held still: frozen while it saw only itself, n-b took
  // every partition for its own, acquired each one n-a gave up for n-c first, and kept it.
  const seesBoth = (n: TestNode) => ['n-a', 'n-b'].every((id) => n.node.membership.liveIds().includes(id));
  await waitFor(() => seesBoth(a) && seesBoth(b)
    && a.node.leases.heldPartitions().length + b.node.leases.heldPartitions().length === PARTITIONS
    && b.node.leases.heldPartitions().length > 0, { timeoutMs: 30_000, description: 'n-a and n-b see each other and split the partitions' });
  // n-b's member list stays {n-a, n-b} from here on: it keeps heartbeating, but reads no members.
  (b.node.membership as unknown as { refresh: () => Promise<void> }).refresh = async () => undefined;
  c = await startTestNode(redis.url, prefix, config('n-c'));
  await waitFor(() => moving.every((p) => c.node.leases.holds(p) !== undefined), { timeoutMs: 30_000, description: 'n-c holds what n-a gave up' });
  // Only a notice can arm n-c's timers now (its load read Redis before the Steps below).
  c.node.owner.backlog.stop();
});

afterEach(async () => {
  for (const s of slots.splice(0)) s.reset();
  await Promise.all([a, b, c].map((n) => n?.close()));
});

/** A flow of a partition that moved from n-a to n-c, which n-b still takes for n-a's. */
function movedFlow(prefix: string): string {
  for (let i = 0; ; i++) {
    const flow = `${prefix}${i}`;
    const p = partitionOf('acme', flow, PARTITIONS);
    if (moving.includes(p)) {
      expect(b.node.routing.ownerNodeOf(p)).toBe('n-a');
      expect(ownerOf(p, ids)).toBe('n-c');
      return flow;
    }
  }
}

it('times out an attempt by its heartbeat timeout when its start notice reached the old owner', async () => {
  const w = openSlot(b.worker, registerFrame({ app_worker_id: 'w-b' }));
  slots.push(w);
  await w.nextOf('registered');
  const heartbeatTimeout = 500;
  // An idle slot at n-b: the enqueue starts the Step there, and n-b sends its start notice to n-a.
  const r = await b.matching.enqueueStep({ step: {
    tenant: 'acme', flow_id: movedFlow('fwd-attempt-'), flow_type: 'order', step_type: 'pack', step_execution_id: 's',
    heartbeat_timeout_ms: heartbeatTimeout, retry_policy: { max_attempts: 1 },
  } });
  expect((await w.nextOf('step_task', 3000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  const startedAt = Date.now();
  // The worker stays silent: n-c fails the attempt at its heartbeat deadline.
  const outcome = (await c.matching.waitOutcome({ task_id: r.task_id, wait_ms: 8000 })).outcome;
  const tookMs = Date.now() - startedAt;
  expect(outcome?.status).toBe(pb.OutcomeStatus.FAILED);
  expect(tookMs).toBeLessThan(heartbeatTimeout + 1000);
}, 30_000);

it('times out a queued Step at its flow deadline when the deadline notice reached the old owner', async () => {
  const deadlineIn = 500;
  const enqueuedAt = Date.now();
  const r = await b.matching.enqueueStep({ step: {
    tenant: 'acme', flow_id: movedFlow('fwd-deadline-'), flow_type: 'nobody', step_type: 'x', step_execution_id: 's',
    flow_deadline_ms: enqueuedAt + deadlineIn,
  } });
  const outcome = (await c.matching.waitOutcome({ task_id: r.task_id, wait_ms: 8000 })).outcome;
  const tookMs = Date.now() - enqueuedAt;
  expect(outcome?.status).toBe(pb.OutcomeStatus.TIMED_OUT);
  expect(tookMs).toBeLessThan(deadlineIn + 1000);
}, 30_000);
