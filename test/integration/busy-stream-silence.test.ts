/**
 * A busy worker stream that sends nothing for matching.busyStreamSilence is lost:
 * a worker Pongs while it runs a task (DESIGN §5), so silence means it is gone
 * even where the connection still answers HTTP/2 PINGs (a load balancer in
 * front of the node answers them itself). Its attempt fails as worker_lost and
 * the retry policy runs; a worker that Pongs, or an SDK worker on a long task,
 * keeps its attempt however long it runs.
 * A real node and redis-server; raw slots play the silent and the talking worker.
 */
import { Worker } from '../../src';
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { recordingLogger, registeredWithClient } from '../helpers/sdk';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
const SILENCE_MS = 1000;
let t: TestNode;
const open: RawSlot[] = [];
const cleanups: Array<() => unknown> = [];
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('busy-silence'), { 'matching.busyStreamSilence': `${SILENCE_MS}ms` });
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  for (const s of open.splice(0)) s.reset();
  await t.close();
});

async function registered(s: RawSlot): Promise<RawSlot> {
  open.push(s);
  await s.nextOf('registered');
  return s;
}

const step = (id: string) => ({
  tenant: 'acme', flow_id: `f-${id}`, flow_type: 'order', step_type: 'charge', step_execution_id: id,
  retry_policy: { max_attempts: 3, initial_interval_ms: 50 },
});

it('fails the attempt of a busy stream that says nothing as worker_lost, and retries it elsewhere', async () => {
  const silent = await registered(openSlot(t.worker, registerFrame({ app_worker_id: 'w-silent' })));
  const { task_id } = await t.matching.enqueueStep({ step: step('quiet') });
  const first = (await silent.nextOf('step_task')).step_task!;
  const startedAt = Date.now();
  expect(first).toMatchObject({ task_id, attempt: 1 });
  const healthy = await registered(openSlot(t.worker, registerFrame({ app_worker_id: 'w-healthy' })));

  const retry = (await healthy.nextOf('step_task', SILENCE_MS + 3000)).step_task!;
  expect(retry).toMatchObject({ task_id, attempt: 2 });
  // Not before the silence was up (the sweep may add up to a ping sweep on top).
  expect(Date.now() - startedAt).toBeGreaterThanOrEqual(SILENCE_MS - 50);
  const task = (await t.matching.getTask({ task_id })).task!;
  expect(task.last_error).toMatchObject({ type: 'worker_lost' });
  expect(task.last_error?.message).toContain('matching.busyStreamSilence');
  // The silent worker's stream is over: a late result has nowhere to go.
  await expect(Promise.race([silent.ended.then(() => 'ended'), sleep(3000).then(() => 'still open')])).resolves.toBe('ended');
  expect(t.node.gateway.streamCount).toBe(1);

  healthy.send({ step_result: { task_token: retry.task_token, output: Buffer.from('done') } });
  expect((await healthy.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await t.matching.waitOutcome({ task_id, wait_ms: 5000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 2 });
});

it('keeps the attempt of a busy stream of an older SDK (protocol 3), which sends nothing while a task runs', async () => {
  // The reference: older SDKs send no Pongs while a task runs (they need idle timeouts above the
  // longest task), and keep working on a newer server. Reset at the silence, each of their Steps
  // longer than it failed as worker_lost, attempt after attempt.
  const older = await registered(openSlot(t.worker, registerFrame({ app_worker_id: 'w-older', protocol_version: 3 })));
  const { task_id } = await t.matching.enqueueStep({ step: step('older') });
  const task = (await older.nextOf('step_task')).step_task!;
  await sleep(SILENCE_MS * 2.5);
  expect((await t.matching.getTask({ task_id })).task).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });
  older.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await older.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await t.matching.waitOutcome({ task_id, wait_ms: 5000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
});

it('keeps the attempt of a busy stream that Pongs, for several silences', async () => {
  const talking = await registered(openSlot(t.worker, registerFrame({ app_worker_id: 'w-talking' })));
  const { task_id } = await t.matching.enqueueStep({ step: step('pongs') });
  const task = (await talking.nextOf('step_task')).step_task!;
  for (let i = 0; i < 8; i++) {
    await sleep(SILENCE_MS / 3);
    talking.send({ pong: { sent_at_ms: Date.now() } });
  }
  expect((await t.matching.getTask({ task_id })).task).toMatchObject({ attempt: 1 });
  talking.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect((await talking.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect((await t.matching.waitOutcome({ task_id, wait_ms: 5000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
});

it('an SDK worker on a task longer than the silence keeps it: it Pongs while the handler runs', async () => {
  const w = new Worker({
    address: t.node.apiAddress, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger: recordingLogger(),
    _internal: { pongIntervalMs: SILENCE_MS / 4 }, // its cadence scaled as the silence is (20 s and 60 s by default)
    flowTypes: { order: { steps: { charge: async () => { await sleep(3 * SILENCE_MS); return 'slow'; } } } },
  });
  const { c } = await registeredWithClient(w, t.node.apiAddress, cleanups);
  const { taskId } = await c.enqueueStep({
    tenant: 'acme', flowId: 'f-sdk', flowType: 'order', stepType: 'charge', stepExecutionId: 'sdk', retryPolicy: { maxAttempts: 1 },
  });
  expect(await c.waitOutcome(taskId, { waitMs: 20_000 })).toMatchObject({ status: 'COMPLETED', attempt: 1 });
});
