/**
 * Outcome consumers of a Redis Cluster one of whose primaries does not answer
 * (down, no replica taken over): ConsumeOutcomes reads every partition's
 * stream, and the read of that primary's partitions must not fail the read of
 * the others' (DESIGN §8). New outcomes and unacked ones due for redelivery
 * of the partitions on the primaries that answer are delivered; with nothing
 * to deliver the call still answers ZD_STORE_UNAVAILABLE, not an empty list.
 * A real 3-primary Redis Cluster without replicas, one primary stopped.
 */
import { ClientError, Status } from 'nice-grpc';
import { Keys, partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { useRedisCluster } from '../helpers/redis-cluster';
import { servesKey } from '../helpers/cluster-slots';

let t: TestNode | undefined;
const rc = useRedisCluster(() => t?.close());

/** The partitions whose outcome stream `redis` sends a command about from now on. */
function streamsAsked(redis: unknown): Set<number> {
  const client = redis as { sendCommand: (command: { args: unknown[] }, ...rest: unknown[]) => unknown };
  const send = client.sendCommand.bind(client);
  const asked = new Set<number>();
  client.sendCommand = (command, ...rest) => {
    for (const a of command.args) {
      const m = /:\{(\d+)\}:out$/.exec(String(a));
      if (m) asked.add(Number(m[1]));
    }
    return send(command, ...rest);
  };
  return asked;
}

it('delivers the outcomes of the partitions on the primaries that answer while another primary is down', async () => {
  // The primary that goes holds partitions only, not the node's own keys nor the group registry:
  // a key prefix is picked that leaves one primary without them (four keys may take all three).
  let victim: number | undefined;
  let prefix = '';
  for (let attempt = 0; attempt < 50 && victim === undefined; attempt++) {
    prefix = uniquePrefix('opd');
    const keys = new Keys(prefix);
    for (const n of rc.cluster.nodes) {
      const own = await Promise.all([keys.members(), keys.meta(), keys.groups(), keys.groupsSeen()].map((k) => servesKey(n.port, k)));
      if (!own.some(Boolean)) victim = n.port;
    }
  }
  expect(victim).toBeDefined();
  t = await startTestNode('', prefix, { 'redis.clusterNodes': [...rc.cluster.seeds] });
  const node = t.node;
  const downPartitions: number[] = [];
  for (let p = 0; p < t.config.cluster.partitions; p++) if (await servesKey(victim!, `${node.keys.tag(p)}probe`)) downPartitions.push(p);
  expect(downPartitions.length).toBeGreaterThan(0);
  const upFlows: string[] = [];
  for (let i = 0; upFlows.length < 2; i++) {
    if (!(await servesKey(victim!, `${node.keys.tag(partitionOf('acme', `f${i}`, t.config.cluster.partitions))}probe`))) upFlows.push(`f${i}`);
  }
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 1 }); // the group, on every stream

  const s = openSlot(t.worker, registerFrame());
  const complete = async (flow: string) => {
    const id = (await t!.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 's', step_execution_id: 'x' } })).task_id!;
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    return id;
  };
  try {
    await s.nextOf('registered');
    // One outcome handed out and left unacked before the primary goes; one written after.
    const unacked = await complete(upFlows[0]!);
    const first = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 2000 });
    expect(first.outcomes.map((o) => o.task_id)).toEqual([unacked]);
    await rc.cluster.nodes.find((n) => n.port === victim)!.stop();
    const fresh = await complete(upFlows[1]!);

    const read = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 3000 });
    expect(read.outcomes.map((o) => o.task_id)).toEqual([fresh]);
    // That read found the down primary's partitions out of reach: the reads right after leave them
    // out (each read of them waits out the client's retries), and ask the others.
    const asked = streamsAsked(node.redis);
    // Due for redelivery (redeliver_after_ms): claimed from the partitions that answer.
    const again = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 3000, redeliver_after_ms: 1, ack: [read.outcomes[0]!.outcome_id!] });
    expect(again.outcomes.map((o) => o.task_id)).toEqual([unacked]);
    expect(asked.size).toBeGreaterThan(0);
    expect([...asked].filter((p) => downPartitions.includes(p))).toEqual([]);

    // Nothing left to deliver: the outage is said, not answered as an empty stream.
    const err = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 500, ack: [again.outcomes[0]!.outcome_id!] })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
    expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);
  } finally {
    s.reset();
  }
}, 90_000);
