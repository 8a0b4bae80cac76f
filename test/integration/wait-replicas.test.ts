/**
 * redis.waitReplicas (DESIGN §9): an enqueue is acknowledged only once as many
 * replicas as configured have it (WAIT), on a real primary with one real
 * replica. Asking for more replicas than confirm within the wait is not an
 * acknowledgement: the producer gets UNAVAILABLE naming the setting, and its
 * retry finds the Step (idempotent enqueue).
 */
import { Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { storeUnavailable } from '../../src/errors/store-unavailable';
import { sendCommand, startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { createRedis, waitForReplicas } from '../../src/store/redis';
import { partitionOf, queueName } from '../../src/store/keys';
import { startTestNode, type TestNode } from '../helpers/node';
import { completeSteps } from '../helpers/outcomes';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const primary = useEmbeddedRedis();
let replica: EmbeddedRedis;
let t: TestNode | undefined;

beforeAll(async () => {
  replica = await startEmbeddedRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  for (let i = 0; i < 200; i++) {
    const info = String(await primary.command('INFO', 'replication'));
    if (/connected_slaves:1/.test(info) && /state=online/.test(info)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the replica did not come online');
});
afterAll(async () => {
  await replica?.stop();
});
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const step = (i: number) => ({ tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: 'pack', step_execution_id: 's' });

it('acknowledges an enqueue once the replica has it', async () => {
  t = await startTestNode(primary.url, uniquePrefix('wr'), { 'redis.waitReplicas': 1 });
  const r = await t.matching.enqueueStep({ step: step(1) });
  expect(r.created).toBe(true);
  // no waiting here: WAIT returned only once the replica had applied the script
  const key = t.node.keys.task(r.partition!, r.task_id!);
  expect(await sendCommand(replica.port, ['EXISTS', key])).toBe(1);
});

it('refuses to acknowledge an enqueue that fewer replicas than asked for confirm', async () => {
  t = await startTestNode(primary.url, uniquePrefix('wr'), { 'redis.waitReplicas': 2 });
  const err = await t.matching.enqueueStep({ step: step(2) }).then(() => undefined, (e: { code: Status; details: string }) => e);
  expect(err?.code).toBe(Status.UNAVAILABLE);
  expect(err?.details).toContain('reached 1 of the 2 replicas redis.waitReplicas asks for');
  // the Step is in Redis all the same, queued: a retry finds it (and is refused
  // again while the replicas it asks for are missing)
  const p = partitionOf('acme', 'f2', t.node.config.cluster.partitions);
  expect(await primary.command('ZCARD', t.node.keys.queue(p, queueName('acme', 'order', 'pack')))).toBe(1);
  const again = await t.matching.enqueueStep({ step: step(2) }).catch((e: { code: Status }) => e);
  expect((again as { code: Status }).code).toBe(Status.UNAVAILABLE);
  expect(await primary.command('ZCARD', t.node.keys.queue(p, queueName('acme', 'order', 'pack')))).toBe(1);
});

it('keeps the node\'s other Redis traffic moving while enqueues wait for replicas that are missing', async () => {
  // waitReplicas 2 with one replica: every enqueue's WAIT runs its full second.
  t = await startTestNode(primary.url, uniquePrefix('wr'), { 'redis.waitReplicas': 2, 'cluster.leaseTtl': '1500ms' });
  const enqueues = Array.from({ length: 4 }, (_, i) => t!.matching.enqueueStep({ step: step(10 + i) }).catch(() => undefined));
  await new Promise((r) => setTimeout(r, 200));
  // The connection leases, heartbeats, starts and completions use answers at once,
  // although four WAITs of a second each queue on the enqueue connection.
  const since = Date.now();
  await t.node.redis.ping();
  // Queued behind the WAITs it would take a second at least; the slack is a loaded machine's.
  expect(Date.now() - since).toBeLessThan(800);
  await Promise.all(enqueues);
  const lost = (await t.node.metrics.registry.getSingleMetric('dexzd_cluster_lease_changes_total')!.get()).values
    .find((v) => v.labels.event === 'lease-lost')?.value ?? 0;
  expect(lost).toBe(0);
});

it('answers a WAIT that reaches a primary a failover demoted as Redis out of reach for now, not as an internal error', async () => {
  // The slot map or the Sentinel's answer not refreshed yet: the WAIT goes to what is a replica now.
  const demoted = createRedis({ url: replica.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  try {
    const err = await waitForReplicas(demoted, ['zd:{3}:t:x'], 1, 100).then(() => undefined, (e: Error) => e);
    expect(err?.message).toBe('the primary that took the write of zd:{3}:t:x is a replica now (a failover)');
    expect(storeUnavailable(err)?.zdCode).toBe('ZD_STORE_UNAVAILABLE');
  } finally {
    demoted.disconnect();
  }
});

it('answers WaitOutcome with an outcome only once the replica holds it', async () => {
  t = await startTestNode(primary.url, uniquePrefix('wr-wait'), { 'redis.waitReplicas': 1, 'cluster.partitions': 2 });
  const [id] = [...(await completeSteps(t, 1))];

  // A replica that confirms nothing (frozen): the outcome read may be on this primary only, as on
  // one a failover leaves behind, so it is not answered.
  replica.kill('SIGSTOP');
  let refused: { code: Status; details: string } | undefined;
  try {
    refused = await t.matching.waitOutcome({ task_id: id, wait_ms: 0 }).then(() => undefined, (e: { code: Status; details: string }) => e);
  } finally {
    replica.kill('SIGCONT');
  }
  expect(refused?.code).toBe(Status.UNAVAILABLE);
  expect(refused?.details).toContain('the outcome read reached 0 of the 1 replicas redis.waitReplicas asks for');

  // Confirmed again: answered.
  expect((await t.matching.waitOutcome({ task_id: id, wait_ms: 0 })).outcome).toMatchObject({ task_id: id, status: pb.OutcomeStatus.COMPLETED });
});

it('answers outcomes only once the replica holds them: none while it confirms nothing, then each once, at once', async () => {
  t = await startTestNode(primary.url, uniquePrefix('wr-out'), { 'redis.waitReplicas': 1, 'cluster.partitions': 2 });
  const consume = (consumer: string, waitMs = 0) =>
    t!.matching.consumeOutcomes({ group: 'engine', consumer, max_count: 10, wait_ms: waitMs });
  expect((await consume('c1')).outcomes).toEqual([]);
  const ids = await completeSteps(t, 3);

  // A replica that confirms nothing (frozen): what a read delivers may be on this primary only,
  // as on one a failover leaves behind, so it is not answered.
  replica.kill('SIGSTOP');
  let refused: { code: Status; details: string } | undefined;
  try {
    refused = await consume('c1').then(() => undefined, (e: { code: Status; details: string }) => e);
  } finally {
    replica.kill('SIGCONT');
  }
  expect(refused?.code).toBe(Status.UNAVAILABLE);
  expect(refused?.details).toContain('reached 0 of the 1 replicas redis.waitReplicas asks for');

  // Confirmed again: the group's next call gets them, not after redeliver_after_ms (30 s by default).
  const started = Date.now();
  const got = (await consume('c2', 5000)).outcomes.map((o) => o.task_id!);
  expect(Date.now() - started).toBeLessThan(5000);
  expect(got.sort()).toEqual([...ids].sort());
  expect((await consume('c1')).outcomes).toEqual([]);
});
