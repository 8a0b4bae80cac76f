/**
 * `zdmatch bench --local`: a private Redis (one redis-server, or with
 * `redisCluster` a 3-primary Redis Cluster) and one or more node processes
 * (`node dist/cli/main.js serve`) on free loopback ports, all stopped at the
 * end. Several nodes on the same Redis form a cluster through Redis
 * membership; `startLocal` returns once it has settled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { ownerOf } from '../../cluster/rendezvous';
import { NODE_RUNTIME_FLAGS } from '../../node/runtime-flags';
import {
  findFreePort, startEmbeddedRedis, startRedisCluster, type EmbeddedRedis, type RedisCluster,
} from '../../store/embedded-redis';

export interface LocalNode {
  node: ChildProcess;
  nodeId: string;
  apiAddress: string;
  metricsAddress: string;
  stop(): Promise<void>;
}

export interface LocalEnv {
  /** The redis-server (undefined with a Redis Cluster). */
  redis?: EmbeddedRedis;
  redisCluster?: RedisCluster;
  /** The first node (the only one by default). */
  node: ChildProcess;
  nodes: LocalNode[];
  apiAddress: string;
  metricsAddress: string;
  /** `redis://` URL of the redis-server; '' with a Redis Cluster (see `redisPrimaries`). */
  redisUrl: string;
  /** host:port of every Redis Cluster primary; empty with one redis-server. */
  redisPrimaries: string[];
  keyPrefix: string;
  stop(): Promise<void>;
}

/** Where a node's Redis is: a single server's URL, or Redis Cluster seeds. */
export type RedisTarget = string | { clusterNodes: readonly string[] };

export interface LocalOptions {
  /** Write a V8 CPU profile of every node process into this directory. */
  cpuProfDir?: string;
  /** Extra `--section.key=value` flags for the node. */
  nodeFlags?: string[];
  /** An existing Redis to use instead of a private one. */
  redisUrl?: string;
  /** Node processes to start. @default 1 */
  nodes?: number;
  /** A 3-primary Redis Cluster instead of one redis-server. */
  redisCluster?: boolean;
  /** Setup progress lines ("starting 3 nodes…"). */
  onStatus?: (line: string) => void;
  /** Where a node's ports come from (a test seam); a free loopback port each by default. */
  pickPort?: () => Promise<number>;
}

/** /readyz: /healthz answers as soon as the metrics port is bound, before the node has joined. */
function ready(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(`http://${address}/readyz`, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// One 'exit' listener for all nodes (one each adds up with the bench children to MaxListenersExceededWarning).
const liveNodes = new Set<ChildProcess>();
let exitHook = false;
function killOnExit(node: ChildProcess): void {
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const n of liveNodes) n.kill('SIGKILL');
    });
  }
  liveNodes.add(node);
  node.once('exit', () => liveNodes.delete(node));
}

/** How often a node whose free ports were taken before it bound them starts again on others. */
const PORT_CLASH_ATTEMPTS = 3;

/**
 * Starts a node process against `redis`; resolves once /readyz answers 200. Its
 * four ports were free a moment before it binds them; another process may take
 * one meanwhile (an outgoing connection's local port, a neighbour's listener),
 * and the node then exits with "address already in use": it starts again on
 * other ports.
 */
export async function startNodeProcess(redis: RedisTarget, keyPrefix: string, opts: LocalOptions = {}): Promise<LocalNode> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNodeOnce(redis, keyPrefix, opts);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= PORT_CLASH_ATTEMPTS) throw err;
    }
  }
}

class PortTakenError extends Error {}

async function startNodeOnce(redis: RedisTarget, keyPrefix: string, opts: LocalOptions): Promise<LocalNode> {
  const pick = opts.pickPort ?? findFreePort;
  const ports: number[] = [];
  while (ports.length < 4) {
    const p = await pick();
    if (!ports.includes(p)) ports.push(p);
  }
  const [api, httpPort, internal, metrics] = ports as [number, number, number, number];
  const main = path.join(__dirname, '..', 'main.js');
  // The node runs as deployed (runtime-flags.ts), profiled when asked.
  const execArgv = [...NODE_RUNTIME_FLAGS, ...(opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [])];
  const nodeId = `bench-${process.pid}-${api}`;
  const args = [
    ...execArgv, main, 'serve',
    typeof redis === 'string' ? `--redis.url=${redis}` : `--redis.clusterNodes=${redis.clusterNodes.join(',')}`,
    `--redis.keyPrefix=${keyPrefix}`,
    `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`,
    `--internal.listen=127.0.0.1:${internal}`, `--metrics.listen=127.0.0.1:${metrics}`,
    `--cluster.nodeId=${nodeId}`, '--log.level=warn', '--drain.timeout=2s', '--auth.enabled=false',
    ...(opts.nodeFlags ?? []),
  ];
  const node = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const keep = (c: Buffer) => {
    out.push(c.toString('utf8'));
    if (out.length > 50) out.shift();
  };
  node.stdout!.on('data', keep);
  node.stderr!.on('data', keep);
  // 'close': the process has exited and its output has been read to the end.
  const exited = new Promise<void>((r) => node.once('close', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  killOnExit(node);
  const metricsAddress = `127.0.0.1:${metrics}`;
  const deadline = Date.now() + 30_000;
  while (!(await ready(metricsAddress))) {
    if (gone) {
      const said = out.join('');
      if (/address already in use/i.test(said)) throw new PortTakenError(`a port of the node was taken before it bound it: ${said.slice(-500)}`);
      throw new Error(`node exited before it was ready: ${said.slice(-2000)}`);
    }
    if (Date.now() > deadline) {
      node.kill('SIGKILL');
      throw new Error(`node was not ready within 30s: ${out.join('').slice(-2000)}`);
    }
    await sleep(50);
  }
  return {
    node,
    nodeId,
    apiAddress: `127.0.0.1:${api}`,
    metricsAddress,
    async stop() {
      if (gone) return;
      node.kill('SIGTERM');
      const t = setTimeout(() => node.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * Resolves once every node sees all of `nodes` as live members and every
 * partition's lease is held by the node rendezvous hashing assigns it to,
 * and that has held for `stableMs` (partitions moved by a join are then
 * loaded, not in flight). A partition merely leased is not enough: the first
 * node up leases all of them and hands them over as the others join.
 */
export async function waitClusterSettled(nodes: readonly LocalNode[], opts: { timeoutMs?: number; stableMs?: number } = {}): Promise<number> {
  const { Client } = await import('../../sdk/client');
  const clients = nodes.map((n) => new Client({ address: n.apiAddress }));
  const ids = nodes.map((n) => n.nodeId);
  const want = [...ids].sort().join(',');
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const stableMs = opts.stableMs ?? 1000;
  const deadline = Date.now() + timeoutMs;
  let settledSince: number | undefined;
  let last = 'no answer yet';
  try {
    for (;;) {
      let ok = true;
      let partitions = 0;
      try {
        const infos = await Promise.all(clients.map((c) => c.describeCluster({ timeoutMs: 3000 })));
        for (const [i, info] of infos.entries()) {
          partitions = info.partitions;
          const live = info.nodes.map((n) => n.nodeId).sort().join(',');
          const misplaced = info.partitionOwners.filter((p) => p.owner !== ownerOf(p.partition, ids)).length;
          if (live !== want || misplaced > 0) {
            ok = false;
            last = `node ${i + 1} sees ${info.nodes.length}/${ids.length} nodes, ${misplaced}/${info.partitions} partitions not yet with their owner`;
            break;
          }
        }
      } catch (err) {
        ok = false;
        last = (err as Error).message;
      }
      if (!ok) settledSince = undefined;
      else if (settledSince === undefined) settledSince = Date.now();
      else if (Date.now() - settledSince >= stableMs) return partitions;
      if (Date.now() > deadline) throw new Error(`the cluster of ${ids.length} nodes did not settle within ${timeoutMs / 1000}s: ${last}`);
      await sleep(200);
    }
  } finally {
    for (const c of clients) c.close();
  }
}

export async function startLocal(opts: LocalOptions = {}): Promise<LocalEnv> {
  const say = opts.onStatus ?? (() => undefined);
  const count = opts.nodes ?? 1;
  const keyPrefix = 'zdb';
  let redis: EmbeddedRedis | undefined;
  let redisCluster: RedisCluster | undefined;
  if (opts.redisCluster) {
    say('starting a Redis Cluster of 3 primaries…');
    redisCluster = await startRedisCluster({ masters: 3 });
  } else {
    if (count > 1) say('starting redis-server…');
    redis = await startEmbeddedRedis();
  }
  const stopRedis = async () => {
    await redis?.stop();
    await redisCluster?.stop();
  };
  const target: RedisTarget = redisCluster ? { clusterNodes: redisCluster.seeds } : redis!.url;
  const nodes: LocalNode[] = [];
  try {
    if (count > 1 || redisCluster) say(`starting ${count} node${count > 1 ? 's' : ''}…`);
    const started = await Promise.allSettled(Array.from({ length: count }, () => startNodeProcess(target, keyPrefix, opts)));
    for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    if (count > 1) {
      say(`waiting for the ${count} nodes to settle (every partition leased by its owner)…`);
      const t0 = Date.now();
      const partitions = await waitClusterSettled(nodes);
      say(`cluster settled: ${partitions} partitions over ${count} nodes in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    const first = nodes[0]!;
    return {
      redis, redisCluster, node: first.node, nodes, apiAddress: first.apiAddress, metricsAddress: first.metricsAddress,
      redisUrl: redis?.url ?? '', redisPrimaries: redisCluster ? [...redisCluster.seeds] : [], keyPrefix,
      async stop() {
        await Promise.all(nodes.map((n) => n.stop()));
        await stopRedis();
      },
    };
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    await stopRedis();
    throw err;
  }
}
