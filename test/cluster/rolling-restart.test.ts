/**
 * A rolling restart of all 3 nodes (SIGTERM drain, then start again) under a
 * steady load loses nothing; prints the enqueue-to-start p99 before, during
 * and after the restarts.
 */
import { Client, Worker, type StepContext } from '../../src';
import { collectOutcomes } from '../helpers/outcomes';
import { freePorts } from '../helpers/ports';
import { startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function p99(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!;
}

it('loses nothing across a rolling restart under steady load', async () => {
  const prefix = uniquePrefix('roll');
  const ports = await freePorts(3);
  const nodes: NodeProcess[] = [];
  const start = async (i: number) => {
    nodes[i] = await startNodeProcess({
      redisUrl: redis.url, keyPrefix: prefix, nodeId: `r${i}`,
      config: {
        api: { listen: `127.0.0.1:${ports[i]}` },
        cluster: { partitions: 16, heartbeat: '200ms', nodeTtl: '1500ms', leaseTtl: '1500ms' },
        matching: { syncMatchWait: '50ms', stickyWait: '200ms' },
        drain: { timeout: '5s' },
        log: { level: 'warn' },
      },
    });
  };
  await Promise.all([0, 1, 2].map(start));

  const runs = new Map<string, number>();
  const latency: { enqueuedAt: number; ms: number }[] = [];
  const handler = async (ctx: StepContext) => {
    const key = `${ctx.taskId}#${ctx.attempt}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
    const enq = ctx.enqueuedAt?.getTime() ?? Date.now();
    latency.push({ enqueuedAt: enq, ms: Date.now() - enq });
    await new Promise((r) => setTimeout(r, 2));
    return 'ok';
  };
  const workers = ports.map((p, i) => new Worker({
    address: `127.0.0.1:${p}`, tenant: 'acme', appWorkerId: `rw${i}`, flowTypes: { order: { steps: { work: handler } } },
    maxConcurrentTasks: 8, reservedRpcTasks: 0, logger: quiet, reconnectBackoff: { initialMs: 50, maxMs: 300 },
  }));
  const started = workers.map((w) => w.start().catch(() => undefined));
  await Promise.all(workers.map((w) => w.waitPullRegistered()));
  const clients = ports.map((p) => new Client({ address: `127.0.0.1:${p}`, defaultTimeoutMs: 2000 }));

  // Steady load: 20 Steps every 100 ms, through whichever node answers.
  const acknowledged = new Set<string>();
  let stopLoad = false;
  let seq = 0;
  const load = (async () => {
    while (!stopLoad) {
      const batch = Array.from({ length: 20 }, () => ({ tenant: 'acme', flowId: `roll-${seq++}`, flowType: 'order', stepType: 'work', stepExecutionId: 's' }));
      for (let k = 0; k < 3; k++) {
        const ok = await clients[(seq + k) % 3]!.enqueueSteps(batch).then((rs) => {
          for (const r of rs) acknowledged.add(r.taskId);
          return true;
        }, () => false);
        if (ok) break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  await new Promise((r) => setTimeout(r, 3000));
  const duringFrom = Date.now();
  for (let i = 0; i < 3; i++) {
    expect(await nodes[i]!.stop()).toBe(0); // SIGTERM: drain, hand partitions over, exit 0
    await start(i);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const duringTo = Date.now();
  await new Promise((r) => setTimeout(r, 3000));
  stopLoad = true;
  await load;

  const outcomes = await collectOutcomes(clients[0]!, acknowledged, 60_000);
  for (const id of acknowledged) expect(outcomes.get(id)).toBe('COMPLETED');
  expect([...runs.values()].every((n) => n === 1)).toBe(true);

  const before = latency.filter((l) => l.enqueuedAt < duringFrom).map((l) => l.ms);
  const during = latency.filter((l) => l.enqueuedAt >= duringFrom && l.enqueuedAt < duringTo).map((l) => l.ms);
  const after = latency.filter((l) => l.enqueuedAt >= duringTo).map((l) => l.ms);
  console.log(`rolling restart: ${acknowledged.size} Steps; enqueue-to-start p99 before ${p99(before)} ms, during ${p99(during)} ms, after ${p99(after)} ms`);
  expect(before.length).toBeGreaterThan(0);
  expect(after.length).toBeGreaterThan(0);

  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(started);
  for (const c of clients) c.close();
  await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
}, 180_000);
