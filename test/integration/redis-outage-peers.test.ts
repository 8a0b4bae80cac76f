/**
 * Redis out of every node's reach for longer than cluster.nodeTtl (a restart, a
 * Sentinel failover: down-after-milliseconds alone is 30 s by default). No node
 * could heartbeat, so every score is that old when Redis answers again; the node
 * that reconnects first must not take its peers, silent no longer than itself,
 * for gone and fail the attempts their slots still run (DESIGN §11: an attempt
 * runs in one slot at most, and a live worker's is not failed as worker_lost).
 * A real redis-server (AOF, appendfsync always) killed and started again on its
 * port; node B reaches it through a TCP proxy that lets B back in a moment after A.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pb } from '../../src/wire';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { partitionOf } from '../../src/store/keys';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { sleep, waitFor } from '../helpers/wait';

const servers: EmbeddedRedis[] = [];
const nodes: TestNode[] = [];
let proxy: TcpProxy | undefined;
let dataDir = '';

afterEach(async () => {
  proxy?.resume();
  proxy?.cut(); // connections made while frozen are not forwarded cleanly after resume()
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
  await proxy?.close();
  proxy = undefined;
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = '';
});

/**
 * Redis (AOF), node A on it, node B through the proxy, and a Step of a partition A owns running in a slot of B.
 * The outage keeps Redis down for `downMs`.
 */
async function runningOnB(label: string, maxAttempts: number, { nodeTtl = '3s', downMs = 4000 } = {}) {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-outage-'));
  const args = ['--appendonly', 'yes', '--appendfsync', 'always'];
  const redis = await startEmbeddedRedis({ dataDir, args });
  servers.push(redis);
  proxy = await tcpProxy(redis.port);
  const prefix = uniquePrefix(label);
  const timing = { 'cluster.nodeTtl': nodeTtl, 'cluster.heartbeat': '300ms', 'cluster.leaseTtl': '1500ms' };
  const a = await startTestNode(redis.url, prefix, timing);
  const b = await startTestNode(`redis://127.0.0.1:${proxy.port}`, prefix, timing);
  nodes.push(a, b);
  const partitions = a.config.cluster.partitions;
  await waitFor(() => a.node.owner.owned().length > 0 && a.node.owner.owned().length + b.node.owner.owned().length === partitions,
    { description: 'the partitions shared' });
  const owned = new Set(a.node.owner.owned().map((p) => p.partition));
  let flow = 0;
  while (!owned.has(partitionOf('acme', `f${flow}`, partitions))) flow++;
  const slot = openSlot(b.worker, registerFrame());
  await slot.nextOf('registered');
  const r = await a.matching.enqueueStep({
    step: {
      tenant: 'acme', flow_id: `f${flow}`, flow_type: 'order', step_type: 's', step_execution_id: 'x',
      retry_policy: { max_attempts: maxAttempts, initial_interval_ms: 10 },
    },
  });
  const task = (await slot.nextOf('step_task')).step_task!;
  expect(task.task_id).toBe(r.task_id);
  /** Redis down, B's way back to it held (frozen); Redis back on its port, with its data. */
  const outage = async () => {
    redis.kill('SIGKILL');
    await redis.exited();
    proxy!.freeze();
    await sleep(downMs);
    servers.push(await startEmbeddedRedis({ port: redis.port, dataDir, args }));
    // A took B's partitions too, and loaded them: its sweep of the attempts of gone nodes has run.
    await waitFor(() => a.node.owner.owned().length === partitions, { timeoutMs: 15_000, description: 'A owning every partition' });
  };
  return { a, b, slot, r, task, outage };
}


/**
 * Redis back, B let through once its score is nodeTtl old: both nodes see each other again,
 * and the worker was never lost: its result is the Step's outcome, at attempt 1.
 */
async function backAndKept({ a, b, slot, r, task, outage }: Awaited<ReturnType<typeof runningOnB>>): Promise<void> {
  await outage();
  await sleep(300);
  proxy!.resume();
  proxy!.cut();
  await waitFor(() => b.node.membership.liveIds().includes(a.node.nodeId) && a.node.membership.liveIds().includes(b.node.nodeId),
    { timeoutMs: 10_000, description: 'both nodes live again' });

  // The worker was never lost: its result is the Step's outcome.
  slot.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
  const f = await slot.nextOf('result_ack', 10_000);
  expect(pb.ResultVerdict[f.result_ack!.verdict!]).toBe('ACCEPTED');
  const outcome = (await a.matching.waitOutcome({ task_id: r.task_id, wait_ms: 5000 })).outcome;
  expect(outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  slot.reset();
}

it('keeps the attempt a peer\'s slot runs when Redis comes back after an outage longer than nodeTtl', async () => {
  // One attempt only: a worker_lost failure would end the Step.
  const run = await runningOnB('outage', 1);
  await backAndKept(run);
}, 45_000);

it('keeps the attempt a peer\'s slot runs when it comes back from a Redis restart shorter than nodeTtl a backoff after this node', async () => {
  // Redis down for 3 s, nodeTtl 6 s: A is back well short of nodeTtl less a heartbeat (5.7 s), so its
  // silence is no silence by time alone. B is held until its score is nodeTtl old and A has dropped
  // it, as a reconnect backoff (up to 2 s with ioredis) and a heartbeat can hold it after a restart.
  const run = await runningOnB('outage-short', 1, { nodeTtl: '6s', downMs: 3000 });
  await backAndKept(run);
}, 45_000);

it('fails the attempts of a peer that does not come back after the outage within nodeTtl, not at the next audit', async () => {
  const { a, slot, r, outage } = await runningOnB('outage-gone', 2);
  const other = openSlot(a.worker, registerFrame({ app_worker_id: 'w2' }));
  await other.nextOf('registered');
  await outage();
  const back = Date.now();
  // B stays cut off: once A has been back for nodeTtl (3 s), B is gone and its attempt runs again on A.
  // The attempt audit's next look would be a minute away.
  expect((await other.nextOf('step_task', 15_000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 2 });
  expect(Date.now() - back).toBeLessThan(8000);
  other.reset();
  slot.reset();
}, 45_000);
