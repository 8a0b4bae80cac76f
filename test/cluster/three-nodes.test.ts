/**
 * Three node processes on one redis-server (DESIGN §3, §4): Steps enqueued on
 * any node reach idle slots on any node; the owner of the most partitions and
 * then a node holding busy worker streams are killed with SIGKILL mid-run and
 * restarted. Every Step gets exactly one outcome and no attempt runs in two slots.
 */
import { Client, Worker, type StepContext } from '../../src';
import { runCli } from '../helpers/cli';
import { collectOutcomes } from '../helpers/outcomes';
import { freePorts } from '../helpers/ports';
import { startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const LEASE_TTL = 1500;

/** Where the nodes keep their state: the file's redis-server, or a Redis Cluster's seeds. */
type Store = { url: string } | { seeds: readonly string[] };

function clusterConfig(api: number, store: Store) {
  return {
    api: { listen: `127.0.0.1:${api}` },
    ...('seeds' in store ? { redis: { clusterNodes: [...store.seeds] } } : {}),
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

/** Every cluster a test started, stopped after it even when it fails half-way. */
const liveClusters: Cluster[] = [];
afterEach(async () => {
  for (const c of liveClusters.splice(0)) await c.stopAll();
});

/** Starts every node and waits for all of them, started or failed, before it answers. */
async function startAll(c: Cluster, indexes: number[]): Promise<void> {
  const started = await Promise.allSettled(indexes.map((i) => c.start(i)));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

async function startCluster(n: number, store: Store = { url: redis.url }): Promise<Cluster> {
  const prefix = uniquePrefix('c3');
  const ports = await freePorts(n);
  const nodes: (NodeProcess | undefined)[] = [];
  const c: Cluster = {
    prefix, ports, nodes,
    async start(i) {
      const node = await startNodeProcess({
        redisUrl: 'url' in store ? store.url : undefined, keyPrefix: prefix, nodeId: `n${i}`, config: clusterConfig(ports[i]!, store),
      });
      nodes[i] = node;
      return node;
    },
    async stopAll() {
      await Promise.all(nodes.map((x) => x?.kill('SIGKILL')));
    },
  };
  liveClusters.push(c);
  await startAll(c, Array.from({ length: n }, (_, i) => i));
  return c;
}

/** When each partition last started a task (task ids start with their partition). */
const startsByPartition = new Map<number, number[]>();

function recordingWorker(address: string, app: string, runs: Map<string, number>, delayMs = 0) {
  const handler = async (ctx: StepContext) => {
    const key = `${ctx.taskId}#${ctx.attempt}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
    const p = Number(ctx.taskId.split('-')[0]);
    const list = startsByPartition.get(p) ?? [];
    list.push(Date.now());
    startsByPartition.set(p, list);
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

it('serves a Step from any node\'s partition to an idle slot on another node', async () => {
  const c = await startCluster(3);
  const runs = new Map<string, number>();
  // Workers only on node 2; producer only on node 0: most partitions are owned elsewhere.
  const worker = recordingWorker(`127.0.0.1:${c.ports[2]}`, 'only', runs);
  const started = worker.start();
  await worker.waitPullRegistered();
  const producer = new Client({ address: `127.0.0.1:${c.ports[0]}` });
  const ids = await enqueueAll(producer, 300, 'x');
  const outcomes = await collectOutcomes(producer, ids, 30_000);
  expect(outcomes.size).toBe(300);
  expect([...outcomes.values()].every((s) => s === 'COMPLETED')).toBe(true);
  const owners = await producer.describeCluster();
  expect(owners.nodes.length).toBe(3);
  // `zdmatch cluster` shows the same picture: every partition owned, with its epoch.
  const cli = runCli(['cluster', '--address', `127.0.0.1:${c.ports[1]}`, '--json']);
  expect(cli.status).toBe(0);
  const shown = JSON.parse(cli.stdout) as { nodes: { nodeId: string; ownedPartitions: number }[]; partitionOwners: { owner: string; epoch: number }[] };
  expect(shown.nodes.map((n) => n.nodeId).sort()).toEqual(['n0', 'n1', 'n2']);
  expect(shown.nodes.reduce((a, n) => a + n.ownedPartitions, 0)).toBe(16);
  expect(shown.partitionOwners.every((p) => p.owner !== '' && p.epoch > 0)).toBe(true);
  const table = runCli(['cluster', '--address', `127.0.0.1:${c.ports[1]}`, '--partitions']);
  expect(table.stdout).toContain('16 partitions, 3 live nodes');
  await worker.stop();
  await started;
  producer.close();
  await c.stopAll();
}, 60_000);

/**
 * Kills the owner of the most partitions, then another node holding busy
 * worker streams, restarts both, and checks every Step's one outcome, that no
 * attempt ran twice, and how soon each killed owner's partitions started
 * tasks again (DESIGN §3: within leaseTtl plus one second).
 */
async function killAndRestart(total: number, store?: Store): Promise<{ resumed: number[]; handedOver: number[] }> {
  const c = await startCluster(3, store);
  const runs = new Map<string, number>();
  startsByPartition.clear();
  const workers = c.ports.map((p, i) => recordingWorker(`127.0.0.1:${p}`, `w${i}`, runs, 1));
  const started = workers.map((w) => w.start().catch(() => undefined));
  await Promise.all(workers.map((w) => w.waitPullRegistered()));

  const clients = c.ports.map((p) => new Client({ address: `127.0.0.1:${p}` }));
  const ids = await enqueueAll(clients[0]!, total, 'k');
  expect(ids.size).toBe(total);

  const owners = async (via: Client) => {
    const info = await via.describeCluster();
    const byNode = new Map<string, number[]>();
    for (const p of info.partitionOwners) byNode.set(p.owner, [...(byNode.get(p.owner) ?? []), p.partition]);
    return byNode;
  };
  const byNode = await owners(clients[0]!);
  const busiest = [...byNode.entries()].sort((a, b) => b[1].length - a[1].length)[0]![0];
  const x = Number(busiest.slice(1));
  const y = (x + 1) % 3;
  const z = 3 - x - y;
  const resumed: number[] = [];
  const handedOver: number[] = [];
  const killAt = async (i: number) => {
    const mine = (await owners(clients[z]!)).get(`n${i}`) ?? [];
    await c.nodes[i]!.kill('SIGKILL');
    const at = Date.now();
    const until = at + 20_000;
    // Handover: every one of its partitions leased by a live node again.
    const handover = (async () => {
      for (;;) {
        const info = await clients[z]!.describeCluster();
        const moved = mine.every((p) => { const o = info.partitionOwners.find((x) => x.partition === p)?.owner; return !!o && o !== `n${i}`; });
        if (moved) return handedOver.push(Date.now() - at);
        if (Date.now() > until || mine.length === 0) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // Dispatch: the first start of a task in one of its partitions after the kill.
    for (;;) {
      const first = mine.map((p) => (startsByPartition.get(p) ?? []).find((t) => t > at)).filter((t): t is number => t !== undefined);
      if (first.length > 0) {
        resumed.push(Math.min(...first) - at);
        break;
      }
      if (Date.now() > until || mine.length === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await handover;
  };
  await waitForRuns(runs, total / 5);
  await killAt(x);
  await waitForRuns(runs, total / 2);
  await killAt(y);
  await startAll(c, [x, y]);

  const outcomes = await collectOutcomes(clients[z]!, ids, 120_000);
  expect(outcomes.size).toBe(total);
  expect([...outcomes.values()].every((s) => s === 'COMPLETED')).toBe(true);
  expect([...runs.values()].every((n) => n === 1)).toBe(true);

  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(started);
  for (const cl of clients) cl.close();
  await c.stopAll();
  return { resumed, handedOver };
}

/**
 * DESIGN §3: a killed owner's partitions are leased again within leaseTtl plus
 * one second. Their first start can come later than that: after the second
 * kill one node with 8 slots serves a backlog of thousands, oldest first, and
 * the moved partitions' heads may be younger than its own (seen: +1.0-1.3 s).
 * So dispatch gets a bound of its own, two seconds looser.
 */
function expectPrompt(resumed: number[], handedOver: number[]): void {
  expect(handedOver.length).toBeGreaterThan(0);
  for (const ms of handedOver) expect(ms).toBeLessThanOrEqual(LEASE_TTL + 1000);
  expect(resumed.length).toBeGreaterThan(0);
  for (const ms of resumed) expect(ms).toBeLessThanOrEqual(LEASE_TTL + 3000);
}

it('keeps every Step to exactly one outcome across SIGKILLs of the busiest owner and of a gateway', async () => {
  const { resumed, handedOver } = await killAndRestart(20_000);
  console.log(`the killed owners' partitions were leased again after ${handedOver.join(' ms, ')} ms and started tasks after ${resumed.join(' ms, ')} ms (leaseTtl ${LEASE_TTL} ms)`);
  expectPrompt(resumed, handedOver);
}, 240_000);

describe('on a 3-master Redis Cluster', () => {
  let rc: RedisCluster;
  beforeAll(async () => {
    rc = await startRedisCluster({ masters: 3 });
  }, 60_000);
  afterAll(() => rc?.stop());

  it('keeps every Step to exactly one outcome across the same kills', async () => {
    const { resumed, handedOver } = await killAndRestart(6_000, { seeds: rc.seeds });
    console.log(`Redis Cluster: leased again after ${handedOver.join(' ms, ')} ms, started tasks after ${resumed.join(' ms, ')} ms`);
    expectPrompt(resumed, handedOver);
  }, 240_000);
});

async function waitForRuns(runs: Map<string, number>, n: number): Promise<void> {
  const until = Date.now() + 60_000;
  while (runs.size < n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
