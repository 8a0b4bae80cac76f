/**
 * One primary of a Redis Cluster frozen (SIGSTOP: its connections stay open and
 * nothing answers) while this node still holds the leases of its partitions
 * (less than cluster.leaseTtl). What this node does for the partitions on the
 * primaries that answer must go on:
 * - the backlog count (owner/backlog.ts: the queue gauges, and the look for ready
 *   entries whose notice went missing) went over the owned partitions one after
 *   the other, stopped at the first frozen one, and counted no partition after
 *   it until the lease lapsed;
 * - the Cancel to a slot whose attempt ended without it (Gateway.cancelEnded)
 *   waited on one read of every partition its slots run attempts of, and the
 *   audit pass that sends it waited first for the owners' look, which reads
 *   every owned partition;
 * - the heads resync (owner/resync.ts) went over them one after the other as well;
 * - the attempt audit's look (owner/unheld-attempts.ts) waited on the reads of every
 *   owned partition, and failed the attempts it found unheld one after the other;
 * - the outcome trim went over the partitions one after the other too, and its
 *   XINFO GROUPS went to a primary at random (ioredis finds no key in it), the
 *   frozen one a time in three, whatever partition it was for.
 * cluster-node-timeout is raised so that no failover ends the freeze.
 */
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { Keys, partitionOf, queueName } from '../../src/store/keys';
import { streamGroups } from '../../src/store/outcomes';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { servesKey } from '../helpers/cluster-slots';
import { keepRunningAttempt } from '../helpers/lost-completion';
import { pb } from '../../src/wire';

const PARTITIONS = 24;

let cluster: RedisCluster;
let t: TestNode | undefined;

beforeAll(async () => {
  // Streams of one entry a node: an approximate trim (MINID ~) drops each entry past the retention.
  cluster = await startRedisCluster({ masters: 3, args: ['--cluster-node-timeout', '60000', '--stream-node-max-entries', '1'] });
}, 90_000);
afterEach(async () => {
  for (const n of cluster.nodes) n.kill('SIGCONT');
  await t?.close();
  t = undefined;
});
afterAll(async () => {
  for (const n of cluster?.nodes ?? []) n.kill('SIGCONT');
  await t?.close().catch(() => undefined);
  await cluster?.stop();
});

/**
 * A node owning every partition, a primary that holds none of the node's own keys (frozen, it
 * holds partitions only: the node's heartbeat goes on), and a partition on another primary that
 * the owner counts after one of the frozen primary's. Partitions are owned in the order their
 * leases were taken, by primary more or less: a node whose order does not fit is closed and
 * another started, with another key prefix (and so other primaries for its keys).
 */
async function ownerWithFrozenFirst(config: Record<string, unknown> = {}): Promise<{ node: TestNode['node']; frozen: number; answering: number }> {
  const nodeId = 'fpb-a';
  // Most prefixes leave no primary free (each of the node's keys lands on one at random) and cost a
  // few reads; the leases' order follows the primaries' answers, which a loaded machine reorders.
  for (let attempt = 0; attempt < 80; attempt++) {
    const prefix = uniquePrefix('fpb');
    const keys = new Keys(prefix);
    const own = [keys.members(), keys.meta(), keys.node(nodeId), keys.groups(), keys.groupsSeen()];
    const free: number[] = [];
    for (const [i, n] of cluster.nodes.entries()) {
      if (!(await Promise.all(own.map((k) => servesKey(n.port, k)))).some(Boolean)) free.push(i);
    }
    if (free.length === 0) continue;
    t = await startTestNode('', prefix, {
      'redis.clusterNodes': [...cluster.seeds], 'cluster.partitions': PARTITIONS, 'cluster.nodeId': nodeId,
      'cluster.nodeTtl': '2s', 'cluster.heartbeat': '250ms', 'cluster.leaseTtl': '60s', ...config,
    });
    const node = t.node;
    await waitFor(() => node.owner.owned().length === PARTITIONS, { timeoutMs: 20_000, description: 'every partition owned' });
    const order = node.owner.owned().map((p) => p.partition);
    for (const frozen of free) {
      const onFrozen = await Promise.all(order.map((p) => servesKey(cluster.nodes[frozen]!.port, `${keys.tag(p)}probe`)));
      const firstFrozen = onFrozen.indexOf(true);
      const answering = order.find((_, i) => firstFrozen >= 0 && i > firstFrozen && !onFrozen[i]);
      if (answering !== undefined) return { node, frozen, answering };
    }
    await t.close();
    t = undefined;
  }
  throw new Error('no key prefix gave a primary to freeze ahead of one that answers');
}

it('counts the backlog of the partitions on the primaries that answer while another primary is frozen', async () => {
  const { node, frozen, answering } = await ownerWithFrozenFirst();
  let flow = 0;
  while (partitionOf('acme', `f${flow}`, PARTITIONS) !== answering) flow++;
  let steps = 0;
  const enqueue = async (n: number) => {
    for (let i = 0; i < n; i++) {
      await t!.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `f${flow}`, flow_type: 'order', step_type: 's', step_execution_id: `x${steps++}` } });
    }
  };
  const counted = () => node.owner.backlog.snapshot().queues.find((q) => q.flowType === 'order' && q.stepType === 's')?.entries ?? 0;

  cluster.nodes[frozen]!.kill('SIGSTOP');
  try {
    await enqueue(3);
    await waitFor(() => counted() === 3, { timeoutMs: 15_000, description: 'the 3 Steps counted' });
    // Counted by a pass that went by the frozen partition after the freeze began.
    await enqueue(2);
    await waitFor(() => counted() === 5, { timeoutMs: 15_000, description: 'the 5 Steps counted' });
  } finally {
    cluster.nodes[frozen]!.kill('SIGCONT');
  }
}, 120_000);

it('sends Cancel to a slot whose attempt ended on a primary that answers while another primary is frozen', async () => {
  const { node, frozen, answering } = await ownerWithFrozenFirst();
  const frozenPort = cluster.nodes[frozen]!.port;
  const flowIn = async (up: boolean) => {
    for (let i = 0; ; i++) {
      const p = partitionOf('acme', `c${i}`, PARTITIONS);
      if (up ? p === answering : await servesKey(frozenPort, `${node.keys.tag(p)}probe`)) return { flow: `c${i}`, p };
    }
  };
  // A slot running an attempt of a partition on each primary.
  const slotWith = async (flow: string) => {
    const s = openSlot(t!.worker, registerFrame());
    await s.nextOf('registered');
    await t!.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 's', step_execution_id: 'x' } });
    return { s, task: (await s.nextOf('step_task')).step_task! };
  };
  const onFrozen = await slotWith((await flowIn(false)).flow);
  const up = await flowIn(true);
  const onAnswering = await slotWith(up.flow);
  try {
    // Its flow cancelled, and the Cancel for the slot lost on its way (the store's call alone).
    expect((await node.store.cancelFlow(up.p, 'acme', up.flow, 'stop', Date.now())).running).toHaveLength(1);
    cluster.nodes[frozen]!.kill('SIGSTOP');
    try {
      // The minute's audit pass: its owners' look waits on the frozen primary's partitions.
      void node.attemptAudit.runOnce();
      expect((await onAnswering.s.nextOf('cancel', 5000)).cancel).toMatchObject({ task_token: onAnswering.task.task_token });
    } finally {
      cluster.nodes[frozen]!.kill('SIGCONT');
    }
  } finally {
    onFrozen.s.reset();
    onAnswering.s.reset();
  }
}, 120_000);

it('restores a lost head of a partition on a primary that answers while another primary is frozen', async () => {
  // The resync only by hand ('0'), and so with a grace of 50 ms for entries on their way in.
  const { node, frozen, answering } = await ownerWithFrozenFirst({ 'matching.syncMatchWait': '20ms', 'matching.headsResyncInterval': '0' });
  let flow = 0;
  while (partitionOf('acme', `f${flow}`, PARTITIONS) !== answering) flow++;
  const enqueue = (id: string) => t!.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `f${flow}`, flow_type: 'order', step_type: 's', step_execution_id: id } });
  // Two Steps: the heads still hold one once the other is lost, so the backlog count (which refills
  // heads that hold nothing) leaves the loss to the resync.
  const [lost, kept] = [await enqueue('x'), await enqueue('y')];
  const q = node.owner.get(answering)!.queueFor(queueName('acme', 'order', 's'));
  await waitFor(() => q.size === 2 && q.has(lost.task_id!) && q.has(kept.task_id!), { timeoutMs: 5000, description: 'both Steps in their queue heads' });
  expect(q.drop(lost.task_id!)).toBe(true); // the loss the resync exists for

  cluster.nodes[frozen]!.kill('SIGSTOP');
  try {
    await new Promise((res) => setTimeout(res, 100));
    void node.owner.resync.runOnce();
    await waitFor(() => q.has(lost.task_id!), { timeoutMs: 5000, description: 'the lost head restored' });
  } finally {
    cluster.nodes[frozen]!.kill('SIGCONT');
  }
}, 120_000);

it('fails an attempt no slot holds, of a partition on a primary that answers, while another primary is frozen', async () => {
  const { node, frozen, answering } = await ownerWithFrozenFirst();
  let flow = 0;
  while (partitionOf('acme', `f${flow}`, PARTITIONS) !== answering) flow++;
  const slot = openSlot(t!.worker, registerFrame());
  try {
    await slot.nextOf('registered');
    const { task_id: taskId } = await t!.matching.enqueueStep({
      step: { tenant: 'acme', flow_id: `f${flow}`, flow_type: 'order', step_type: 's', step_execution_id: 'x', retry_policy: { max_attempts: 1 } },
    });
    const task = (await slot.nextOf('step_task')).step_task!;
    // Redis loses the completion: the attempt runs there, and no slot holds it.
    const { loseCompletion } = await keepRunningAttempt(t!, taskId!);
    slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
    expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    await loseCompletion();

    cluster.nodes[frozen]!.kill('SIGSTOP');
    try {
      // Two looks find it unheld; the first waits a while for the frozen primary's partitions, the second
      // does not ask them again.
      const bounded = (p: Promise<number>) => Promise.race([p, new Promise<string>((r) => setTimeout(() => r('no answer'), 20_000))]);
      await expect(bounded(node.owner.unheldAttempts.runOnce())).resolves.toBe(0);
      await expect(bounded(node.owner.unheldAttempts.runOnce())).resolves.toBe(1);
      const ended = (await t!.matching.getTask({ task_id: taskId })).task;
      expect(ended?.state).not.toBe(pb.TaskState.RUNNING);
      expect(ended?.outcome?.error?.type).toBe('worker_lost');
    } finally {
      cluster.nodes[frozen]!.kill('SIGCONT');
    }
  } finally {
    slot.reset();
  }
}, 120_000);

it('trims the outcomes of the partitions on the primaries that answer while another primary is frozen', async () => {
  const { node, frozen, answering } = await ownerWithFrozenFirst({ 'outcomes.retention': '1s' });
  const out = node.keys.out(answering);
  let port = 0;
  for (const n of cluster.nodes) if (await servesKey(n.port, out)) port = n.port;
  expect(port).toBeGreaterThan(0);
  const length = async () => Number(await sendCommand(port, ['XLEN', out]));

  cluster.nodes[frozen]!.kill('SIGSTOP');
  try {
    // Outcomes older than the retention once the next trim comes (every 10 s), no group to keep them.
    for (let i = 0; i < 3; i++) await sendCommand(port, ['XADD', out, '*', 'task', `t${i}`]);
    expect(await length()).toBe(3);
    // Up to two trims apart (10 s each) when the first comes within the retention of the entries.
    await waitFor(async () => (await length()) === 0, { timeoutMs: 40_000, description: 'the outcomes trimmed' });
  } finally {
    cluster.nodes[frozen]!.kill('SIGCONT');
  }
}, 120_000);

it('sends XINFO and XGROUP of a partition\'s stream to the primary that holds it, not to one at random', async () => {
  t = await startTestNode('', uniquePrefix('fpb-moved'), {
    'redis.clusterNodes': [...cluster.seeds], 'cluster.partitions': PARTITIONS, 'cluster.leaseTtl': '60s',
  });
  const node = t.node;
  const moved = async () => {
    let sum = 0;
    for (const n of cluster.nodes) sum += Number(/errorstat_MOVED:count=(\d+)/.exec(String(await sendCommand(n.port, ['INFO', 'errorstats'])))?.[1] ?? 0);
    return sum;
  };
  const before = await moved();
  await node.outcomes.ensureGroup('engine'); // XGROUP CREATE on every partition's stream
  for (let p = 0; p < PARTITIONS; p++) {
    expect(await streamGroups(node.redis, node.keys.out(p), true)).toEqual([expect.objectContaining({ name: 'engine' })]);
  }
  // 48 calls over 3 primaries: about 32 answered MOVED when each went to a primary at random.
  expect(await moved()).toBe(before);
}, 60_000);
