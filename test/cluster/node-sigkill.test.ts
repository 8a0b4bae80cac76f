/**
 * A node process killed with SIGKILL mid-run and started again: every
 * acknowledged enqueue still completes with exactly one outcome, and no
 * attempt runs in two slots (the workers record every (task, attempt) they run).
 */
import { Client, Worker, type StepContext } from '../../src';
import { collectOutcomes } from '../helpers/outcomes';
import { freePorts } from '../helpers/ports';
import { waitFor } from '../helpers/wait';
import { startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const TOTAL = 1500;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

it('loses no acknowledged Step and runs no attempt twice across a SIGKILL and restart', async () => {
  const prefix = uniquePrefix('kill');
  // The API port stays the same across the restart so workers reconnect to it.
  const [api] = (await freePorts(1)) as [number];
  const config = {
    api: { listen: `127.0.0.1:${api}` },
    cluster: { partitions: 8, heartbeat: '200ms', nodeTtl: '1s', leaseTtl: '1500ms' },
    steps: { initialInterval: '50ms', maxAttempts: 10 },
  };
  const start = () => startNodeProcess({ redisUrl: redis.url, keyPrefix: prefix, nodeId: 'n1', config });
  let node: NodeProcess = await start();
  const address = `127.0.0.1:${api}`;

  const runs = new Map<string, number>();
  let running = 0;
  const handler = async (ctx: StepContext) => {
    const key = `${ctx.taskId}#${ctx.attempt}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
    running++;
    try {
      await new Promise((r) => setTimeout(r, 20));
      return 'ok';
    } finally {
      running--;
    }
  };
  const workers = [1, 2].map((i) => new Worker({
    address, tenant: 'acme', appWorkerId: `kw${i}`, flowTypes: { order: { steps: { work: handler } } },
    maxConcurrentTasks: 8, reservedRpcTasks: 0, logger: quiet,
    reconnectBackoff: { initialMs: 50, maxMs: 300 },
  }));
  const started = workers.map((w) => w.start().catch(() => undefined));
  await Promise.all(workers.map((w) => w.waitPullRegistered()));

  const client = new Client({ address, defaultTimeoutMs: 2000 });
  const acknowledged = new Set<string>();
  let killed = false;
  for (let i = 0; i < TOTAL; i += 50) {
    if (!killed && i >= TOTAL / 2) {
      // Kill while handlers run, so that attempts are caught mid-run.
      await waitFor(() => running >= 4, { timeoutMs: 10_000, intervalMs: 1, description: 'handlers running' });
      await node.kill('SIGKILL');
      killed = true;
      node = await start();
    }
    const batch = Array.from({ length: 50 }, (_, j) => ({
      tenant: 'acme', flowId: `flow-${i + j}`, flowType: 'order', stepType: 'work', stepExecutionId: 's',
    }));
    // A producer retries what was not acknowledged; only acknowledged enqueues are held to account.
    for (let tries = 0; tries < 50; tries++) {
      const ok = await client.enqueueSteps(batch).then((rs) => {
        for (const r of rs) acknowledged.add(r.taskId);
        return true;
      }, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  expect(killed).toBe(true);
  expect(acknowledged.size).toBeGreaterThan(TOTAL / 2);

  const outcomes = await collectOutcomes(client, acknowledged, 90_000);
  for (const id of acknowledged) expect(outcomes.get(id)).toBe('COMPLETED');
  // No attempt ran in two slots.
  expect([...runs.values()].every((n) => n === 1)).toBe(true);
  // The kill caught attempts mid-run: they failed through the retry policy and ran again as a later attempt.
  expect([...runs.keys()].some((k) => !k.endsWith('#1'))).toBe(true);

  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(started);
  client.close();
  await node.stop();
}, 180_000);
