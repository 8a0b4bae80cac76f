/**
 * Chaos soak (`npm run soak`; never part of `npm test`): three node processes on
 * one redis-server, a worker process of 8 slots per node, an engine that
 * runs flows of several Steps one after another (it enqueues Step k+1 when it
 * consumes Step k's outcome, as a durable-execution engine does), handlers that
 * fail now and then or hang past their Step's method timeout, flows the engine
 * cancels while a Step of theirs is queued or running, and a node killed with
 * SIGKILL (or stopped with SIGTERM) every one to three seconds and started
 * again on the same ports, or a worker process killed with SIGKILL mid-task and
 * started again under a new app worker id (test/soak/worker-process.js).
 *
 * Fetch-and-lock workers take part too (test/soak/fetch-worker-process.js): one
 * process per node, long-polling it over gRPC or over HTTP/JSON (the two
 * alternate across nodes and restarts), for the Steps of type `fetchwork` that
 * about a third of every flow's Steps are (the stream workers run only `work`,
 * and decline `fetchwork`, so those reach fetch workers alone). A fetch worker
 * completes most tasks, fails some on its fetch budget, unlocks some, extends
 * some locks, lets some lapse (it sleeps past the lock, then tries to complete),
 * and is killed with SIGKILL mid-task and started again under a new worker id
 * like the stream workers (a worker kill picks one of the two kinds).
 *
 * Redis itself is killed too, one event in six, and started again on its data:
 * it runs with `appendfsync always`, so an acknowledged write is on disk before
 * its reply leaves (DESIGN §11.1: no acknowledged enqueue is lost, given Redis's
 * own durability settings). With SOAK_REDIS=cluster the nodes run on a Redis
 * Cluster of three primaries instead, and a Redis kill takes one primary down
 * (its partitions' hash slots answer nothing until it is back, on its data and
 * its cluster config); the others serve on. No replicas: a replica promoted
 * over a killed primary may lack writes the primary acknowledged (Redis
 * replicates asynchronously), which is Redis's durability, not zdmatch's.
 * SOAK_REDIS=cluster-replicated gives each primary a replica, runs the nodes
 * with redis.waitReplicas: 1, and turns Redis events into failovers
 * (redis-failovers.ts says which checks forced ones leave standing).
 *
 * At the end, with every process up again, it checks the invariants of DESIGN
 * §11 that crashes put at risk: every acknowledged enqueue got exactly one
 * outcome (redeliveries carry the same outcome id), COMPLETED, or CANCELLED for
 * a flow the engine cancelled; every flow not cancelled ran to its last Step;
 * no attempt ran twice; and Redis holds no queued, in-flight or terminal task.
 * For a stream worker an attempt is (task id, attempt number) and runs once. A
 * fetch worker's run is a claim (one lock): a task whose lock lapsed, or that was
 * failed or unlocked, and was fetched again is a new run, not a second run of
 * the first. "Ran twice" is then two claims of one task whose locks overlap (the
 * second claimed before the first lock's lockUntil, as extended, or before the
 * Fail or Unlock that gave it back was sent), a claim of a task after a Complete
 * of it succeeded, two Completes of one task that succeeded (from two claims;
 * a retry under the same idempotency key is one), or a Complete that succeeded
 * though it was first sent after its lock had lapsed. The claim's time is the
 * node's, lockUntil minus the lock duration; the others are the worker's clock
 * when it sent the call, which comes before the node's: all are Date.now() on
 * one machine. That claim time is held to the fetch that made it (fetch-claims.ts):
 * lockUntil must be the lock asked, counted from between the fetch's send and its
 * answer, and no claim may be answered before the previous lock ended. Every
 * result is unique to its run, and a COMPLETED outcome must hold one its own
 * attempt or claim produced (outcome-results.ts).
 *
 * Knobs (env): SOAK_SECONDS (chaos phase, default 60), SOAK_FLOWS (default 300),
 * SOAK_STEPS (Steps per flow, default 6), SOAK_REDIS_KILLS (0 to keep Redis up),
 * SOAK_REDIS_SHARE (share of chaos events on Redis, default 1/6), SOAK_SEED (default: time; it fixes the schedule of kills, not the handlers' dice),
 * SOAK_REDIS (`single`, the default, `cluster`, or `cluster-replicated`: Redis
 * events are failovers to replicas, SOAK_FORCE_FAILOVERS=1 forced ones too, see
 * redis-failovers.ts), SOAK_FETCH (0 to leave fetch
 * workers and `fetchwork` Steps out), SOAK_RPC (InvokeRpc calls per second during
 * the chaos phase, default 20; 0 for none: rpc-load.ts), SOAK_DELAYED (share of
 * Steps enqueued with a readyAt 0.3 to 3 s ahead, default 0.15; 0 for none:
 * delayed-steps.ts). Fetch locks last FETCH_LOCK_MS (1 s);
 * fetch.maxLockExpiries is raised to 100, since every claim whose answer a
 * node kill lost costs a lock expiry, and a task turned terminal would wait for
 * an operator (the run fails on it: a terminal task is a leftover).
 * Every loop is bounded by SOAK_SECONDS plus a fixed settling budget.
 *
 * Beside the kills, processes are frozen (SIGSTOP, then SIGCONT; freezes.ts): a
 * node for 100 ms to twice its leaseTtl, Redis (or one primary) or a worker
 * process for 100 ms to 3 s. A frozen node's calls may end DEADLINE_EXCEEDED,
 * and no task's outcome may be of an attempt older than one that started (a late
 * result is refused). SOAK_FREEZES=0 leaves freezes out. Every frozen process is
 * resumed before the end-of-run checks, and in afterAll if the run failed.
 *
 * The peer mesh is partitioned too (mesh-partitions.ts): each node's mesh port sits
 * behind a TCP proxy it advertises, and now and then one node's proxy black-holes or
 * refuses every mesh link into it for 200 ms to 4 s while Redis stays in reach. The
 * invariants above stay as they are. SOAK_PARTITIONS=0 leaves them out. Every
 * partition is healed before the end-of-run checks, and in afterAll if the run failed.
 *
 * One node is cut off from Redis too (redis-cuts.ts): each node dials Redis through
 * TCP proxies of its own (on a Cluster one per server, given to it by redis.natMap),
 * and now and then one node's proxies black-hole or refuse for 200 ms to twice its
 * leaseTtl while the node runs on and its peers reach Redis. The invariants above
 * stay as they are, the RPC rule too.
 * SOAK_REDIS_CUTS=0 leaves them out. Every cut is healed before the end-of-run
 * checks, and in afterAll if the run failed.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, type Outcome } from '../../src';
import { sendCommand, startEmbeddedRedis, startRedisCluster, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { freePorts } from '../helpers/ports';
import { startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { uniquePrefix } from '../helpers/redis';
import { CallerStalls } from './caller-stalls';
import { DelayedSteps } from './delayed-steps';
import { checkClaimTimes } from './fetch-claims';
import { Freezes, lateResults } from './freezes';
import { MeshPartitions } from './mesh-partitions';
import { OutcomeResults } from './outcome-results';
import { RedisCuts } from './redis-cuts';
import { RedisFailovers } from './redis-failovers';
import { RpcLoad } from './rpc-load';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const FLOWS = Number(process.env.SOAK_FLOWS ?? 300);
const STEPS = Number(process.env.SOAK_STEPS ?? 6);
const REDIS_KILLS = process.env.SOAK_REDIS_KILLS !== '0';
/** The share of chaos events that hit Redis (SOAK_REDIS_SHARE, default 1/6, at most 2/3). */
const REDIS_SHARE = Math.min(2 / 3, Number(process.env.SOAK_REDIS_SHARE ?? 1 / 6));
const REPLICATED = process.env.SOAK_REDIS === 'cluster-replicated'; // redis-failovers.ts
const CLUSTER = process.env.SOAK_REDIS === 'cluster' || REPLICATED;
const FETCH = process.env.SOAK_FETCH !== '0';
/** The lock every fetch asks for. */
const FETCH_LOCK_MS = 1000;
const RPC_RATE = Number(process.env.SOAK_RPC ?? 20);
const DELAYED = Number(process.env.SOAK_DELAYED ?? 0.15);
const FREEZES = process.env.SOAK_FREEZES !== '0';
const LEASE_TTL_MS = 1500;
let freezes: Freezes | undefined;
const PARTITIONS = process.env.SOAK_PARTITIONS !== '0';
let partitions: MeshPartitions | undefined;
/** Redis-link cuts (redis-cuts.ts): on a Cluster, through redis.natMap. */
const REDIS_CUTS = process.env.SOAK_REDIS_CUTS !== '0';
let redisCuts: RedisCuts | undefined;
if (!['single', 'cluster', 'cluster-replicated', undefined].includes(process.env.SOAK_REDIS)) throw new Error(`SOAK_REDIS: ${process.env.SOAK_REDIS} is not single, cluster or cluster-replicated`);
const NODES = 3;
/** Every Step's method timeout; a hung handler outlives it by half. */
const METHOD_TIMEOUT_MS = 1000;
const SETTLE_MS = 180_000;

/** Every write on disk before its reply. */
const DURABLE = ['--appendonly', 'yes', '--appendfsync', 'always'];
const CLUSTER_ARGS = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000'];

/**
 * The Redis servers, each on a fixed port and data dir so that a killed one starts
 * again on its data: one redis-server, or the three primaries of a Redis Cluster.
 */
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-soak-'));
let servers: EmbeddedRedis[] = [];
let failovers: RedisFailovers | undefined;
const restartRedis = async (i: number) => {
  const old = servers[i]!;
  servers[i] = await startEmbeddedRedis({ dataDir: old.dataDir, port: old.port, args: [...DURABLE, ...(CLUSTER ? CLUSTER_ARGS : [])] });
};
beforeAll(async () => {
  if (REPLICATED) servers = (failovers = await RedisFailovers.start(DURABLE, process.env.SOAK_FORCE_FAILOVERS === '1')).all();
  else if (CLUSTER) servers = [...(await startRedisCluster({ args: DURABLE })).nodes];
  else servers = [await startEmbeddedRedis({ dataDir, args: DURABLE })];
}, 90_000);
afterAll(async () => {
  freezes?.halt();
  await partitions?.close();
  await redisCuts?.close();
  if (failovers) servers = failovers.all();
  await Promise.all(servers.map((r) => r.stop()));
  fs.rmSync(dataDir, { recursive: true, force: true });
  // A restarted cluster node runs on the data dir its first start made; stop() keeps a dir it was given.
  for (const r of servers) if (r.dataDir !== dataDir) fs.rmSync(r.dataDir, { recursive: true, force: true });
});

/** A small seeded PRNG (mulberry32), so a failing run can be repeated with its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`soak: ${msg}\n`);

it(`keeps every invariant across ${SECONDS} s of node kills`, async () => {
  const seed = Number(process.env.SOAK_SEED ?? Date.now() % 1_000_000);
  const random = prng(seed);
  log(`seed ${seed}: ${FLOWS} flows × ${STEPS} Steps, ${NODES} nodes on ${REPLICATED ? 'a Redis Cluster of 3 primaries with a replica each' : CLUSTER ? 'a Redis Cluster of 3 primaries' : 'one redis-server'}, ${SECONDS} s of kills${REDIS_KILLS ? ' (Redis too)' : ''}`);
  const prefix = uniquePrefix('soak');
  const ports = await freePorts(NODES);
  const httpPorts = await freePorts(NODES);
  const internalPorts = await freePorts(NODES);
  if (PARTITIONS) partitions = await MeshPartitions.open(internalPorts, { random: prng(seed + 4), until: Date.now() + SECONDS * 1000 });
  if (REDIS_CUTS) redisCuts = await RedisCuts.open(NODES, servers.map((r) => r.port), { random: prng(seed + 5), leaseTtlMs: LEASE_TTL_MS, until: Date.now() + SECONDS * 1000 });
  const config = (port: number, httpPort: number) => ({
    api: { listen: `127.0.0.1:${port}` },
    http: { listen: `127.0.0.1:${httpPort}` },
    fetch: { maxLockExpiries: 100 },
    cluster: { partitions: 16, heartbeat: '200ms', nodeTtl: '1500ms', leaseTtl: `${LEASE_TTL_MS}ms` },
    matching: { syncMatchWait: '50ms', stickyWait: '200ms' },
    steps: { initialInterval: '20ms', maxInterval: '200ms', maxAttempts: 1000 },
    log: { level: 'error' },
  });
  const nodes: (NodeProcess | undefined)[] = [];
  // A node that cannot reach Redis as it starts exits 1, and its supervisor starts it again (as
  // Kubernetes would): a restart that met a cut Redis link is tried again, for 15 s at most.
  const start = async (i: number) => {
    const seeds = redisCuts?.clusterConfig(i) ?? { clusterNodes: servers.map((r) => `127.0.0.1:${r.port}`) };
    const redisConfig = CLUSTER ? { redis: { ...seeds, ...(REPLICATED ? { waitReplicas: 1 } : {}) } } : {};
    for (let tries = 1; ; tries++) {
      try {
        nodes[i] = await startNodeProcess({
          ...(CLUSTER ? {} : { redisUrl: redisCuts?.url(i) ?? servers[0]!.url }), keyPrefix: prefix, nodeId: `n${i}`,
          config: { ...config(ports[i]!, httpPorts[i]!), ...redisConfig, ...(partitions ? { internal: partitions.internalConfig(i, internalPorts[i]!) } : {}) },
        });
        return;
      } catch (err) {
        if (!redisCuts || tries >= 30 || !/exited \(1\) before it was ready[\s\S]*(cannot reach (redis|the Redis Cluster)|the Redis Cluster at .* is not serving)/.test((err as Error).message)) throw err;
        await sleep(500);
      }
    }
  };
  await Promise.all(ports.map((_, i) => start(i)));
  const clients = ports.map((p) => new Client({ address: `127.0.0.1:${p}`, reconnectBackoff: { initialMs: 50, maxMs: 300 } }));

  // ---- workers: a process per node address, reconnecting to it across its restarts; each
  // tells every attempt it starts, before running it, so a kill loses none of the count
  const runs = new Map<string, number>();
  const violations: string[] = [];
  const stalls = new CallerStalls();
  stalls.start();
  const workersReady = new Set<string>();
  const rpcLoad = new RpcLoad({ clients, up: () => nodes.map((n, i) => (n ? i : -1)).filter((i) => i >= 0), random: prng(seed + 1), rate: RPC_RATE, until: Date.now() + SECONDS * 1000 + 10_000,
    silent: (i, from, to) => freezes?.nodeFrozenDuring(i, from, to) ?? false, callerStalled: (from, to) => stalls.longestDuring(from, to) });
  const delayed = new DelayedSteps({ random: prng(seed + 2), share: DELAYED });
  const results = new OutcomeResults();
  const workers: (ChildProcess | undefined)[] = [];
  let generation = 0;
  const startWorker = (i: number) => {
    const child = fork(path.join(__dirname, 'worker-process.js'), [`127.0.0.1:${ports[i]}`, `w${i}-g${++generation}`, String(METHOD_TIMEOUT_MS)],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    child.on('message', (m: { run?: string; at?: number; rpc?: string; worker?: string; result?: string; output?: string; ready?: string }) => {
      if (m.ready) workersReady.add(m.ready);
      if (rpcLoad.onMessage(m) || results.onStreamMessage(m) || !m.run) return;
      delayed.started(m.run, m.at);
      const n = (runs.get(m.run) ?? 0) + 1;
      runs.set(m.run, n);
      if (failovers?.excusesRerun(m.run, m.at!)) return;
      if (n > 1) violations.push(`attempt ${m.run} ran ${n} times`);
    });
    workers[i] = child;
  };
  // Fetch workers tell every claim, extension, Complete and release (fetch-worker-process.js).
  const fetchWorkers: (ChildProcess | undefined)[] = [];
  const fetchLog = new Map<string, FetchEvent[]>(); // taskId → what fetch workers told of it, in order per worker
  let fetchClaims = 0;
  const fetchStarts: number[] = [];
  const startFetchWorker = (i: number) => {
    const g = ++generation;
    // Each node's fetch worker switches between the two surfaces at every restart.
    fetchStarts[i] = (fetchStarts[i] ?? 0) + 1;
    const mode = (i + fetchStarts[i]!) % 2 === 0 ? 'http' : 'grpc';
    const child = fork(path.join(__dirname, 'fetch-worker-process.js'),
      [`127.0.0.1:${ports[i]}`, `127.0.0.1:${httpPorts[i]}`, `fw${i}-g${g}`, mode, String(FETCH_LOCK_MS)],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    child.on('message', (m: FetchEvent) => {
      const taskId = m.claimed ?? m.extended ?? m.completing ?? m.completed ?? m.releasing ?? m.released;
      if (!taskId) return;
      if (m.claimed) {
        fetchClaims++;
        // A claim starts a run at the node's now (lockUntil less the lock): no earlier than a delayed Step's readyAt.
        delayed.started(`${taskId}#claim ${m.lockUntil}`, m.lockUntil! - FETCH_LOCK_MS);
      }
      if (m.completing) results.fetchCompleting(taskId, m.worker, m.claim!);
      const list = fetchLog.get(taskId) ?? [];
      list.push(m);
      fetchLog.set(taskId, list);
    });
    fetchWorkers[i] = child;
  };
  const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));
  ports.forEach((_, i) => startWorker(i));
  if (FETCH) ports.forEach((_, i) => startFetchWorker(i));

  // ---- the engine: a call goes to a random node and moves on to the next one on failure
  const up = () => nodes.map((n, i) => (n ? i : -1)).filter((i) => i >= 0);
  async function anyNode<T>(what: string, call: (c: Client) => Promise<T>): Promise<T> {
    const until = Date.now() + SECONDS * 1000 + SETTLE_MS;
    for (let tries = 0; ; tries++) {
      const live = up();
      const i = live.length ? live[Math.floor(random() * live.length)]! : Math.floor(random() * NODES);
      try {
        return await call(clients[i]!);
      } catch (err) {
        if (Date.now() > until) throw new Error(`${what}: still failing after ${tries} tries: ${(err as Error).message}`);
        await sleep(20 + Math.min(tries, 10) * 20);
      }
    }
  }
  const enqueued = new Set<string>(); // every task id an enqueue acknowledged
  /** About a third of the Steps, a different one in each flow, are for fetch workers. */
  const stepTypeOf = (f: number, step: number) => (FETCH && (f + step) % 3 === 1 ? 'fetchwork' : 'work');
  const cancelled = new Set<string>(); // flows the engine cancels (or decided to)
  let cancels = 0;
  const enqueue = async (flows: number[], step: number) => {
    const readyAt = delayed.plan(flows.length);
    const r = await anyNode(`enqueue of step ${step}`, (c) => c.enqueueSteps(flows.map((f, k) => ({
      tenant: 'acme', flowId: `f${f}`, flowType: 'order', stepType: stepTypeOf(f, step), stepExecutionId: `s${step}`, input: `step ${step} of f${f}`,
      methodTimeoutMs: METHOD_TIMEOUT_MS, ...(readyAt[k] !== undefined ? { readyAt: readyAt[k] } : {}),
    }))));
    for (const e of r) enqueued.add(e.taskId);
    delayed.enqueued(r.map((e) => e.taskId), readyAt);
    // Now and then a flow is cancelled while this Step of it is queued or running.
    for (const f of flows) {
      if (random() >= 0.02) continue;
      const flowId = `f${f}`;
      cancelled.add(flowId);
      setTimeout(() => void anyNode(`cancel of ${flowId}`, (c) => c.cancelFlow('acme', flowId, 'soak')).then(() => cancels++), Math.floor(random() * 20));
    }
  };

  const outcomeOf = new Map<string, Outcome>(); // taskId → its one outcome
  const stepsDone = new Map<string, number>(); // flowId → highest step completed
  let redelivered = 0;
  let running = true;
  const engine = (async () => {
    let ack: string[] = [];
    const until = Date.now() + SECONDS * 1000 + SETTLE_MS;
    while (running && Date.now() < until) {
      const got = await anyNode('consume', (c) => c.consumeOutcomes({ group: 'engine', consumer: 'soak', maxCount: 500, waitMs: 500, ack, redeliverAfterMs: 2000 }));
      ack = got.map((o) => o.outcomeId);
      const next: number[] = [];
      let nextStep = -1;
      for (const o of got) {
        const seen = outcomeOf.get(o.taskId);
        if (seen) {
          if (seen.outcomeId !== o.outcomeId) violations.push(`task ${o.taskId} has two outcomes: ${seen.outcomeId} ${seen.status} and ${o.outcomeId} ${o.status}`);
          redelivered++;
          continue;
        }
        outcomeOf.set(o.taskId, o);
        if (o.status !== 'COMPLETED' && !(o.status === 'CANCELLED' && cancelled.has(o.flowId))) {
          violations.push(`task ${o.taskId} (${o.flowId} ${o.stepExecutionId}) ended ${o.status}: ${o.error?.message ?? ''}`);
          continue;
        }
        if (o.status !== 'COMPLETED') continue;
        const step = Number(o.stepExecutionId.slice(1));
        stepsDone.set(o.flowId, Math.max(stepsDone.get(o.flowId) ?? -1, step));
        if (step + 1 < STEPS && !cancelled.has(o.flowId)) {
          // One call per step number: a batch is one step of many flows.
          if (nextStep !== -1 && nextStep !== step + 1) {
            await enqueue(next.splice(0), nextStep);
          }
          nextStep = step + 1;
          next.push(Number(o.flowId.slice(1)));
        }
      }
      if (next.length) await enqueue(next, nextStep);
    }
  })();

  /** Flows at their end: cancelled, or their last Step completed. */
  const flowsDone = () => Array.from({ length: FLOWS }, (_, f) => `f${f}`).filter((id) => cancelled.has(id) || stepsDone.get(id) === STEPS - 1).length;
  const unanswered = () => [...enqueued].filter((id) => !outcomeOf.has(id));

  // ---- load: every flow's first Step, spread over the first four fifths of the chaos phase
  const t0 = Date.now();
  const loader = (async () => {
    const batch = 25;
    const gap = Math.max(5, Math.floor((SECONDS * 1000 * 0.8) / Math.ceil(FLOWS / batch)));
    for (let f = 0; f < FLOWS; f += batch) {
      await enqueue(Array.from({ length: Math.min(batch, FLOWS - f) }, (_, k) => f + k), 0);
      await sleep(gap);
    }
  })();

  if (RPC_RATE > 0) {
    // After the first workers registered: RPCs sent while a dozen processes boot on two cores
    // test the machine, not the nodes.
    for (const until = Date.now() + 20_000; workersReady.size < NODES && Date.now() < until;) await sleep(50);
    rpcLoad.start();
  }
  if (FREEZES) {
    freezes = new Freezes({ random: prng(seed + 3), leaseTtlMs: LEASE_TTL_MS, until: t0 + SECONDS * 1000 });
    freezes.start({ nodes: () => nodes, redis: () => failovers?.all() ?? servers, workers: () => [...workers, ...fetchWorkers] });
  }
  partitions?.start();
  redisCuts?.start();

  // ---- chaos: kill or stop a node, start it again on its ports
  let kills = 0;
  let stops = 0;
  let redisKills = 0;
  let workerKills = 0;
  let fetchWorkerKills = 0;
  while (Date.now() - t0 < SECONDS * 1000) {
    await sleep(1000 + Math.floor(random() * 2000));
    const dice = random();
    if (REDIS_KILLS && dice < REDIS_SHARE && failovers) {
      log(`Redis: ${await failovers.failover(random)}`);
      redisKills++;
    } else if (REDIS_KILLS && dice < REDIS_SHARE) {
      const i = Math.floor(random() * servers.length);
      const r = servers[i]!;
      r.kill('SIGKILL');
      await r.exited();
      redisKills++;
      await sleep(100 + Math.floor(random() * 700));
      await restartRedis(i);
    } else if (dice < REDIS_SHARE + 1 / 6) {
      // A worker process dies mid-task: its node fails the attempts it held, and they run
      // again; a fetch worker's locks lapse, and its tasks are fetched again.
      const i = Math.floor(random() * NODES);
      const fetchWorker = FETCH && random() < 0.5;
      const child = (fetchWorker ? fetchWorkers : workers)[i]!;
      child.kill('SIGKILL');
      await exited(child);
      workerKills++;
      if (fetchWorker) fetchWorkerKills++;
      await sleep(100 + Math.floor(random() * 700));
      if (fetchWorker) startFetchWorker(i);
      else startWorker(i);
    } else {
      const i = Math.floor(random() * NODES);
      const node = nodes[i];
      if (!node) continue;
      nodes[i] = undefined;
      if (random() < 0.75) {
        await node.kill('SIGKILL');
        kills++;
      } else {
        await node.stop(20_000);
        stops++;
      }
      await sleep(100 + Math.floor(random() * 700));
      await start(i);
    }
    const done = flowsDone();
    log(`${Math.round((Date.now() - t0) / 1000)} s: ${kills} kills, ${stops} stops, ${workerKills} worker kills (${fetchWorkerKills} fetch), ${redisKills} Redis kills; ${outcomeOf.size} outcomes, ${done}/${FLOWS} flows done`);
  }
  await loader;
  await rpcLoad.stop();
  await freezes?.stop();
  await partitions?.stop();
  await redisCuts?.stop();

  // ---- settle: every flow to its last Step
  const settleUntil = Date.now() + SETTLE_MS;
  while ((flowsDone() < FLOWS || unanswered().length > 0) && violations.length === 0 && Date.now() < settleUntil) {
    await sleep(500);
  }
  running = false;
  await engine;
  violations.push(...lateResults(runs.keys(), outcomeOf), ...results.check(outcomeOf.values()));
  const attempts = [...outcomeOf.values()].reduce((s, o) => s + o.attempt, 0);
  const byStatus: Record<string, number> = {};
  for (const o of outcomeOf.values()) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
  log(`${kills} kills, ${stops} stops, ${workerKills} worker kills and ${redisKills} Redis kills; ${enqueued.size} Steps enqueued, outcomes ${JSON.stringify(byStatus)} (${redelivered} redelivered), ${runs.size} attempts run (${attempts - outcomeOf.size} retries), ${cancelled.size} flows cancelled (${cancels} CancelFlow calls answered), ${violations.length} violations`);
  if (FETCH) {
    const fetchViolations = failovers ? [...fetchLog].flatMap(([id, events]) => {
      const one = new Map([[id, events]]);
      const found = [...checkFetchRuns(one), ...checkClaimTimes(one, FETCH_LOCK_MS)];
      return found.length && failovers!.excusesFetchTask(events.filter((e) => e.claimed).map((e) => e.lockUntil! - FETCH_LOCK_MS), found) ? [] : found;
    }) : [...checkFetchRuns(fetchLog), ...checkClaimTimes(fetchLog, FETCH_LOCK_MS)];
    violations.push(...fetchViolations);
    const all = [...fetchLog.values()].flat();
    const count = (f: (e: FetchEvent) => unknown) => all.filter(f).length;
    log(`fetch workers: ${fetchClaims} claims of ${fetchLog.size} tasks (${[...fetchLog.values()].filter((l) => l.filter((e) => e.claimed).length > 1).length} claimed more than once; ${count((e) => e.via === 'grpc')} over gRPC, ${count((e) => e.via === 'http')} over HTTP), `
      + `${count((e) => e.completed)} of ${count((e) => e.completing)} Completes taken, ${count((e) => e.released && e.ok)} of ${count((e) => e.releasing)} Fails and Unlocks, `
      + `${count((e) => e.extended)} locks extended, ${fetchViolations.length} violations`);
  }
  if (freezes) log(freezes.summary());
  if (partitions) log(partitions.summary());
  if (redisCuts) log(redisCuts.summary());
  if (failovers) log(`Redis: ${failovers.summary()}`);
  log(`${rpcLoad.summary()}; ${delayed.count} Steps delayed (${delayed.startedCount} started)`);
  stalls.stop();
  log(stalls.summary());
  for (const v of violations.slice(0, 20)) log(`violation: ${v}`);

  // Nothing left behind: no queued Step, none in flight.
  const leftovers: string[] = [];
  for (const { port } of failovers ? await failovers.primaries() : servers) {
    const keys = (await sendCommand(port, ['KEYS', `${prefix}:{*}:*`])) as string[];
    for (const key of keys) {
      if (/:t:/.test(key)) leftovers.push(key);
      else if (/:q:|:inflight$|:terminal$/.test(key) && Number(await sendCommand(port, ['ZCARD', key])) > 0) leftovers.push(key);
    }
  }

  await Promise.all([...workers, ...fetchWorkers].map(async (w) => {
    if (!w) return;
    w.kill('SIGTERM');
    await exited(w);
  }));
  rpcLoad.finish();
  delayed.finish();
  for (const v of [...rpcLoad.violations, ...delayed.violations].slice(0, 20)) log(`violation: ${v}`);
  for (const c of clients) c.close();
  await Promise.all(nodes.map((n) => n?.kill('SIGKILL')));

  expect(violations).toEqual([]);
  expect(rpcLoad.violations).toEqual([]);
  expect(delayed.violations).toEqual([]);
  expect(leftovers).toEqual([]);
  expect(unanswered()).toEqual([]);
  expect([...outcomeOf.keys()].filter((id) => !enqueued.has(id))).toEqual([]);
  expect(flowsDone()).toBe(FLOWS);
}, (SECONDS + 300) * 1000);

/** What a fetch worker process tells (fetch-worker-process.js); `claim` is the lockUntil a claim was answered with, naming it. */
interface FetchEvent {
  worker: string;
  claimed?: string; lockUntil?: number; attempt?: number; via?: string;
  extended?: string; claim?: number;
  completing?: string; at?: number;
  completed?: string;
  releasing?: string;
  released?: string; ok?: boolean;
}

/**
 * The fetch workers' runs, checked after the fact: per task, its claims in the order the node
 * made them (lockUntil minus the lock duration, on the node's clock), and each claim's end: its
 * lockUntil as last extended, or the time a Fail or Unlock of it was sent that the node took (or
 * may have: its answer was lost). No claim before the previous one's end, none after a Complete
 * succeeded, one successful Complete at most, and that one sent while its lock was live.
 */
function checkFetchRuns(log: Map<string, FetchEvent[]>): string[] {
  const out: string[] = [];
  for (const [taskId, events] of log) {
    interface Claim { worker: string; lockUntil: number; at: number; end: number; released?: number; completedSentAt?: number }
    const claims = new Map<string, Claim>();
    const id = (worker: string, lockUntil: number) => `${worker}@${lockUntil}`;
    const sent = new Map<string, number>(); // a claim's Complete or release, when first sent
    for (const e of events) {
      if (e.claimed) {
        claims.set(id(e.worker, e.lockUntil!), { worker: e.worker, lockUntil: e.lockUntil!, at: e.lockUntil! - FETCH_LOCK_MS, end: e.lockUntil! });
        continue;
      }
      const c = claims.get(id(e.worker, e.claim!));
      if (!c) {
        out.push(`fetch task ${taskId}: ${e.worker} acted on a claim it never told (lockUntil ${e.claim})`);
        continue;
      }
      const key = id(e.worker, e.claim!);
      if (e.extended) c.end = Math.max(c.end, e.lockUntil!);
      else if (e.completing || e.releasing) { if (!sent.has(key)) sent.set(key, e.at!); }
      else if (e.completed) c.completedSentAt = sent.get(key);
      else if (e.released && e.ok !== false) c.released = sent.get(key);
    }
    const ordered = [...claims.values()].sort((a, b) => a.at - b.at);
    const completes = ordered.filter((c) => c.completedSentAt !== undefined);
    if (completes.length > 1) out.push(`fetch task ${taskId} was completed by ${completes.length} claims: ${completes.map((c) => `${c.worker} (lockUntil ${c.lockUntil})`).join(', ')}`);
    for (const c of completes) {
      if (c.completedSentAt! > c.end) out.push(`fetch task ${taskId}: ${c.worker}'s Complete was sent ${c.completedSentAt! - c.end} ms after its lock lapsed (lockUntil ${c.end}), and succeeded`);
    }
    for (let k = 1; k < ordered.length; k++) {
      const prev = ordered[k - 1]!;
      const next = ordered[k]!;
      if (prev.completedSentAt !== undefined) {
        out.push(`fetch task ${taskId} was claimed by ${next.worker} at ${next.at}, after ${prev.worker}'s Complete of it succeeded`);
        continue;
      }
      const end = prev.released !== undefined ? Math.min(prev.released, prev.end) : prev.end;
      if (next.at < end) out.push(`fetch task ${taskId} was claimed by ${next.worker} at ${next.at}, ${end - next.at} ms before ${prev.worker}'s lock ended (lockUntil ${prev.end}${prev.released !== undefined ? `, given back at ${prev.released}` : ''})`);
    }
  }
  return out;
}
