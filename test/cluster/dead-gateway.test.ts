/**
 * A gateway node that dies takes its slots with it (DESIGN §6): the attempts
 * running there fail as worker_lost within cluster.nodeTtl (plus the lease
 * handover when the dead node also owned the partition), through the retry
 * policy, without waiting for a timeout: a Step with no method or heartbeat
 * timeout would otherwise stay "running" for ever. A node only frozen that
 * long tells its slots running those attempts to stop once it runs again.
 * The dying node is a real child process killed with SIGKILL (or stopped with
 * SIGSTOP); the survivor runs in this process.
 */
import { createChannel, createClient } from 'nice-grpc';
import { Client, ZdUnavailableError } from '../../src';
import { partitionOf } from '../../src/store/keys';
import { pb, WorkerTaskServiceDefinition } from '../../src/wire';
import { startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const NODE_TTL = 1000;
const LEASE_TTL = 1500;
let dying: NodeProcess | undefined;
let survivor: TestNode | undefined;
afterEach(async () => {
  await dying?.kill('SIGKILL').catch(() => undefined);
  await survivor?.close();
});

/** A node process about to die with a worker slot on it, and a survivor in this process; both live. */
async function dyingAndSurvivor(survivorConfig: Record<string, unknown> = {}): Promise<{ survivor: TestNode; channel: ReturnType<typeof createChannel>; onDying: RawSlot }> {
  const prefix = uniquePrefix('deadgw');
  const cluster = { partitions: 8, heartbeat: '200ms', nodeTtl: `${NODE_TTL}ms`, leaseTtl: `${LEASE_TTL}ms` };
  dying = await startNodeProcess({ redisUrl: redis.url, keyPrefix: prefix, nodeId: 'n-dying', config: { cluster } });
  const live = await startTestNode(redis.url, prefix, { 'cluster.nodeId': 'n-survivor', ...survivorConfig });
  await waitFor(() => live.node.membership.liveIds().length === 2, { timeoutMs: 10_000, description: 'both nodes live' });
  const channel = createChannel(dying.apiAddress);
  const onDying = openSlot(createClient(WorkerTaskServiceDefinition, channel), registerFrame({ app_worker_id: 'w-dying' }));
  await onDying.nextOf('registered');
  return { survivor: live, channel, onDying };
}

it("fails a dead node's running attempt as worker_lost within nodeTtl and retries it elsewhere", async () => {
  const { survivor: live, channel, onDying } = await dyingAndSurvivor();
  survivor = live;
  // no method or heartbeat timeout: only the node's death can end this attempt
  const r = await survivor.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 3, initial_interval_ms: 50 } },
  });
  expect((await onDying.nextOf('step_task')).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  const onSurvivor = openSlot(survivor.worker, registerFrame({ app_worker_id: 'w-survivor' }));
  await onSurvivor.nextOf('registered');

  const killedAt = Date.now();
  await dying!.kill('SIGKILL');
  dying = undefined;
  channel.close();
  const retry = (await onSurvivor.nextOf('step_task', NODE_TTL + LEASE_TTL + 3000)).step_task!;
  expect(retry).toMatchObject({ task_id: r.task_id, attempt: 2 });
  expect(Date.now() - killedAt).toBeLessThan(NODE_TTL + LEASE_TTL + 3000);
  // the first attempt's end is on record as the failure the retry follows
  const task = (await survivor.matching.getTask({ task_id: r.task_id })).task!;
  expect(task.last_error?.type).toBe('worker_lost');
  onSurvivor.reset();
});

it("stops waiting for a sticky worker busy on a node that died once that node leaves the members", async () => {
  const STICKY_WAIT = 8000;
  const { survivor: live, channel, onDying } = await dyingAndSurvivor({ 'matching.stickyWait': `${STICKY_WAIT}ms`, 'matching.dispatchWait': '10s' });
  survivor = live;
  const partitions = survivor.config.cluster.partitions;
  await waitFor(() => survivor!.node.leases.heldPartitions().length === partitions / 2, { timeoutMs: 10_000, description: 'the partitions split' });
  let flow = '';
  for (let i = 0; !flow; i++) if (survivor.node.leases.holds(partitionOf('acme', `f${i}`, partitions)) !== undefined) flow = `f${i}`;
  // w-dying busy on the node about to die (one attempt: its loss retries nothing)
  await survivor.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 1 } },
  });
  await onDying.nextOf('step_task');
  await waitFor(() => survivor!.node.view.presence('acme', 'w-dying', 'order', 'pack') === 'busy', { timeoutMs: 5000, description: 'the survivor sees w-dying busy' });
  const onSurvivor = openSlot(survivor.worker, registerFrame({ app_worker_id: 'w-survivor' }));
  await onSurvivor.nextOf('registered');
  // a Step of the survivor's partitions, sticky to w-dying, waits for it
  const r = await survivor.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 'x', sticky_worker_id: 'w-dying' },
  });
  await expect(onSurvivor.nextOf('step_task', 300)).rejects.toThrow(/no frame/);
  expect(survivor.node.owner.waitingInMemory).toBe(1);

  // its node dies: once the survivor reads it gone from the members, the Step goes to w-survivor, not after the sticky wait
  const killedAt = Date.now();
  await dying!.kill('SIGKILL');
  dying = undefined;
  channel.close();
  const task = (await onSurvivor.nextOf('step_task', STICKY_WAIT)).step_task!;
  expect(task.task_id).toBe(r.task_id);
  expect(Date.now() - killedAt).toBeLessThan(NODE_TTL + 3000);
  onSurvivor.reset();
});

// The sweep runs on a membership change for partitions the survivor owned already, and
// in the load of a partition it takes over from the dead node: both must try again.
it.each(['the survivor', 'the dead node'])('sweeps again when failing the dead node\'s attempts hit a Redis error (a partition of %s)', async (ownedBy) => {
  const { survivor: live, channel, onDying } = await dyingAndSurvivor();
  survivor = live;
  const partitions = survivor.config.cluster.partitions;
  await waitFor(() => survivor!.node.leases.heldPartitions().length === partitions / 2, { timeoutMs: 10_000, description: 'the partitions split' });
  let flow = '';
  for (let i = 0; !flow; i++) {
    const held = survivor.node.leases.holds(partitionOf('acme', `f${i}`, partitions)) !== undefined;
    if (held === (ownedBy === 'the survivor')) flow = `f${i}`;
  }
  const r = await survivor.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 3, initial_interval_ms: 50 } },
  });
  await onDying.nextOf('step_task');
  const onSurvivor = openSlot(survivor.worker, registerFrame({ app_worker_id: 'w-survivor' }));
  await onSurvivor.nextOf('registered');

  // the survivor's first failure of an attempt meets an unreachable Redis (a fault injected once)
  const store = survivor.node.store;
  const fail = store.fail.bind(store);
  let injected = 0;
  store.fail = (...args: Parameters<typeof store.fail>) => (injected++ === 0 ? Promise.reject(new Error('Connection is closed.')) : fail(...args));
  await dying!.kill('SIGKILL');
  dying = undefined;
  channel.close();
  const retry = (await onSurvivor.nextOf('step_task', NODE_TTL + LEASE_TTL + 5000)).step_task!;
  expect(retry).toMatchObject({ task_id: r.task_id, attempt: 2 });
  expect(injected).toBeGreaterThanOrEqual(2);
  onSurvivor.reset();
});

it('cancels, once it runs again, the attempt a node frozen past nodeTtl held and its peer failed and retried meanwhile', async () => {
  const { survivor: live, channel, onDying } = await dyingAndSurvivor();
  survivor = live;
  const r = await survivor.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 3, initial_interval_ms: 50 } },
  });
  const first = (await onDying.nextOf('step_task')).step_task!;
  const onSurvivor = openSlot(survivor.worker, registerFrame({ app_worker_id: 'w-survivor' }));
  await onSurvivor.nextOf('registered');

  dying!.process.kill('SIGSTOP'); // its worker runs on; to its peer the node is gone after nodeTtl
  try {
    expect((await onSurvivor.nextOf('step_task', NODE_TTL + LEASE_TTL + 3000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 2 });
  } finally {
    dying!.process.kill('SIGCONT');
  }
  // Attempt 2 runs on w-survivor: the slot still running attempt 1 is told to stop, not left busy with it.
  const cancel = (await onDying.nextOf('cancel', 3000)).cancel!;
  expect(cancel.task_token).toBe(first.task_token);
  onDying.send({ step_result: { task_token: first.task_token, output: Buffer.from('late') } });
  expect((await onDying.nextOf('result_ack')).result_ack).toMatchObject({ verdict: pb.ResultVerdict.REFUSED_STALE });
  onSurvivor.reset();
  channel.close();
});

it('answers an RPC routed to a peer that stopped answering within the call budget', async () => {
  const prefix = uniquePrefix('frozen');
  const cluster = { partitions: 8, heartbeat: '200ms', nodeTtl: '5s', leaseTtl: '5s' };
  dying = await startNodeProcess({ redisUrl: redis.url, keyPrefix: prefix, nodeId: 'n-frozen', config: { cluster } });
  survivor = await startTestNode(redis.url, prefix, { 'cluster.nodeId': 'n-caller', 'cluster.nodeTtl': '5s', 'cluster.leaseTtl': '5s' });
  await waitFor(() => survivor!.node.membership.liveIds().length === 2, { timeoutMs: 10_000, description: 'both nodes live' });
  const channel = createChannel(dying.apiAddress);
  const remote = openSlot(createClient(WorkerTaskServiceDefinition, channel), registerFrame({ app_worker_id: 'w-frozen' }));
  await remote.nextOf('registered');
  await waitFor(() => survivor!.node.view.idleNodeFor('acme', 'order') === 'n-frozen', { timeoutMs: 5000, description: 'the caller sees the idle worker' });

  dying.process.kill('SIGSTOP'); // alive to the network, answering nothing
  // Through the SDK's Client, whose own deadline is the timeout plus its 1-s margin: the node's
  // UNAVAILABLE must come before it. A node that gave the frozen peer as long as that margin
  // raced the Client, whose caller got DEADLINE_EXCEEDED.
  const client = new Client({ address: survivor.node.apiAddress });
  try {
    const since = Date.now();
    const err = await client.invokeRpc({ tenant: 'acme', flowId: 'f', flowType: 'order', rpcName: 'status', input: Buffer.from('q'), timeoutMs: 1000 })
      .then(() => undefined, (e: Error) => e);
    expect(err).toBeInstanceOf(ZdUnavailableError);
    expect(err?.message).toContain('ZD_RPC_UNAVAILABLE');
    expect(Date.now() - since).toBeLessThan(2000);
  } finally {
    client.close();
    dying.process.kill('SIGCONT');
    channel.close();
  }
});
