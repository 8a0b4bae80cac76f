/**
 * The documented gauges read what the node holds (DESIGN §10): backlog
 * entries and oldest age per queue, unserved queues by reason, slots, and the
 * dispatch and Redis latency histograms, scraped from /metrics over HTTP.
 */
import http from 'node:http';
import { createClient } from 'nice-grpc';
import { ExternalTaskServiceDefinition, pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';
import { partitionOf } from '../../src/store/keys';

const redis = useEmbeddedRedis();
let t: TestNode;
/** A node of its own per test: the sync-match wait decides where a Step waits, and so which path starts it. */
async function start(syncMatchWait: string): Promise<void> {
  t = await startTestNode(redis.url, uniquePrefix('met'), { 'matching.syncMatchWait': syncMatchWait });
}
afterEach(() => t.close());

function scrape(node: TestNode = t): Promise<string> {
  return new Promise((resolve, reject) => {
    http.get(`http://${node.node.metricsAddress}/metrics`, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

function value(body: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of body.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries((m[3] ?? '').split(',').filter(Boolean).map((kv) => {
      const [k, v] = kv.split('=');
      return [k, (v ?? '').replace(/^"|"$/g, '')];
    }));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

async function countNow(node: TestNode = t): Promise<void> {
  await Promise.all(node.node.owner.owned().map((p) => node.node.owner.backlog.count(p)));
}

it('reports backlog entries, oldest age and unserved queues (no_worker, then no_supporting_worker)', async () => {
  await start('20ms'); // Steps leave sync-match for the durable queue at once
  const enqueuedAt = Date.now();
  for (let i = 0; i < 3; i++) {
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  }
  await new Promise((r) => setTimeout(r, 300));
  await countNow();
  let body = await scrape();
  const q = { tenant: 'acme', flow_type: 'order', step_type: 'pack' };
  expect(value(body, 'dexzd_step_task_queue_entries', q)).toBe(3);
  const age = value(body, 'dexzd_step_task_queue_oldest_age_seconds', q)!;
  expect(age).toBeGreaterThanOrEqual(0.25);
  expect(age).toBeLessThanOrEqual((Date.now() - enqueuedAt) / 1000 + 0.05);
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_worker' })).toBe(1);

  // A worker of the flow type that declines the Step type: still unserved, for another reason.
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  // One decline is enough: the worker is not offered that type again.
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ decline: { task_token: task.task_token, reason: pb.DeclineReason.UNKNOWN_TYPE } });
  await new Promise((r) => setTimeout(r, 100));
  body = await scrape();
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_worker' })).toBe(0);
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_supporting_worker' })).toBe(1);
  expect(value(body, 'dexzd_gateway_slots', { kind: 'STEP_AND_RPC', state: 'idle' })).toBe(1);
  expect(value(body, 'dexzd_matching_returned_attempts_total', { reason: 'unknown_type' })).toBe(1);
  s.reset();
});

it('splits the backlog gauges between two nodes by the partitions each owns, counting no Step twice', async () => {
  // Guards "queued Steps in the partitions this node owns": summed over nodes, the gauge is the backlog.
  const prefix = uniquePrefix('met2');
  const overrides = { 'matching.syncMatchWait': '20ms', 'cluster.heartbeat': '200ms' };
  t = await startTestNode(redis.url, prefix, { ...overrides, 'cluster.nodeId': 'm-a' });
  const b = await startTestNode(redis.url, prefix, { ...overrides, 'cluster.nodeId': 'm-b' });
  try {
    const partitions = t.config.cluster.partitions;
    await waitFor(() => b.node.leases.heldPartitions().length > 0
      && t.node.leases.heldPartitions().length + b.node.leases.heldPartitions().length === partitions,
      { timeoutMs: 15_000, description: 'the partitions split between the two nodes' });
    const flows = Array.from({ length: 12 }, (_, i) => `g${i}`);
    for (const f of flows) {
      await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: f, flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
    }
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all([countNow(t), countNow(b)]);
    const q = { tenant: 'acme', flow_type: 'order', step_type: 'pack' };
    const owns = (n: TestNode) => flows.filter((f) => n.node.leases.holds(partitionOf('acme', f, partitions))).length;
    const [onA, onB] = [value(await scrape(t), 'dexzd_step_task_queue_entries', q) ?? 0, value(await scrape(b), 'dexzd_step_task_queue_entries', q) ?? 0];
    expect([onA, onB]).toEqual([owns(t), owns(b)]);
    expect(onA + onB).toBe(flows.length);
    expect(Math.min(onA, onB)).toBeGreaterThan(0);
    // Each node's owned-partitions gauge follows the leases it gave up as well as those it took.
    for (const n of [t, b]) {
      const body = await scrape(n);
      expect(value(body, 'dexzd_cluster_owned_partitions')).toBe(n.node.leases.heldPartitions().length);
      expect(value(body, 'dexzd_cluster_live_nodes')).toBe(2);
    }
  } finally {
    await b.close();
  }
});

it('observes dispatch latency by path and Redis call latency by script', async () => {
  // A Step that waits for the busy slot stays in sync-match until the slot frees, however slow the machine.
  await start('30s');
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  // The slot is idle: the enqueue script starts the Step in it (no start call, no offer).
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  const task = (await s.nextOf('step_task')).step_task!;
  let body = await scrape();
  expect(value(body, 'dexzd_matching_dispatch_latency_seconds_count', { path: 'sync' })).toBe(1);
  expect(value(body, 'dexzd_redis_command_seconds_count', { command: 'enqueueTasks' })).toBe(1);
  expect(value(body, 'dexzd_redis_command_seconds_count', { command: 'startTasks' })).toBeUndefined();
  expect(value(body, 'dexzd_matching_offers_total', { result: 'taken' })).toBe(0); // exported at 0 from the start
  // The slot is busy: the next Step is enqueued alone, then offered and started once the slot frees.
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  const second = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: second.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  body = await scrape();
  expect(value(body, 'dexzd_matching_dispatch_latency_seconds_count', { path: 'sync' })).toBe(2);
  for (const command of ['enqueueTasks', 'enqueueTask', 'startTasks']) {
    expect(value(body, 'dexzd_redis_command_seconds_count', { command })).toBe(1);
  }
  expect(value(body, 'dexzd_redis_command_seconds_count', { command: 'completeTasks' })).toBe(2);
  expect(value(body, 'dexzd_matching_offers_total', { result: 'taken' })).toBe(1);
  expect(value(body, 'dexzd_cluster_owned_partitions')).toBe(8);
  expect(value(body, 'dexzd_cluster_partitions')).toBe(8); // what the owned sum is held against
  expect(value(body, 'dexzd_cluster_live_nodes')).toBe(1);
  // Without TLS no expiry series at all: a 0 would read as a certificate expired in 1970, and
  // ZdmatchTlsCertificateExpiring (expiry - time() < 7 days) would page for every cleartext cluster.
  expect(body).not.toMatch(/^dexzd_tls_certificate_expiry_timestamp_seconds[{ ]/m);
  expect(value(body, 'dexzd_matching_reserve_declined_tasks_total')).toBe(0);
  // An engine's group that has not read the outcome yet lags by one.
  await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 2, wait_ms: 0 });
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f2', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  const next = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: next.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  await countNow();
  expect(value(await scrape(), 'dexzd_outcome_consumer_lag', { group: 'engine' })).toBe(1);
  s.reset();
});

it('observes a Step started at enqueue in its sticky worker\'s slot under the sticky path', async () => {
  await start('30s');
  const s = openSlot(t.worker, registerFrame({ app_worker_id: 'w-st' }));
  await s.nextOf('registered');
  const step = (flowId: string, sticky = '') => ({
    step: { tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'pack', step_execution_id: 'x', sticky_worker_id: sticky },
  });
  const run = async () => {
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
  };
  // Named by the request, then remembered by its flow (the first Step's completion): both sticky.
  await t.matching.enqueueStep(step('f', 'w-st'));
  await run();
  await t.matching.enqueueStep({ step: { ...step('f').step, step_execution_id: 'y' } });
  await run();
  // A flow with no sticky worker: sync.
  await t.matching.enqueueStep(step('g'));
  await run();
  const body = await scrape();
  expect(value(body, 'dexzd_matching_dispatch_latency_seconds_count', { path: 'sticky' })).toBe(2);
  expect(value(body, 'dexzd_matching_dispatch_latency_seconds_count', { path: 'sync' })).toBe(1);
  s.reset();
});

it('reports the lag of a group set by hand inside the outcome stream, for which Redis counts none, as the entries it holds', async () => {
  await start('20ms');
  // 5 outcomes in one partition's stream: CANCELLED Steps of one flow, which no worker serves.
  for (let i = 0; i < 5; i++) {
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'lag', flow_type: 'nobody', step_type: 's', step_execution_id: `x${i}` } });
  }
  await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'lag' });
  const p = partitionOf('acme', 'lag', t.config.cluster.partitions);
  const key = t.node.keys.out(p);
  const ids = ((await redis.command('XRANGE', key, '-', '+')) as [string, unknown][]).map(([id]) => id);
  expect(ids).toHaveLength(5);
  // An operator's group at the second entry: Redis reports its lag as nil until it reads to the end.
  await redis.command('XGROUP', 'CREATE', key, 'by-hand', ids[1]!);
  await countNow();
  const lag = value(await scrape(), 'dexzd_outcome_consumer_lag', { group: 'by-hand' });
  expect(lag).toBeGreaterThanOrEqual(3); // at least the three entries after its id, not 0
  expect(lag).toBeLessThanOrEqual(5);
});

it('counts the backlog of partitions that have no outcome stream yet without an error reply from Redis', async () => {
  await start('20ms');
  // Operators alert on Redis's error replies (INFO stats total_error_replies): a
  // periodic count must not make one per partition and interval.
  const errors = async () => Number(/total_error_replies:(\d+)/.exec(String(await redis.command('INFO', 'stats')))![1]);
  await countNow(); // the node's first count (its scripts loaded, nothing else pending)
  const before = await errors();
  expect(t.node.owner.owned()).toHaveLength(8);
  await countNow();
  await countNow();
  expect(await errors()).toBe(before);
  expect(value(await scrape(), 'dexzd_outcome_consumer_lag', { group: 'engine' })).toBeUndefined();
});

it('counts enqueues by result, outcomes by status, RPCs by result and lease acquisitions; RPCs waiting are queued tasks', async () => {
  await start('20ms');
  const body = () => scrape();
  expect(value(await body(), 'dexzd_cluster_lease_changes_total', { event: 'acquired' })).toBe(8);
  const step = (flow: string, over: Partial<pb.IStepSpec> = {}) => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 'x', ...over });

  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  await t.matching.enqueueStep({ step: step('ok') });
  await t.matching.enqueueStep({ step: step('ok') }); // the same Step again
  const done = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: done.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  await t.matching.enqueueStep({ step: step('bad', { retry_policy: { max_attempts: 1 } }) });
  const bad = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: bad.task_token, failure: { message: 'no', type: 'Io' } } });
  await s.nextOf('result_ack');
  await t.matching.enqueueStep({ step: step('later', { ready_at_ms: Date.now() + 3_600_000 }) });
  expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'later' })).toMatchObject({ cancelled_queued: 1 });

  let m = await body();
  expect(value(m, 'dexzd_step_tasks_enqueued_total', { result: 'created' })).toBe(3);
  expect(value(m, 'dexzd_step_tasks_enqueued_total', { result: 'exists' })).toBe(1);
  expect(value(m, 'dexzd_outcomes_total', { status: 'COMPLETED' })).toBe(1);
  expect(value(m, 'dexzd_outcomes_total', { status: 'FAILED' })).toBe(1);
  expect(value(m, 'dexzd_outcomes_total', { status: 'CANCELLED' })).toBe(1);

  // an RPC runs on the slot; a second waits for it while it is busy with a Step
  const rpc = { tenant: 'acme', flow_id: 'r', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q') };
  const call = t.matching.invokeRpc(rpc);
  const task = (await s.nextOf('rpc_task')).rpc_task!;
  s.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('fine') } });
  await call;
  await s.nextOf('result_ack');
  await t.matching.enqueueStep({ step: step('busy') });
  const busy = (await s.nextOf('step_task')).step_task!;
  // It waits 2 s, then ends UNAVAILABLE: long enough to be read while it waits, however
  // late a busy machine runs this test (a 300-ms wait read 100 ms on was gone after a
  // 400-ms stall of this process).
  const waiting = t.matching.invokeRpc({ ...rpc, timeout_ms: 2000 }).catch((e: Error) => e);
  await waitFor(async () => value(await body(), 'dexzd_matching_queued_tasks') === 1,
    { timeoutMs: 1500, intervalMs: 20, description: 'the waiting RPC counted as a queued task' });
  await waiting;
  m = await body();
  expect(value(m, 'dexzd_matching_rpcs_total', { result: 'result' })).toBe(1);
  expect(value(m, 'dexzd_matching_rpcs_total', { result: 'unavailable' })).toBe(1);
  // RPC waits: the one a slot took is observed, the one that found none is not (it is an UNAVAILABLE).
  expect(value(m, 'dexzd_matching_dispatch_latency_seconds_count', { path: 'rpc' })).toBe(1);
  expect(value(m, 'dexzd_matching_queued_tasks')).toBe(0);
  s.send({ step_result: { task_token: busy.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  s.reset();
});

it('drops a queue that holds nothing from its partition\'s set of queues, and keeps one that holds a delayed Step', async () => {
  await start('20ms');
  // Queued before any worker: the owner serves it from the queue's heads in memory.
  const done = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const task = (await s.nextOf('step_task')).step_task!;
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  await s.nextOf('result_ack');
  const later = await t.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'ship', step_execution_id: 'y', ready_at_ms: Date.now() + 3_600_000 },
  });
  expect(await redis.command('SISMEMBER', t.node.keys.queues(done.partition!), 'acme:order:pack')).toBe(1); // every enqueue names its queue
  const pack = { tenant: 'acme', flow_type: 'order', step_type: 'pack' };
  expect(t.node.owner.get(done.partition!)!.queues.has('acme:order:pack')).toBe(true);
  // Named by the gauge while the owner holds it (0 or 1 entries, by when the last count ran).
  expect(value(await scrape(), 'dexzd_step_task_queue_entries', pack)).toBeDefined();
  await countNow();
  expect(await redis.command('SISMEMBER', t.node.keys.queues(done.partition!), 'acme:order:pack')).toBe(0);
  expect(await redis.command('SISMEMBER', t.node.keys.queues(later.partition!), 'acme:order:ship')).toBe(1);
  // The owner forgets the queue's heads too, and the gauges stop naming it.
  expect(t.node.owner.get(done.partition!)!.queues.has('acme:order:pack')).toBe(false);
  expect(t.node.owner.get(later.partition!)!.queues.has('acme:order:ship')).toBe(true);
  expect(value(await scrape(), 'dexzd_step_task_queue_entries', pack)).toBeUndefined();
  // The next Step that names it makes it again, and runs.
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 'z' } });
  const again = (await s.nextOf('step_task')).step_task!;
  expect(again.step_execution_id).toBe('z');
  s.reset();
});

it('reads no backlog for a fetch-only queue once a fetch worker took its Step', async () => {
  await start('20ms'); // no slot stream: the Step goes to its owner's heads after the sync-match wait
  const external = createClient(ExternalTaskServiceDefinition, t.channel);
  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'fx', flow_type: 'order', step_type: 'charge', step_execution_id: 'x' } });
  await new Promise((res) => setTimeout(res, 300));
  const topics = [{ tenant: 'acme', flow_type: 'order', step_type: 'charge' }];
  const { tasks } = await external.fetchAndLock({ worker_id: 'fw', topics, max_tasks: 1, lock_duration_ms: 60_000 });
  expect(tasks.map((x) => x.task_id)).toEqual([r.task_id]);
  await external.complete({ task_id: r.task_id, worker_id: 'fw' });
  await new Promise((res) => setTimeout(res, 300));
  await countNow();
  const body = await scrape();
  const q = { tenant: 'acme', flow_type: 'order', step_type: 'charge' };
  expect(value(body, 'dexzd_step_task_queue_entries', q) ?? 0).toBe(0);
  // The owner's heads still held the Step it had queued: the gauge read its age, growing, and the alert fired.
  expect(value(body, 'dexzd_step_task_queue_oldest_age_seconds', q) ?? 0).toBe(0);
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_worker' })).toBe(0);
});

it('observes the fetch surface\'s scripts in the Redis call latency, as the matching path\'s', async () => {
  await start('20ms'); // no slot stream: the Steps wait for a fetch worker
  const external = createClient(ExternalTaskServiceDefinition, t.channel);
  const topics = [{ tenant: 'acme', flow_type: 'order', step_type: 'charge' }];
  for (const flow of ['fa', 'fb', 'fc']) {
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'charge', step_execution_id: 'x' } });
  }
  const claimed = await waitFor(async () => {
    const { tasks } = await external.fetchAndLock({ worker_id: 'fw', topics, max_tasks: 3, lock_duration_ms: 60_000 });
    return tasks.length > 0 ? tasks : undefined;
  }, { timeoutMs: 5000, description: 'the fetch worker claims the Steps' });
  const rest = claimed.length === 3 ? [] : (await external.fetchAndLock({ worker_id: 'fw', topics, max_tasks: 3, lock_duration_ms: 60_000 })).tasks;
  const [a, b, c] = [...claimed, ...rest];
  await external.extendLock({ task_id: a!.task_id, worker_id: 'fw', lock_duration_ms: 60_000 });
  await external.complete({ task_id: a!.task_id, worker_id: 'fw' });
  await external.fail({ task_id: b!.task_id, worker_id: 'fw', failure: { message: 'no' }, retries: 1, retry_timeout_ms: 60_000 });
  await external.unlock({ task_id: c!.task_id, worker_id: 'fw' });
  const body = await scrape();
  expect(value(body, 'dexzd_redis_command_seconds_count', { command: 'lockTasks' })).toBeGreaterThanOrEqual(1);
  for (const command of ['extendLock', 'completeLocked', 'failLocked', 'unlockTask']) {
    expect(value(body, 'dexzd_redis_command_seconds_count', { command })).toBe(1);
  }
});

it('reads a queue whose only worker is stopping as unserved for no_worker, and served again once the worker reconnects', async () => {
  await start('20ms');
  // A worker of two streams; half-closing one says it is stopping (SDK stop()): it takes no new Step.
  const a = openSlot(t.worker, registerFrame());
  const b = openSlot(t.worker, registerFrame());
  await Promise.all([a.nextOf('registered'), b.nextOf('registered')]);
  a.halfClose();
  await waitFor(() => !t.node.gateway.hasWorker('acme', 'w1'), { description: 'the worker counted as stopping' });
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f-stop', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  await new Promise((r) => setTimeout(r, 200));
  await countNow();
  let body = await scrape();
  expect(value(body, 'dexzd_step_task_queue_entries', { tenant: 'acme', flow_type: 'order', step_type: 'pack' })).toBe(1);
  // Nothing connected can serve it, and no Step type is missing from a registration: no worker.
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_worker' })).toBe(1);
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_supporting_worker' })).toBe(0);

  // The worker comes back (a new stream): it serves the queue, and the gauge falls to 0.
  const c = openSlot(t.worker, registerFrame());
  await c.nextOf('registered');
  await waitFor(async () => {
    body = await scrape();
    return value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_worker' }) === 0
      && value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_supporting_worker' }) === 0;
  }, { description: 'the queue served again' });
  for (const s of [a, b, c]) s.reset();
});

it('reads a queue as unserved for no_worker at an owner whose peer holds the only worker, once that worker is stopping', async () => {
  const prefix = uniquePrefix('met3');
  const overrides = { 'matching.syncMatchWait': '20ms', 'cluster.heartbeat': '200ms' };
  t = await startTestNode(redis.url, prefix, { ...overrides, 'cluster.nodeId': 's-a' });
  const b = await startTestNode(redis.url, prefix, { ...overrides, 'cluster.nodeId': 's-b' });
  const slots = [openSlot(b.worker, registerFrame()), openSlot(b.worker, registerFrame())];
  try {
    const partitions = t.config.cluster.partitions;
    await waitFor(() => b.node.leases.heldPartitions().length > 0
      && t.node.leases.heldPartitions().length + b.node.leases.heldPartitions().length === partitions,
      { timeoutMs: 15_000, description: 'the partitions split between the two nodes' });
    await Promise.all(slots.map((s) => s.nextOf('registered')));
    slots[0]!.halfClose();
    // The flows whose partitions node a owns: the worker is b's, a knows of it from b's capacity.
    const flows = Array.from({ length: 40 }, (_, i) => `h${i}`).filter((f) => t.node.leases.holds(partitionOf('acme', f, partitions))).slice(0, 3);
    expect(flows.length).toBeGreaterThan(0);
    for (const f of flows) {
      await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: f, flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
    }
    await waitFor(async () => {
      await countNow(t);
      const body = await scrape(t);
      return value(body, 'dexzd_step_task_queue_entries', { tenant: 'acme', flow_type: 'order', step_type: 'pack' }) === flows.length
        && value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_worker' }) === 1
        && value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_supporting_worker' }) === 0;
    }, { timeoutMs: 5000, description: 'the queue unserved for no_worker at node a' });
  } finally {
    for (const s of slots) s.reset();
    await b.close();
  }
});

it('drops the oldest age of a queue once CancelFlow ended its queued Step', async () => {
  // The cancel takes the Step out of Redis; its owner must drop its head too. A head kept
  // went on giving the queue an oldest age (and a backlog) that no count corrected: on a
  // queue no worker serves, nothing offered the stale head away.
  await start('20ms');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'c1', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  await new Promise((r) => setTimeout(r, 300));
  await countNow();
  const q = { tenant: 'acme', flow_type: 'order', step_type: 'pack' };
  expect(value(await scrape(), 'dexzd_step_task_queue_oldest_age_seconds', q)).toBeGreaterThanOrEqual(0.25);
  expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'c1' })).toMatchObject({ cancelled_queued: 1 });
  await countNow();
  await waitFor(async () => (value(await scrape(), 'dexzd_step_task_queue_oldest_age_seconds', q) ?? 0) === 0,
    { timeoutMs: 3000, description: 'the cancelled Step gives its queue no oldest age' });
  expect(value(await scrape(), 'dexzd_step_task_queue_entries', q) ?? 0).toBe(0);
});

it('drops the oldest age of a queue as soon as its backlog is taken, not at the next backlog count', async () => {
  await start('20ms');
  for (let i = 0; i < 3; i++) {
    await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: `d${i}`, flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  }
  await new Promise((r) => setTimeout(r, 300));
  await countNow();
  const q = { tenant: 'acme', flow_type: 'order', step_type: 'pack' };
  expect(value(await scrape(), 'dexzd_step_task_queue_oldest_age_seconds', q)).toBeGreaterThanOrEqual(0.25);
  // Three slots take the three Steps: nothing is queued any more.
  const slots = [0, 1, 2].map(() => openSlot(t.worker, registerFrame()));
  await Promise.all(slots.map(async (s) => {
    await s.nextOf('registered');
    await s.nextOf('step_task');
  }));
  // Before the fix the age of the Step that had started went on growing until the next count (5 s).
  expect(value(await scrape(), 'dexzd_step_task_queue_oldest_age_seconds', q) ?? 0).toBe(0);
  for (const s of slots) s.reset();
});

it('counts a Step whose method timeout failed its last attempt as FAILED, and one whose flow deadline passed in the queue as TIMED_OUT', async () => {
  await start('20ms');
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  await t.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'slow', flow_type: 'order', step_type: 'pack', step_execution_id: 'x', method_timeout_ms: 300, retry_policy: { max_attempts: 1 } },
  });
  await s.nextOf('step_task'); // and never answered
  // No worker runs this flow type: the Step waits in the queue until its flow deadline.
  await t.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'late', flow_type: 'nobody', step_type: 'x', step_execution_id: 'x', flow_deadline_ms: Date.now() + 300 },
  });
  await waitFor(async () => {
    const body = await scrape();
    return value(body, 'dexzd_outcomes_total', { status: 'FAILED' }) === 1 && value(body, 'dexzd_outcomes_total', { status: 'TIMED_OUT' }) === 1;
  }, { timeoutMs: 10_000, description: 'one FAILED and one TIMED_OUT outcome counted' });
  const body = await scrape();
  expect(value(body, 'dexzd_outcomes_total', { status: 'COMPLETED' })).toBe(0);
  expect(value(body, 'dexzd_outcomes_total', { status: 'CANCELLED' })).toBe(0);
  s.reset();
});

it('reads slots busy while they run a Step, and streams and slots back at 0 once the worker\'s streams are gone', async () => {
  await start('30s');
  const slots = [openSlot(t.worker, registerFrame()), openSlot(t.worker, registerFrame())];
  await Promise.all(slots.map((s) => s.nextOf('registered')));
  let body = await scrape();
  expect(value(body, 'dexzd_gateway_streams', { kind: 'STEP_AND_RPC' })).toBe(2);
  expect(value(body, 'dexzd_gateway_slots', { kind: 'STEP_AND_RPC', state: 'idle' })).toBe(2);
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'b', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  await Promise.race(slots.map((s) => s.nextOf('step_task')));
  body = await scrape();
  expect(value(body, 'dexzd_gateway_slots', { kind: 'STEP_AND_RPC', state: 'busy' })).toBe(1);
  expect(value(body, 'dexzd_gateway_slots', { kind: 'STEP_AND_RPC', state: 'idle' })).toBe(1);
  for (const s of slots) s.reset();
  await waitFor(async () => value(await scrape(), 'dexzd_gateway_streams', { kind: 'STEP_AND_RPC' }) === 0,
    { description: 'the streams gauge back at 0' });
  body = await scrape();
  expect(value(body, 'dexzd_gateway_slots', { kind: 'STEP_AND_RPC', state: 'idle' }) ?? 0).toBe(0);
  expect(value(body, 'dexzd_gateway_slots', { kind: 'STEP_AND_RPC', state: 'busy' }) ?? 0).toBe(0);
});

it('observes a Step that waited in the durable queue under the queued path, with the time it waited', async () => {
  await start('20ms');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'q', flow_type: 'order', step_type: 'pack', step_execution_id: 'x' } });
  await new Promise((r) => setTimeout(r, 300));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  await s.nextOf('step_task');
  const body = await scrape();
  expect(value(body, 'dexzd_matching_dispatch_latency_seconds_count', { path: 'queued' })).toBe(1);
  expect(value(body, 'dexzd_matching_dispatch_latency_seconds_count', { path: 'sync' }) ?? 0).toBe(0);
  expect(value(body, 'dexzd_matching_dispatch_latency_seconds_sum', { path: 'queued' })).toBeGreaterThanOrEqual(0.25);
  s.reset();
});

it('reads a queue that holds only a delayed Step as no backlog and not unserved', async () => {
  await start('20ms');
  await t.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'later', flow_type: 'order', step_type: 'pack', step_execution_id: 'x', ready_at_ms: Date.now() + 3_600_000 },
  });
  await new Promise((r) => setTimeout(r, 200));
  await countNow();
  const body = await scrape();
  const q = { tenant: 'acme', flow_type: 'order', step_type: 'pack' };
  expect(value(body, 'dexzd_step_task_queue_entries', q) ?? 0).toBe(0);
  expect(value(body, 'dexzd_step_task_queue_oldest_age_seconds', q) ?? 0).toBe(0);
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_worker' })).toBe(0);
  expect(value(body, 'dexzd_matching_unserved_task_queues', { reason: 'no_supporting_worker' })).toBe(0);
});

it('stops reporting the lag of a consumer group once it is destroyed', async () => {
  await start('20ms');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'gone', flow_type: 'nobody', step_type: 's', step_execution_id: 'x' } });
  await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'gone' });
  const key = t.node.keys.out(partitionOf('acme', 'gone', t.config.cluster.partitions));
  await redis.command('XGROUP', 'CREATE', key, 'old-engine', '0');
  await countNow();
  expect(value(await scrape(), 'dexzd_outcome_consumer_lag', { group: 'old-engine' })).toBe(1);
  // An operator removes the group: a lag kept for it would page someone for a consumer that no longer exists.
  await redis.command('XGROUP', 'DESTROY', key, 'old-engine');
  await countNow();
  expect(value(await scrape(), 'dexzd_outcome_consumer_lag', { group: 'old-engine' })).toBeUndefined();
});
