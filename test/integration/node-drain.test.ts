/**
 * A node's drain as its workers see it (DESIGN §5): every stream gets a
 * Reconnect frame; idle streams end at once; a busy one finishes its Step
 * (its result is accepted) and the drain ends as soon as none is busy, before
 * drain.timeout; a Register that arrives meanwhile is refused with
 * ZD_DRAINING (UNAVAILABLE), so the worker dials another node. Calls waiting
 * on the node (long polls) answer "nothing yet" when it stops, so their
 * callers ask again elsewhere.
 */
import { ClientError, createChannel, createClient, Status } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { partitionOf } from '../../src/store/keys';
import { ExternalTaskServiceDefinition, MatchingServiceDefinition, pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { captureLogs } from '../helpers/logs';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

it('tells every stream to reconnect, ends the idle ones, lets the busy one finish and refuses new ones', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain'), { 'drain.timeout': '10s' });
  const busy = openSlot(t.worker, registerFrame({ app_worker_id: 'w1' }));
  await busy.nextOf('registered');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
  const task = (await busy.nextOf('step_task')).step_task!;
  const idle = openSlot(t.worker, registerFrame({ app_worker_id: 'w2' }));
  await idle.nextOf('registered');

  const startedAt = Date.now();
  const drained = t.node.drain();
  expect((await idle.nextOf('reconnect')).reconnect!.reason).toBe('node draining');
  expect(await idle.ended).toBeNull(); // ended by the server, cleanly
  expect((await busy.nextOf('reconnect')).reconnect!.reason).toBe('node draining');

  const late = openSlot(t.worker, registerFrame({ app_worker_id: 'w3' }));
  const refused = (await late.ended) as (Error & { code?: Status; details?: string }) | null;
  expect(refused?.code).toBe(Status.UNAVAILABLE);
  expect(refused?.details).toContain('this node is draining');

  // the busy stream is still open: its Step finishes and counts
  busy.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  expect((await busy.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  await drained;
  expect(Date.now() - startedAt).toBeLessThan(5000); // over once no slot is busy, not at drain.timeout
  const p = partitionOf('acme', 'f', t.config.cluster.partitions);
  expect(await redis.command('XLEN', t.node.keys.out(p))).toBe(1); // its COMPLETED outcome
});

it('closes a busy stream once its Step finishes, and starts no queued Step on it meanwhile', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain'), { 'drain.timeout': '10s' });
  const busy = openSlot(t.worker, registerFrame({ app_worker_id: 'w1' }));
  await busy.nextOf('registered');
  const step = (id: string) => t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: id, flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
  await step('f1');
  const task = (await busy.nextOf('step_task')).step_task!;
  const queued = await step('f2'); // no idle slot: it waits in its queue

  const drained = t.node.drain();
  await busy.nextOf('reconnect');
  busy.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  expect((await busy.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(await busy.ended).toBeNull(); // ended by the server, not handed the queued Step
  await drained;
  const task2 = t.node.keys.task(partitionOf('acme', 'f2', t.config.cluster.partitions), queued.task_id!);
  expect(await redis.command('HMGET', task2, 'state', 'attempt')).toEqual(['queued', '1']);
});

// Probes must turn traffic away from the moment the drain begins, not once it has
// ended: the readiness and health answers change while a busy slot still holds it open.
it('answers not ready and NOT_SERVING as soon as it drains, while a busy slot finishes', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain'), { 'drain.timeout': '10s' });
  const health = createClient(HealthDefinition, t.channel);
  const readyz = async () => (await fetch(`http://${t.node.metricsAddress}/readyz`)).status;
  expect(await readyz()).toBe(200);
  expect((await health.check({ service: 'zdmatch.v1.WorkerTaskService' })).status).toBe(1); // SERVING
  const busy = openSlot(t.worker, registerFrame({ app_worker_id: 'w1' }));
  await busy.nextOf('registered');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
  const task = (await busy.nextOf('step_task')).step_task!;

  const drained = t.node.drain();
  await busy.nextOf('reconnect');
  expect(t.node.state).toBe('draining');
  expect(await readyz()).toBe(503);
  expect((await fetch(`http://${t.node.metricsAddress}/healthz`)).status).toBe(200); // alive: not to be restarted
  expect((await health.check({ service: '' })).status).toBe(2); // NOT_SERVING
  for (const service of ['zdmatch.v1.WorkerTaskService', 'zdmatch.v1.MatchingService', 'zdmatch.v1.ExternalTaskService']) {
    expect((await health.check({ service })).status).toBe(2);
  }
  busy.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  await busy.nextOf('result_ack');
  await drained;
});

// A SIGTERM arriving during a drain begun otherwise (or a second signal) must join it, not
// start a second one that runs every shutdown step again.
it('answers a second drain or close with the one under way, and drains once', async () => {
  const { logger, lines } = captureLogs<{ msg: string }>();
  t = await startTestNode(redis.url, uniquePrefix('drain'), {}, { logger });
  const first = t.node.drain('SIGTERM');
  expect(t.node.drain('SIGINT')).toBe(first);
  expect(t.node.close()).toBe(first);
  await first;
  expect(t.node.state).toBe('stopped');
  expect(lines.filter((l) => l.msg === 'node draining')).toHaveLength(1);
  expect(lines.filter((l) => l.msg === 'node stopped')).toHaveLength(1);
});

it('fails an attempt still running when drain.timeout passes, so no other worker gets the same attempt number', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain'), { 'drain.timeout': '500ms' });
  const stuck = openSlot(t.worker, registerFrame({ app_worker_id: 'w1' }));
  await stuck.nextOf('registered');
  const r = await t.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 'pack', step_execution_id: 's', retry_policy: { max_attempts: 3 } },
  });
  expect((await stuck.nextOf('step_task')).step_task!.attempt).toBe(1);
  await t.node.drain(); // the worker never answers nor half-closes: its stream is reset at the deadline
  const key = t.node.keys.task(r.partition!, r.task_id!);
  expect(await redis.command('HGET', key, 'attempt')).toBe('2'); // attempt 1 is spent: a retry, not a return
  expect(await redis.command('HGET', key, 'errType')).toBe('worker_lost');
  expect(await redis.command('HGET', key, 'state')).toBe('queued');
});

it('waits for a running RPC before it ends its stream', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain'), { 'drain.timeout': '10s' });
  const s = openSlot(t.worker, registerFrame({ app_worker_id: 'w1' }));
  await s.nextOf('registered');
  const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q') });
  const task = (await s.nextOf('rpc_task')).rpc_task!;
  const drained = t.node.drain();
  await s.nextOf('reconnect');
  await new Promise((r) => setTimeout(r, 100)); // the drain must not end the stream while the RPC runs
  s.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('fine') } });
  expect(Buffer.from((await call).output!).toString()).toBe('fine');
  await drained;
});

it('answers the calls waiting on it with nothing yet when it stops, over gRPC and HTTP, instead of holding its shutdown', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain'), { 'drain.timeout': '2s' });
  // Callers of their own: the node's close ends the test node's channel, not these.
  const channel = createChannel(t.node.apiAddress);
  const matching = createClient(MatchingServiceDefinition, channel);
  const external = createClient(ExternalTaskServiceDefinition, channel);
  try {
    const { task_id: queued } = await matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'nobody', step_type: 's', step_execution_id: 'x' } });
    const LONG = 20_000;
    const settled = <T>(p: Promise<T>) => p.then((value) => ({ value }), (err: Error) => ({ err: err.message }));
    const waits = {
      waitOutcome: settled(matching.waitOutcome({ task_id: queued, wait_ms: LONG })),
      consume: settled(matching.consumeOutcomes({ group: 'engine', consumer: 'c1', max_count: 10, wait_ms: LONG })),
      fetch: settled(external.fetchAndLock({ worker_id: 'A', topics: [{ tenant: 'acme', flow_type: 'order', step_type: 'none' }], wait_ms: LONG })),
      http: settled(fetch(`http://${t.node.httpAddress}/v1/external-tasks/fetch-and-lock`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workerId: 'B', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'none' }], waitMs: LONG }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }))),
    };
    await new Promise((r) => setTimeout(r, 300)); // all four are waiting
    await t.close();
    expect(await waits.waitOutcome).toEqual({ value: expect.not.objectContaining({ outcome: expect.anything() }) });
    expect(await waits.consume).toEqual({ value: { outcomes: [] } });
    expect(await waits.fetch).toEqual({ value: { tasks: [] } });
    expect(await waits.http).toEqual({ value: { status: 200, body: { tasks: [] } } });
  } finally {
    channel.close();
  }
});

it('answers an RPC waiting on it for a slot UNAVAILABLE when it stops, instead of holding its shutdown', async () => {
  t = await startTestNode(redis.url, uniquePrefix('drain'), { 'drain.timeout': '2s', 'matching.dispatchWait': '20s' });
  const channel = createChannel(t.node.apiAddress);
  const matching = createClient(MatchingServiceDefinition, channel);
  try {
    // No worker of the flow type yet: the call waits here, up to dispatchWait, for one.
    const call = matching.invokeRpc({ tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 20_000 })
      .then(() => 'answered', (e: ClientError) => ({ code: e.code, details: e.details }));
    await new Promise((r) => setTimeout(r, 300));
    await t.close();
    const outcome = await Promise.race([call, new Promise((r) => setTimeout(() => r('still waiting 5 s after the node stopped'), 5000))]);
    expect(outcome).toEqual({ code: Status.UNAVAILABLE, details: expect.stringContaining('this node is stopping') });
  } finally {
    channel.close();
  }
});
