/**
 * Three node processes on one redis-server (DESIGN §3, §4): Steps enqueued on
 * any node reach idle slots on any node; the owner of the most partitions and
 * then a node holding busy worker streams are killed with SIGKILL mid-run and
 * restarted. Every Step gets exactly one outcome and no attempt runs in two slots.
 */
import { Client, Worker, type StepContext } from '../../src';
import { freePorts } from '../helpers/ports';
import { startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const LEASE_TTL = 1500;

function clusterConfig(api: number) {
  return {
    api: { listen: `127.0.0.1:${api}` },
    cluster: { partitions: 16, heartbeat: '200ms', nodeTtl: `${LEASE_TTL}ms`, leaseTtl: `${LEASE_TTL}ms` },
    matching: { syncMatchWait: '50ms', stickyWait: '200ms' },
    steps: { initialInterval: '50ms', maxAttempts: 20 },
    log: { level: 'warn' },
  };
}

interface Cluster {
  prefix: string;
  ports: number[];
  nodes: (NodeProcess | undefined)[];
  start(i: number): Promise<NodeProcess>;
  stopAll(): Promise<void>;
}

async function startCluster(n: number): Promise<Cluster> {
  const prefix = uniquePrefix('c3');
  const ports = await freePorts(n);
  const nodes: (NodeProcess | undefined)[] = [];
  const c: Cluster = {
    prefix, ports, nodes,
    async start(i) {
      const node = await startNodeProcess({ redisUrl: redis.url, keyPrefix: prefix, nodeId: `n${i}`, config: clusterConfig(ports[i]!) });
      nodes[i] = node;
      return node;
    },
    async stopAll() {
      await Promise.all(nodes.map((x) => x?.kill('SIGKILL')));
    },
  };
  await Promise.all(Array.from({ length: n }, (_, i) => c.start(i)));
  return c;
}

function recordingWorker(address: string, app: string, runs: Map<string, number>, delayMs = 0) {
  const handler = async (ctx: StepContext) => {
    const key = `${ctx.taskId}#${ctx.attempt}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    return 'ok';
  };
  return new Worker({
    address, tenant: 'acme', appWorkerId: app, flowTypes: { order: { steps: { work: handler } } },
    maxConcurrentTasks: 8, reservedRpcTasks: 0, logger: quiet, reconnectBackoff: { initialMs: 50, maxMs: 300 },
  });
}

async function enqueueAll(client: Client, total: number, tag: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let i = 0; i < total; i += 500) {
    const batch = Array.from({ length: Math.min(500, total - i) }, (_, j) => ({
      tenant: 'acme', flowId: `${tag}-${i + j}`, flowType: 'order', stepType: 'work', stepExecutionId: 's',
    }));
    for (const r of await client.enqueueSteps(batch)) ids.add(r.taskId);
  }
  return ids;
}

async function collect(client: Client, ids: Set<string>, timeoutMs: number): Promise<Map<string, string>> {
  const outcomes = new Map<string, string>();
  let ack: string[] = [];
  const deadline = Date.now() + timeoutMs;
  while (outcomes.size < ids.size && Date.now() < deadline) {
    const got = await client.consumeOutcomes({ group: 'engine', consumer: 'c', maxCount: 1000, waitMs: 1000, ack }).catch(() => []);
    ack = got.map((o) => o.outcomeId);
    for (const o of got) {
      if (outcomes.has(o.taskId)) throw new Error(`second outcome for ${o.taskId}`);
      outcomes.set(o.taskId, o.status);
    }
  }
  return outcomes;
}

it('serves a Step from any node\'s partition to an idle slot on another node', async () => {
  const c = await startCluster(3);
  const runs = new Map<string, number>();
  // Workers only on node 2; producer only on node 0: most partitions are owned elsewhere.
  const worker = recordingWorker(`127.0.0.1:${c.ports[2]}`, 'only', runs);
  const started = worker.start();
  await worker.waitPullRegistered();
  const producer = new Client({ address: `127.0.0.1:${c.ports[0]}` });
  const ids = await enqueueAll(producer, 300, 'x');
  const outcomes = await collect(producer, ids, 30_000);
  expect(outcomes.size).toBe(300);
  expect([...outcomes.values()].every((s) => s === 'COMPLETED')).toBe(true);
  const owners = await producer.describeCluster();
  expect(owners.nodes.length).toBe(3);
  await worker.stop();
  await started;
  producer.close();
  await c.stopAll();
}, 60_000);

it('keeps every Step to exactly one outcome across SIGKILLs of the busiest owner and of a gateway', async () => {
  const TOTAL = 20_000;
  const c = await startCluster(3);
  const runs = new Map<string, number>();
  const workers = c.ports.map((p, i) => recordingWorker(`127.0.0.1:${p}`, `w${i}`, runs, 1));
  const started = workers.map((w) => w.start().catch(() => undefined));
  await Promise.all(workers.map((w) => w.waitPullRegistered()));

  const clients = c.ports.map((p) => new Client({ address: `127.0.0.1:${p}` }));
  const ids = await enqueueAll(clients[0]!, TOTAL, 'k');
  expect(ids.size).toBe(TOTAL);

  // The owner of the most partitions dies first, then another node holding busy worker streams.
  const info = await clients[0]!.describeCluster();
  const count = new Map<string, number>();
  for (const p of info.partitionOwners) count.set(p.owner, (count.get(p.owner) ?? 0) + 1);
  const busiest = [...count.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  const x = Number(busiest.slice(1));
  const y = (x + 1) % 3;
  const z = 3 - x - y;
  await waitForRuns(runs, TOTAL / 5);
  await c.nodes[x]!.kill('SIGKILL');
  await waitForRuns(runs, TOTAL / 2);
  await c.nodes[y]!.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 500));
  await Promise.all([c.start(x), c.start(y)]);

  const outcomes = await collect(clients[z]!, ids, 120_000);
  expect(outcomes.size).toBe(TOTAL);
  expect([...outcomes.values()].every((s) => s === 'COMPLETED')).toBe(true);
  expect([...runs.values()].every((n) => n === 1)).toBe(true);

  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(started);
  for (const cl of clients) cl.close();
  await c.stopAll();
}, 240_000);

async function waitForRuns(runs: Map<string, number>, n: number): Promise<void> {
  const until = Date.now() + 60_000;
  while (runs.size < n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
