/**
 * Two node processes behind a real HTTP/2 load balancer (nginx, HAProxy) that
 * a test runs from deploy/: workers and the producer connect only through it,
 * one node is drained with SIGTERM mid-run, every acknowledged Step gets
 * exactly one COMPLETED outcome, and the workers end up on the node that
 * remains.
 *
 *   const nodes = await startBalancedNodes(redis.url, 'ng');
 *   const lb = spawnBalancer(bin, args);     // listening on 127.0.0.1:port
 *   await drainThroughBalancer({ label: 'nginx', lb: `127.0.0.1:${port}`, nodes, lbLog: lb.log });
 *   // afterAll: await stopBalancedRun(lb, nodes)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Worker, type StepContext } from '../../src';
import { CLI_MAIN, startNodeProcess, type NodeProcess } from './node-process';
import { freePort } from './ports';
import { uniquePrefix } from './redis';
import { run } from './tools';
import { sleep, waitFor } from './wait';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** dexzd_gateway_streams summed over its labels: the worker slot streams a node holds. */
export function streamsOn(node: NodeProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(`http://${node.metricsAddress}/metrics`, { timeout: 2000 }, (res) => {
      let s = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (s += c));
      res.on('end', () => {
        let n = 0;
        for (const m of s.matchAll(/^dexzd_gateway_streams(?:\{[^}]*\})? (\S+)$/gm)) n += Number(m[1]);
        resolve(n);
      });
    }).on('error', reject);
  });
}

/** Two node processes on one key prefix, ids `${id}0` and `${id}1`, with short cluster timings and a 5 s drain. */
export async function startBalancedNodes(redisUrl: string, id: string): Promise<[NodeProcess, NodeProcess]> {
  const keyPrefix = uniquePrefix(id);
  const nodes: NodeProcess[] = [];
  for (const i of [0, 1]) {
    nodes.push(await startNodeProcess({
      redisUrl, keyPrefix, nodeId: `${id}${i}`,
      config: {
        cluster: { partitions: 8, heartbeat: '200ms', nodeTtl: '1500ms', leaseTtl: '1500ms' },
        matching: { syncMatchWait: '50ms', stickyWait: '200ms' },
        drain: { timeout: '5s' },
        log: { level: 'warn' },
      },
    }));
  }
  return nodes as [NodeProcess, NodeProcess];
}

export interface BalancerProcess {
  readonly child: ChildProcess;
  /** Everything the balancer wrote to stderr and stdout so far. */
  log(): string;
}

/** Starts the balancer in the foreground, keeping its output. */
export function spawnBalancer(bin: string, args: string[]): BalancerProcess {
  let out = '';
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return { child, log: () => out };
}

/**
 * A test file's balanced run: start() brings up the two nodes (startBalancedNodes), a temp
 * dir for the balancer's files and a free port for it to listen on; spawn() starts the
 * balancer. After all: the balancer stopped, the nodes killed, the dir removed.
 */
export function useBalancedRun(redisUrl: () => string, id: string) {
  let lb: BalancerProcess | undefined;
  let dir: string | undefined;
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    await stopBalancedRun(lb, nodes);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    async start(): Promise<{ nodes: [NodeProcess, NodeProcess]; dir: string; port: number }> {
      const pair = await startBalancedNodes(redisUrl(), id);
      nodes.push(...pair);
      dir = fs.mkdtempSync(path.join(os.tmpdir(), `zd-${id}-`));
      return { nodes: pair, dir, port: await freePort() };
    },
    spawn(bin: string, args: string[]): BalancerProcess {
      lb = spawnBalancer(bin, args);
      return lb;
    },
  };
}

/** SIGTERM to the balancer (SIGKILL after 5 s), SIGKILL to the nodes. */
async function stopBalancedRun(lb: BalancerProcess | undefined, nodes: NodeProcess[]): Promise<void> {
  const child = lb?.child;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
}

export interface DrainThroughBalancerOptions {
  /** The balancer's name, in descriptions and the summary line. */
  label: string;
  /** host:port the workers and the producer connect to. */
  lb: string;
  nodes: [NodeProcess, NodeProcess];
  lbLog: () => string;
  /** Runs once the workers are registered, before any Step is enqueued. */
  beforeLoad?: (client: Client) => Promise<void>;
  /**
   * Steps that start from 300 ms before the SIGTERM take this long, so the
   * drained node stays draining (its /readyz 503) while busy slots finish.
   */
  busyAtDrainMs?: number;
  /** Runs alongside the drain, from the SIGTERM until the node has exited. */
  whileDraining?: (node: NodeProcess) => Promise<void>;
}

export async function drainThroughBalancer(opts: DrainThroughBalancerOptions): Promise<void> {
  const { label, lb, nodes, lbLog } = opts;
  const runs = new Map<string, number>();
  let slow = false;
  const handler = async (ctx: StepContext) => {
    const key = `${ctx.taskId}#${ctx.attempt}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
    await sleep(slow ? opts.busyAtDrainMs ?? 5 : 5);
    return 'ok';
  };
  const SLOTS = 4;
  const workers = [0, 1].map((i) => new Worker({
    address: lb, tenant: 'acme', appWorkerId: `${label}-w${i}`, flowTypes: { order: { steps: { work: handler } } },
    maxConcurrentTasks: SLOTS, reservedRpcTasks: 0, logger: quiet, reconnectBackoff: { initialMs: 50, maxMs: 300 },
  }));
  const running = workers.map((w) => w.start().catch(() => undefined));
  const client = new Client({ address: lb, defaultTimeoutMs: 3000 });
  try {
    await Promise.all(workers.map((w) => w.waitPullRegistered(AbortSignal.timeout(15_000)))).catch((err: Error) => {
      throw new Error(`workers not registered through ${label} within 15 s (${err.message}):\n${lbLog()}`);
    });
    // The balancer balances per stream: both nodes hold some of the slots.
    await waitFor(async () => (await streamsOn(nodes[0])) > 0 && (await streamsOn(nodes[1])) > 0, {
      timeoutMs: 15_000, intervalMs: 100, description: `streams on both nodes ${lbLog()}`,
    });
    if (opts.beforeLoad) await opts.beforeLoad(client);

    const acknowledged = new Set<string>();
    let stopLoad = false;
    let seq = 0;
    const load = (async () => {
      while (!stopLoad) {
        const batch = Array.from({ length: 10 }, () => ({ tenant: 'acme', flowId: `${label}-${seq++}`, flowType: 'order', stepType: 'work', stepExecutionId: 's' }));
        for (let attempt = 0; attempt < 5; attempt++) {
          const ok = await client.enqueueSteps(batch).then((rs) => {
            for (const r of rs) acknowledged.add(r.taskId);
            return true;
          }, () => false);
          if (ok) break; // the same batch again is idempotent (same flow and step execution ids)
          await sleep(100);
        }
        await sleep(50);
      }
    })();

    await sleep(1200);
    if (opts.busyAtDrainMs) slow = true;
    await sleep(300);
    const drained = nodes[0].stop(20_000); // SIGTERM: drain, exit 0
    const beside = opts.whileDraining?.(nodes[0]);
    expect(await drained).toBe(0);
    await beside;
    slow = false;
    await sleep(1500);
    stopLoad = true;
    await load;
    expect(acknowledged.size).toBeGreaterThan(50);

    // Every worker slot is now on the remaining node.
    await waitFor(async () => (await streamsOn(nodes[1])) === SLOTS * workers.length, {
      timeoutMs: 20_000, intervalMs: 200, description: `all ${SLOTS * workers.length} streams on ${nodes[1].nodeId}`,
    });

    const outcomes = new Map<string, string>();
    let ack: string[] = [];
    const deadline = Date.now() + 45_000;
    while ([...acknowledged].some((id) => !outcomes.has(id)) && Date.now() < deadline) {
      const got = await client.consumeOutcomes({ group: 'engine', consumer: 'c', maxCount: 1000, waitMs: 1000, ack }).catch(() => []);
      ack = got.map((o) => o.outcomeId);
      for (const o of got) {
        expect(outcomes.has(o.taskId)).toBe(false); // exactly one outcome per task
        outcomes.set(o.taskId, o.status);
      }
    }
    if (ack.length) await client.consumeOutcomes({ group: 'engine', consumer: 'c', maxCount: 1, waitMs: 0, ack }).catch(() => []);
    const notCompleted = [...acknowledged].filter((id) => outcomes.get(id) !== 'COMPLETED');
    if (notCompleted.length) {
      // Say where the stragglers are (queued, running, ended without an outcome seen …).
      const states = notCompleted.slice(0, 5).map((id) =>
        run(process.execPath, [CLI_MAIN, 'task', id, '--json', '--address', nodes[1].apiAddress], { timeoutMs: 10_000 }));
      throw new Error(`${notCompleted.length} of ${acknowledged.size} acknowledged Steps have no COMPLETED outcome ` +
        `(outcome seen: ${notCompleted.map((id) => outcomes.get(id) ?? 'none').join(', ')}); first ones:\n` +
        states.map((r) => (r.stdout || r.stderr).trim()).join('\n'));
    }
    const reruns = [...runs.values()].filter((n) => n > 1).length;
    console.log(`${label} drain: ${acknowledged.size} Steps through ${label}, all COMPLETED once; ${reruns} attempt(s) ran twice`);
  } finally {
    client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(running);
  }
}
