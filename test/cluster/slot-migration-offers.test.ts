/**
 * Offers while a Redis Cluster slot migrates (DESIGN §4): a partition whose
 * slot is split refuses every start (TRYAGAIN) until it has moved, each after
 * the client's retries. Its heads, oldest of their flow type, must not keep
 * the idle slots of that flow type to themselves meanwhile: the Steps of the
 * other partitions are offered and run, and the held ones run once the slot
 * has moved. A real 3-primary Redis Cluster, one node.
 */
import calculateSlot from 'cluster-key-slot';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { finishMigration, migrate, openMigration, ownerOf } from '../helpers/cluster-slots';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { useRedisCluster } from '../helpers/redis-cluster';
import { sleep } from '../helpers/wait';

const PARTITIONS = 8;
let t: TestNode | undefined;
const rc = useRedisCluster(() => t?.close());

let flows = 0;
function stepIn(p: number): { tenant: string; flow_id: string; flow_type: string; step_type: string; step_execution_id: string } {
  for (;;) {
    const flow = `f${++flows}`;
    if (partitionOf('acme', flow, PARTITIONS) === p) return { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 's', step_execution_id: 'x' };
  }
}

it('offers the Steps of other partitions to a flow type\'s one idle slot while the older Steps of a partition whose slot is migrating cannot start', async () => {
  // Leases far longer than the test: the migrating partition stays owned here throughout (its renewals are refused).
  t = await startTestNode('', uniquePrefix('mo'), {
    'redis.clusterNodes': [...rc.cluster.seeds], 'cluster.partitions': PARTITIONS, 'cluster.leaseTtl': '30s', 'cluster.nodeTtl': '30s',
  });
  const [moving, stable] = [3, 5];
  const held = [(await t.matching.enqueueStep({ step: stepIn(moving) })).task_id!, (await t.matching.enqueueStep({ step: stepIn(moving) })).task_id!];
  await sleep(5);
  const other = (await t.matching.enqueueStep({ step: stepIn(stable) })).task_id!;
  const slot = calculateSlot(t.node.keys.tag(moving));
  const src = await ownerOf(rc.cluster, slot);
  const dst = rc.cluster.nodes.map((n) => n.port).find((p) => p !== src)!;
  await openMigration(slot, src, dst);
  for (const id of held) expect(String(await migrate(src, dst, t.node.keys.task(moving, id)))).toBe('OK');

  const s = openSlot(t.worker, registerFrame());
  try {
    await s.nextOf('registered');
    // The first offer goes to the oldest, and fails after the client's retries; then the other
    // partition's Step, well before the lease (30 s) would have taken the migrating partition away.
    const first = (await s.nextOf('step_task', 15_000)).step_task!;
    expect(first.task_id).toBe(other);
    s.send({ step_result: { task_token: first.task_token, output: Buffer.from('ok') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);

    await finishMigration(rc.cluster, slot, src, dst);
    const ran: string[] = [];
    for (let i = 0; i < held.length; i++) {
      const task = (await s.nextOf('step_task', 15_000)).step_task!;
      ran.push(task.task_id!);
      s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
      expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    }
    expect(ran.sort()).toEqual([...held].sort());
  } finally {
    s.reset();
  }
}, 90_000);
