/**
 * A message a node sends to itself is a local call (DESIGN §1): a single node
 * runs the same code as a cluster, yet the offers, owner notices, RPCs,
 * Cancels and attempt audits it addresses to itself never cross its own peer mesh.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'local');

const step = (flow_id: string): pb.IStepSpec => ({
  tenant: 'acme', flow_id, flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in'),
});

/** Every dexzd_mesh_messages_total series of the node, by message. */
async function meshMessages(): Promise<Record<string, number>> {
  const text = await env.t.node.metrics.registry.getSingleMetricAsString('dexzd_mesh_messages_total');
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/message="([^"]+)"\} (\d+)/g)) out[m[1]!] = Number(m[2]);
  return out;
}

it('offers, tells its own partitions, runs RPCs, audits attempts and cancels on itself without one mesh message', async () => {
  // Queued first: the Step reaches the slot by an owner's offer, not by a start at enqueue.
  const queued = await env.t.matching.enqueueStep({ step: step('f1') });
  const s = await env.registeredSlot();
  const waiting = env.t.matching.waitOutcome({ task_id: queued.task_id, wait_ms: 5000 });
  const task = (await s.nextOf('step_task')).step_task!;
  expect(task.task_id).toBe(queued.task_id);
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('out') } });
  await s.nextOf('result_ack');
  expect((await waiting).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED });

  const call = env.t.matching.invokeRpc({ tenant: 'acme', flow_id: 'r1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
  const rpc = (await s.nextOf('rpc_task')).rpc_task!;
  s.send({ rpc_result: { task_token: rpc.task_token, output: Buffer.from('fine') } });
  expect(Buffer.from((await call).output!).toString()).toBe('fine');
  await s.nextOf('result_ack');

  await env.t.matching.enqueueStep({ step: step('f2') });
  const running = (await s.nextOf('step_task')).step_task!;
  // The owners' look at their running attempts asks the node that runs each whether a slot holds it: here, itself.
  expect(await env.t.node.owner.unheldAttempts.runOnce()).toBe(0);
  expect(await env.t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f2' })).toMatchObject({ cancelled_running: 1 });
  expect((await s.nextOf('cancel')).cancel!.task_token).toBe(running.task_token);

  const sent = await meshMessages();
  expect(Object.keys(sent).length).toBeGreaterThan(0);
  expect(Object.entries(sent).filter(([, n]) => n > 0)).toEqual([]);
});
