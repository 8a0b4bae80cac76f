/**
 * The attempt audit across two nodes (owner/unheld-attempts.ts): the owner of a
 * partition reads its running attempts and asks the node each runs on whether a
 * slot there holds it; the node itself reads nothing of partitions it does not
 * own. So the cluster reads each running attempt once a look: when every node read
 * every partition's attempts to find its own, the reads grew with nodes × attempts.
 * Redis's loss of a completion is played by putting back what the completion
 * script changed (as in lost-attempt-end.test.ts). Two nodes in this process over
 * a real redis-server and the real peer mesh.
 */
import { partitionOf, partitionOfTaskId } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { useNodePair } from '../helpers/node-pair';
import type { TestNode } from '../helpers/node';
import { useEmbeddedRedis } from '../helpers/redis';
import type { RawSlot } from '../helpers/raw-slot';
import { keepRunningAttempt } from '../helpers/lost-completion';

const redis = useEmbeddedRedis();
const pair = useNodePair(redis, 'unheld');

/** A flow whose partition `owner` holds. */
function flowOwnedBy(owner: TestNode): string {
  for (let i = 0; ; i++) if (owner.node.leases.holds(partitionOf('acme', `uh${i}`, owner.config.cluster.partitions)) !== undefined) return `uh${i}`;
}

const step = (flowId: string) => ({
  tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 3, initial_interval_ms: 10 },
});

/** A Step of a partition `owner` holds, run and completed in `slot` (on the other node); then Redis loses the completion. */
async function completionLost(owner: TestNode, slot: RawSlot): Promise<{ taskId: string; p: number }> {
  const { task_id: taskId } = await owner.matching.enqueueStep({ step: step(flowOwnedBy(owner)) });
  const task = (await slot.nextOf('step_task')).step_task!;
  const { p, loseCompletion } = await keepRunningAttempt(owner, taskId!);
  slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('first') } });
  expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  await loseCompletion();
  expect((await owner.matching.getTask({ task_id: taskId })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });
  return { taskId: taskId!, p };
}

/** Records the inflight sets `t`'s Redis client reads. */
function inflightReads(t: TestNode): number[] {
  const rc = t.node.redis as unknown as { zrange: (...args: unknown[]) => Promise<unknown> };
  const orig = rc.zrange.bind(rc);
  const read: number[] = [];
  rc.zrange = (...args: unknown[]) => {
    const m = /:\{(\d+)\}:inflight$/.exec(String(args[0]));
    if (m) read.push(Number(m[1]));
    return orig(...args);
  };
  return read;
}

it('fails, on its owner\'s second look, an attempt Redis says runs on the peer that no slot of the peer holds; the peer reads only its own partitions', async () => {
  const { a, b } = pair;
  const slot = await pair.slotAt(b, 'w-b');
  const { taskId, p } = await completionLost(a, slot);

  // b runs the attempt but does not own its partition: its looks leave it, and read none of a's partitions.
  const readByB = inflightReads(b);
  expect(await b.node.attemptAudit.runOnce()).toBe(0);
  expect(await b.node.attemptAudit.runOnce()).toBe(0);
  expect(readByB.length).toBeGreaterThan(0);
  expect(readByB.filter((q) => b.node.leases.holds(q) === undefined)).toEqual([]);
  expect(readByB).not.toContain(p);
  expect((await a.matching.getTask({ task_id: taskId })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });

  // a owns it and asks b: unheld once is not yet enough; twice, it fails as worker lost and is retried.
  expect(await a.node.attemptAudit.runOnce()).toBe(0);
  expect(await a.node.attemptAudit.runOnce()).toBe(1);
  const retry = (await slot.nextOf('step_task', 3000)).step_task!;
  expect(retry).toMatchObject({ task_id: taskId, attempt: 2 });
  slot.send({ step_result: { task_token: retry.task_token, output: Buffer.from('second') } });
  expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  const outcome = (await a.matching.waitOutcome({ task_id: taskId, wait_ms: 3000 })).outcome;
  expect(outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 2 });
  expect(Buffer.from(outcome!.output!).toString()).toBe('second');
});

it('leaves alone an attempt a slot of the peer holds, however many looks its owner takes', async () => {
  const { a, b } = pair;
  const slot = await pair.slotAt(b, 'w-b');
  const { task_id: taskId } = await a.matching.enqueueStep({ step: step(flowOwnedBy(a)) });
  const task = (await slot.nextOf('step_task')).step_task!;
  for (let i = 0; i < 3; i++) expect(await a.node.attemptAudit.runOnce()).toBe(0);
  slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await a.matching.waitOutcome({ task_id: taskId, wait_ms: 3000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
});

it('fails nothing on a look the peer does not answer, and keeps what the look before found for the next', async () => {
  const { a, b } = pair;
  const slot = await pair.slotAt(b, 'w-b');
  const { taskId } = await completionLost(a, slot);
  expect(await a.node.attemptAudit.runOnce()).toBe(0); // found unheld once

  // The peer cannot answer (an older build, a broken link): its attempts are left as they are.
  const gw = b.node.gateway as unknown as { heldAmong: (nonces: string[]) => boolean[] };
  const heldAmong = gw.heldAmong.bind(gw);
  gw.heldAmong = () => {
    throw new Error('no answer');
  };
  expect(await a.node.attemptAudit.runOnce()).toBe(0);
  expect((await a.matching.getTask({ task_id: taskId })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });

  // Answered again, and unheld: the look before the silence counts as the first.
  gw.heldAmong = heldAmong;
  expect(await a.node.attemptAudit.runOnce()).toBe(1);
  expect((await slot.nextOf('step_task', 3000)).step_task).toMatchObject({ task_id: taskId, attempt: 2 });
});

it('asks a peer about many attempts in calls of a bounded size, and trusts no answer from another instance of its id', async () => {
  const { a, b } = pair;
  const slot = await pair.slotAt(b, 'w-b');
  const { task_id: taskId } = await a.matching.enqueueStep({ step: step(flowOwnedBy(a)) });
  const task = (await slot.nextOf('step_task')).step_task!;
  const p = partitionOfTaskId(taskId!, a.config.cluster.partitions)!;
  const nonce = (await a.node.redis.hget(a.node.keys.task(p, taskId!), 'nonce'))!;
  const calls = async () => Number(/message="held_attempts"} (\d+)/.exec(await a.node.metrics.registry.getSingleMetricAsString('dexzd_mesh_messages_total'))![1]);

  const before = await calls();
  const nonces = [...Array.from({ length: 2400 }, (_, i) => `none-${i}`), nonce];
  const held = await a.node.mesh.heldAttempts(b.node.nodeId, b.node.bootId, nonces);
  expect(held).toHaveLength(2401);
  expect(held!.filter(Boolean)).toHaveLength(1);
  expect(held![2400]).toBe(true);
  expect(await calls() - before).toBe(3); // 1000 nonces a call
  // The id's instance that runs now is not the one asked about: no answer.
  expect(await a.node.mesh.heldAttempts(b.node.nodeId, 'an-earlier-boot', [nonce])).toBeUndefined();
  slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
});
