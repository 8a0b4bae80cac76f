/**
 * DescribeQueues (and `zdmatch queues`, which prints it) sums a queue over
 * every partition it spreads across (DESIGN §2: one logical queue lives in
 * many partitions): ready and delayed counts add up, the oldest ready entry is
 * the oldest of all partitions, and a queue with only delayed Steps has no
 * oldest ready entry. It lists the tenant's queues only, of the flow type asked
 * for, and counts running attempts in the queue they came from — never another
 * tenant's or another flow type's. One node, real gRPC and a real redis-server.
 */
import { partitionOf } from '../../src/store/keys';
import type { pb } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'describe-queues');

/** Flow ids of `tenant` in `n` distinct partitions. */
function flowsInDistinctPartitions(tenant: string, n: number): string[] {
  const partitions = env.t.config.cluster.partitions;
  const seen = new Set<number>();
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const p = partitionOf(tenant, `f${i}`, partitions);
    if (seen.has(p)) continue;
    seen.add(p);
    out.push(`f${i}`);
  }
  return out;
}

const step = (over: pb.IStepSpec): pb.IStepSpec => ({ tenant: 'acme', flow_type: 'order', step_type: 'charge', step_execution_id: 's', ...over });

it('sums a queue over its partitions and keeps other tenants and flow types out', async () => {
  // Running: a Step of acme's billing flow type, and one of another tenant's order:charge.
  const billing = await env.registeredSlot({ app_worker_id: 'b', flow_types: ['billing'] });
  const other = await env.registeredSlot({ tenant: 'globex', app_worker_id: 'g' });
  await env.t.matching.enqueueStep({ step: step({ flow_id: 'bill', flow_type: 'billing', step_type: 'invoice' }) });
  await env.t.matching.enqueueStep({ step: step({ tenant: 'globex', flow_id: 'g1' }) });
  await billing.nextOf('step_task');
  await other.nextOf('step_task');

  // acme's order:charge, which no worker runs: three ready Steps in three partitions, the
  // first enqueued the oldest, and two delayed ones; order:ship holds a delayed Step only.
  const [a, b, c] = flowsInDistinctPartitions('acme', 3);
  const before = Date.now();
  await env.t.matching.enqueueStep({ step: step({ flow_id: a }) });
  const firstAt = Date.now();
  await sleep(20);
  await env.t.matching.enqueueStep({ step: step({ flow_id: b }) });
  await env.t.matching.enqueueStep({ step: step({ flow_id: c }) });
  const later = Date.now() + 600_000;
  await env.t.matching.enqueueStep({ step: step({ flow_id: a, step_execution_id: 'later', ready_at_ms: later }) });
  await env.t.matching.enqueueStep({ step: step({ flow_id: b, step_execution_id: 'later', ready_at_ms: later }) });
  await env.t.matching.enqueueStep({ step: step({ flow_id: c, step_type: 'ship', step_execution_id: 'later', ready_at_ms: later }) });
  // A queued Step of another of acme's flow types: listed for every flow type, never under order.
  await env.t.matching.enqueueStep({ step: step({ flow_id: 'r1', flow_type: 'refund', step_execution_id: 'refund-later', ready_at_ms: later }) });

  const order = (await env.t.matching.describeQueues({ tenant: 'acme', flow_type: 'order' })).queues;
  expect(order.map((q) => `${q.tenant}:${q.flow_type}:${q.step_type}`)).toEqual(['acme:order:charge', 'acme:order:ship']);
  const [charge, ship] = order;
  expect(charge).toMatchObject({ ready: 3, delayed: 2 });
  expect(Number(charge!.running ?? 0)).toBe(0);
  // The oldest of every partition: the first Step's readyAt, not a later one's.
  expect(Number(charge!.oldest_ready_at_ms)).toBeGreaterThanOrEqual(before);
  expect(Number(charge!.oldest_ready_at_ms)).toBeLessThanOrEqual(firstAt);
  // Nothing ready: no oldest ready entry (its delayed Step's readyAt is no such thing).
  expect(ship).toMatchObject({ ready: 0, delayed: 1 });
  expect(Number(ship!.oldest_ready_at_ms ?? 0)).toBe(0);

  // Every flow type of acme: billing's running Step counts in billing's queue, globex's in none.
  const all = (await env.t.matching.describeQueues({ tenant: 'acme' })).queues;
  expect(all.map((q) => `${q.tenant}:${q.flow_type}:${q.step_type}`)).toEqual(['acme:billing:invoice', 'acme:order:charge', 'acme:order:ship', 'acme:refund:charge']);
  expect(Number(all[0]!.running)).toBe(1);
  expect(Number(all[1]!.running ?? 0)).toBe(0);
});
