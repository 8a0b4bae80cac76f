/**
 * The primary that holds a Redis Cluster's members key killed, its replica taking
 * over only after cluster-node-timeout (DESIGN §3, §11): no node can heartbeat
 * for longer than cluster.nodeTtl, so every score is that old when the members
 * key is served again. The node that beats first there must not take its peer
 * for gone and fail the attempt the peer's slot runs as worker_lost (an attempt
 * runs in one slot at most, and a live worker's is not failed); the two see each
 * other again, and the worker's result is the Step's outcome, at attempt 1.
 * A real 3-primary Cluster, each primary with a replica.
 */
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { primaryIndexOf, servesKey } from '../helpers/cluster-slots';

let cluster: RedisCluster;
const nodes: TestNode[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicaOf: [0, 1, 2] });
}, 90_000);
afterAll(async () => {
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
  await cluster?.stop();
});

it('keeps the attempt a peer\'s slot runs when the members key\'s primary is down for longer than nodeTtl', async () => {
  const partitions = 12;
  const config = {
    'redis.clusterNodes': [...cluster.seeds], 'cluster.partitions': partitions,
    'cluster.nodeTtl': '3s', 'cluster.heartbeat': '300ms', 'cluster.leaseTtl': '1500ms',
  };
  const prefix = uniquePrefix('mpd');
  const a = await startTestNode('', prefix, config);
  // B beats every 2 s: when the members key is served again, A beats first (as the node whose
  // reconnect comes first would) and finds B's score older than nodeTtl.
  const b = await startTestNode('', prefix, { ...config, 'cluster.heartbeat': '2s' });
  nodes.push(a, b);
  const victimIndex = await primaryIndexOf(cluster, a.node.keys.members());
  expect(victimIndex).toBeGreaterThanOrEqual(0);
  const victim = cluster.nodes[victimIndex]!;
  await waitFor(() => a.node.owner.owned().length > 0 && a.node.owner.owned().length + b.node.owner.owned().length === partitions,
    { timeoutMs: 15_000, description: 'the partitions shared' });

  // A Step of a partition A owns, whose keys live on another primary, running in a slot of B.
  const owned = new Set(a.node.owner.owned().map((p) => p.partition));
  let flow = -1;
  for (let i = 0; i < 1000 && flow < 0; i++) {
    const p = partitionOf('acme', `f${i}`, partitions);
    if (owned.has(p) && !(await servesKey(victim.port, `${a.node.keys.tag(p)}probe`))) flow = i;
  }
  expect(flow).toBeGreaterThanOrEqual(0);
  const slot = openSlot(b.worker, registerFrame());
  await slot.nextOf('registered');
  const r = await a.matching.enqueueStep({
    step: {
      tenant: 'acme', flow_id: `f${flow}`, flow_type: 'order', step_type: 's', step_execution_id: 'x',
      retry_policy: { max_attempts: 1 }, // a worker_lost failure would end the Step
    },
  });
  const task = (await slot.nextOf('step_task')).step_task!;
  expect(task.task_id).toBe(r.task_id);

  // The members key out of reach until the replica takes over (cluster-node-timeout 5 s, then an election).
  victim.kill('SIGKILL');
  await victim.exited();
  await waitFor(async () => /role:master/.test(String(await sendCommand(cluster.replicas[victimIndex]!.port, ['INFO', 'replication']))),
    { timeoutMs: 30_000, intervalMs: 200, description: 'the replica taking over' });
  await waitFor(() => b.node.membership.liveIds().includes(a.node.nodeId) && a.node.membership.liveIds().includes(b.node.nodeId),
    { timeoutMs: 20_000, description: 'both nodes live again' });

  // The worker was never lost: its result is the Step's outcome.
  slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  const ack = await slot.nextOf('result_ack', 10_000);
  expect(pb.ResultVerdict[ack.result_ack!.verdict!]).toBe('ACCEPTED');
  const outcome = (await a.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 })).outcome;
  expect(outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  slot.reset();
}, 90_000);
