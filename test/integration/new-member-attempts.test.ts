/**
 * An owner fails the attempts of a node instance that is gone (DESIGN §6), but
 * "gone" is what Redis says now, not the member list the owner last read: a
 * node that joined or restarted since the owner's last heartbeat is live in
 * Redis and may already run attempts. Two nodes in this process, a real
 * redis-server; the owner's stale list is the one it would hold between the
 * other's first heartbeat and its own next one.
 */
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { useNodePair } from '../helpers/node-pair';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();

/** A flow whose partition `owner` holds. */
function flowOwnedBy(owner: TestNode): string {
  for (let i = 0; ; i++) if (owner.node.leases.holds(partitionOf('acme', `nm${i}`, owner.config.cluster.partitions)) !== undefined) return `nm${i}`;
}

/** Forgets `nodeId` in `t`'s member list, as it stands before `t` has read that node's first heartbeat. */
function forgetMember(t: TestNode, nodeId: string): void {
  (t.node.membership as unknown as { members: Map<string, unknown> }).members.delete(nodeId);
}

describe('an owner whose member list predates a node', () => {
const pair = useNodePair(redis, 'newmember', { 'matching.syncMatchWait': '2s' });

it('leaves an attempt running on a node its owner has not yet read as a member', async () => {
  const { a, b } = pair;
  const slot = await pair.slotAt(b, 'w-b');
  const { task_id } = await a.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: flowOwnedBy(a), flow_type: 'order', step_type: 'charge', step_execution_id: 's1' },
  });
  const started = await slot.nextOf('step_task');
  expect(started.step_task?.task_id).toBe(task_id);

  forgetMember(a, b.node.nodeId);
  expect(a.node.membership.isLive(b.node.nodeId, b.node.bootId)).toBe(false);
  await a.node.owner.membershipChanged();
  // Still running on b: its result is accepted.
  expect((await a.matching.getTask({ task_id })).task?.state).toBe(pb.TaskState.RUNNING);
  slot.send({ step_result: { task_token: started.step_task!.task_token, output: Buffer.from('ok') } });
  expect((await slot.nextOf('result_ack')).result_ack?.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await a.matching.waitOutcome({ task_id, wait_ms: 2000 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
});
});

describe('a node not yet among the members it has read', () => {
  let t: TestNode;
  beforeAll(async () => {
    // A heartbeat long enough that the test's forgetting stands until it is done.
    t = await startTestNode(redis.url, uniquePrefix('selfmember'), { 'cluster.heartbeat': '20s', 'cluster.nodeTtl': '60s' });
  });
  afterAll(() => t?.close());

  it('starts no Step at enqueue (its owner would take the attempt for a dead node\'s), and the owner still dispatches it', async () => {
    const slot = openSlot(t.worker, registerFrame({ app_worker_id: 'w-self' }));
    try {
      await slot.nextOf('registered');
      // A Step the owner places is an offer taken; one started at enqueue is none.
      const offersTaken = async () => {
        const { values } = await t.node.metrics.offers.get();
        return values.find((v) => v.labels.result === 'taken')?.value ?? 0;
      };
      forgetMember(t, t.node.nodeId);
      const before = await offersTaken();
      const { task_id } = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'self1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' } });
      const started = await slot.nextOf('step_task');
      expect(started.step_task?.task_id).toBe(task_id);
      expect(await offersTaken()).toBe(before + 1);
      slot.send({ step_result: { task_token: started.step_task!.task_token, output: Buffer.from('ok') } });
      expect((await slot.nextOf('result_ack')).result_ack?.verdict).toBe(pb.ResultVerdict.ACCEPTED);
      // Once it has read itself again, a new Step starts at enqueue.
      await t.node.membership.beat();
      await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'self2', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' } });
      await slot.nextOf('step_task');
      expect(await offersTaken()).toBe(before + 1); // started at enqueue: no offer
    } finally {
      slot.reset();
    }
  });
});
