/**
 * Redis refusing the start script at once (OOM under noeviction, READONLY,
 * BUSY) must not make the owner offer the same head again in a loop: the
 * slot is idle again as soon as the start fails. The queue's offers
 * pause, longer each time, and resume once Redis takes writes again.
 * A real redis-server with its memory limit set below what it holds.
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(async () => {
  await redis.command('CONFIG', 'SET', 'maxmemory', '0');
  await t.close();
});

async function evalshaCalls(): Promise<number> {
  const stats = String(await redis.command('INFO', 'commandstats'));
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

it('pauses offers while Redis refuses starts, and delivers once it takes writes again', async () => {
  // Leases outlast the refusal (their renewals are writes too).
  t = await startTestNode(redis.url, uniquePrefix('oom'), {
    'matching.syncMatchWait': '10ms', 'cluster.leaseTtl': '20s', 'cluster.nodeTtl': '20s', 'cluster.heartbeat': '2s',
  });
  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'oom', flow_type: 'order', step_type: 'pack', step_execution_id: 's' } });
  await new Promise((res) => setTimeout(res, 100)); // queued: no slot yet
  await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  await redis.command('CONFIG', 'SET', 'maxmemory', '1');
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  const before = await evalshaCalls();
  await new Promise((res) => setTimeout(res, 1000));
  // Without the pause: hundreds of start calls a second for this one Step.
  expect(await evalshaCalls() - before).toBeLessThan(30);
  // Operators see the refused starts as offers that ended in an error.
  const errors = (await t.node.metrics.registry.getSingleMetric('dexzd_matching_offers_total')!.get()).values
    .find((v) => v.labels.result === 'error')?.value ?? 0;
  expect(errors).toBeGreaterThanOrEqual(1);
  await redis.command('CONFIG', 'SET', 'maxmemory', '0');
  expect((await s.nextOf('step_task', 5000)).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  s.reset();
});
