/**
 * A Step offered in its sync-match phase whose offer bounces (no-slot) after its
 * partition left this node goes back to the heads of the queue object it came
 * from (placement.ts toHeads). That object is the old owner's: once the partition
 * is back here, a new one holds the partition's heads, and the registry must not
 * offer from the old one too (registry.ts headsAvailable), or every task it holds
 * is offered twice and one offer is refused as gone.
 *
 * One node, a real redis-server. The sync-match offer is held at the gateway
 * while the partition's lease is lost (deleted under the node) and taken again,
 * then it bounces.
 */
import type { OfferRef, OfferResult } from '../../src/owner/dispatcher';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
let w: RawSlot | undefined;
beforeEach(async () => {
  // A long sync-match phase: the Step is still in it when the slot below registers.
  t = await startTestNode(redis.url, uniquePrefix('stale-q'), { 'matching.syncMatchWait': '5s' });
  await waitFor(() => t.node.leases.heldPartitions().length === t.config.cluster.partitions, { timeoutMs: 10_000, description: 'the node holds every partition' });
});
afterEach(async () => {
  w?.reset();
  await t.close();
});

const offers = async (result: OfferResult) => (await t.node.metrics.registry.getSingleMetric('dexzd_matching_offers_total')!.get())
  .values.find((v) => v.labels.result === result)?.value ?? 0;

it('offers a Step whose sync-match offer bounced after its partition left and came back from the new heads only', async () => {
  const step = { tenant: 'acme', flow_id: 'stale-1', flow_type: 'order', step_type: 'charge', step_execution_id: 's' };
  const p = partitionOf('acme', step.flow_id, t.config.cluster.partitions);
  const r = await t.matching.enqueueStep({ step }); // no slot yet: it waits in its sync-match phase
  expect(t.node.owner.waitingInMemory).toBe(1);

  // The gateway holds the first offer, the sync-match one, and answers it no-slot when told.
  const gw = t.node.gateway as unknown as { offer: (ref: OfferRef) => Promise<OfferResult> };
  const real = gw.offer.bind(gw);
  let bounce: (() => void) | undefined;
  gw.offer = (ref) => {
    if (bounce || ref.taskId !== r.task_id) return real(ref);
    expect(ref.path).toBe('sync');
    return new Promise<OfferResult>((resolve) => (bounce = () => resolve('no-slot')));
  };
  w = openSlot(t.worker, registerFrame({ app_worker_id: 'w1' }));
  await w.nextOf('registered');
  await waitFor(() => bounce, { timeoutMs: 5000, description: 'the sync-match offer is out' });

  // The partition leaves (its lease is found lost) and comes back: its new heads load the Step from Redis.
  const epoch = t.node.leases.holds(p)!.epoch;
  await redis.command('DEL', t.node.keys.lease(p));
  await waitFor(() => (t.node.leases.holds(p)?.epoch ?? 0) > epoch, { timeoutMs: 5000, description: 'the node holds the partition again' });
  const task = (await w.nextOf('step_task', 5000)).step_task!;
  expect(task).toMatchObject({ task_id: r.task_id, attempt: 1 });

  // The old offer bounces now, into the old queue object; then the Step completes and the slot is idle.
  const goneBefore = await offers('gone');
  bounce!();
  await sleep(50);
  w.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await w.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  // An idle slot makes the pump offer whatever its queues hold at once: the old queue would offer the Step again.
  await sleep(1000);
  expect(await offers('gone')).toBe(goneBefore);

  // The node offers as before: a new Step runs on the slot.
  await t.matching.enqueueStep({ step: { ...step, step_execution_id: 's2' } });
  expect((await w.nextOf('step_task', 3000)).step_task!.step_execution_id).toBe('s2');
  expect(await offers('gone')).toBe(goneBefore);
}, 30_000);
