/**
 * Two nodes behind a real nginx running deploy/nginx/zdmatch.conf (HTTP/2,
 * grpc_pass) on loopback. Workers and the producer connect only through
 * nginx; one node is drained with SIGTERM mid-run. Every acknowledged Step
 * gets exactly one COMPLETED outcome, and the workers end up on the node that
 * remains.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Worker, type StepContext } from '../../src';
import { CLI_MAIN, REPO_ROOT, startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { requireCommand, run, runOk } from '../helpers/tools';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** deploy/nginx/zdmatch.conf with its upstream servers and listen port pointed at the test's. */
function nginxConfig(prefix: string, listenPort: number, upstreams: string[]): string {
  const shipped = fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'nginx', 'zdmatch.conf'), 'utf8');
  const lines = shipped.split('\n');
  const firstUpstream = lines.findIndex((l) => l.includes('# zdmatch upstream'));
  expect(firstUpstream).toBeGreaterThan(0);
  const template = lines[firstUpstream]!;
  const body = lines
    .flatMap((l, i) => {
      if (!l.includes('# zdmatch upstream')) return [l];
      return i === firstUpstream ? upstreams.map((u) => template.replace(/server \S+/, `server ${u}`)) : [];
    })
    .map((l) => (l.includes('# zdmatch listen') ? l.replace(/listen \d+/, `listen 127.0.0.1:${listenPort}`) : l))
    .join('\n');
  fs.writeFileSync(path.join(prefix, 'zdmatch.conf'), body);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${prefix}/${t};`).join('\n');
  return [
    'daemon off;', 'worker_processes 1;', `pid ${prefix}/nginx.pid;`, `error_log ${prefix}/error.log warn;`,
    process.getuid?.() === 0 ? 'user root;' : '',
    'events { worker_connections 4096; }',
    'http {', '  access_log off;', temp, `  include ${prefix}/zdmatch.conf;`, '}', '',
  ].join('\n');
}

function streamsOn(node: NodeProcess): Promise<number> {
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

let nginx: ChildProcess | undefined;
let prefix: string | undefined;
const nodes: NodeProcess[] = [];

afterAll(async () => {
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((r) => nginx!.once('exit', r));
    nginx.kill('SIGTERM');
    const t = setTimeout(() => nginx!.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
  if (prefix) fs.rmSync(prefix, { recursive: true, force: true });
});

it('loses nothing when a node behind nginx drains mid-run, and workers move to the other node', async () => {
  const nginxBin = requireCommand('nginx', 'nginx-full');
  const keyPrefix = uniquePrefix('nginx');
  for (const i of [0, 1]) {
    nodes.push(await startNodeProcess({
      redisUrl: redis.url, keyPrefix, nodeId: `ng${i}`,
      config: {
        cluster: { partitions: 8, heartbeat: '200ms', nodeTtl: '1500ms', leaseTtl: '1500ms' },
        matching: { syncMatchWait: '50ms', stickyWait: '200ms' },
        drain: { timeout: '5s' },
        log: { level: 'warn' },
      },
    }));
  }

  prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-nginx-'));
  const port = await freePort();
  fs.writeFileSync(path.join(prefix, 'nginx.conf'), nginxConfig(prefix, port, nodes.map((n) => n.apiAddress)));
  runOk(nginxBin, ['-t', '-p', prefix, '-c', path.join(prefix, 'nginx.conf')]);
  let nginxLog = '';
  nginx = spawn(nginxBin, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  nginx.stderr!.on('data', (c: Buffer) => (nginxLog += c.toString()));
  const lb = `127.0.0.1:${port}`;

  const runs = new Map<string, number>();
  const handler = async (ctx: StepContext) => {
    const key = `${ctx.taskId}#${ctx.attempt}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
    await sleep(5);
    return 'ok';
  };
  const SLOTS = 4;
  const workers = [0, 1].map((i) => new Worker({
    address: lb, tenant: 'acme', appWorkerId: `nw${i}`, flowTypes: { order: { steps: { work: handler } } },
    maxConcurrentTasks: SLOTS, reservedRpcTasks: 0, logger: quiet, reconnectBackoff: { initialMs: 50, maxMs: 300 },
  }));
  const running = workers.map((w) => w.start().catch(() => undefined));
  const client = new Client({ address: lb, defaultTimeoutMs: 3000 });
  try {
    await waitFor(() => Promise.all(workers.map((w) => w.waitPullRegistered())).then(() => true), {
      timeoutMs: 20_000, description: `workers registered through nginx ${nginxLog}`,
    });
    // nginx balances per stream: both nodes hold some of the slots.
    await waitFor(async () => (await streamsOn(nodes[0]!)) > 0 && (await streamsOn(nodes[1]!)) > 0, {
      timeoutMs: 15_000, intervalMs: 100, description: 'streams on both nodes',
    });

    const acknowledged = new Set<string>();
    let stopLoad = false;
    let seq = 0;
    const load = (async () => {
      while (!stopLoad) {
        const batch = Array.from({ length: 10 }, () => ({ tenant: 'acme', flowId: `ng-${seq++}`, flowType: 'order', stepType: 'work', stepExecutionId: 's' }));
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

    await sleep(1500);
    expect(await nodes[0]!.stop(20_000)).toBe(0); // SIGTERM: drain, exit 0
    await sleep(1500);
    stopLoad = true;
    await load;
    expect(acknowledged.size).toBeGreaterThan(50);

    // Every worker slot is now on the remaining node.
    await waitFor(async () => (await streamsOn(nodes[1]!)) === SLOTS * workers.length, {
      timeoutMs: 20_000, intervalMs: 200, description: `all ${SLOTS * workers.length} streams on ${nodes[1]!.nodeId}`,
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
        run(process.execPath, [CLI_MAIN, 'task', id, '--json', '--address', nodes[1]!.apiAddress], { timeoutMs: 10_000 }));
      throw new Error(`${notCompleted.length} of ${acknowledged.size} acknowledged Steps have no COMPLETED outcome ` +
        `(outcome seen: ${notCompleted.map((id) => outcomes.get(id) ?? 'none').join(', ')}); first ones:\n` +
        states.map((r) => (r.stdout || r.stderr).trim()).join('\n'));
    }
    const reruns = [...runs.values()].filter((n) => n > 1).length;
    console.log(`nginx drain: ${acknowledged.size} Steps through nginx, all COMPLETED once; ${reruns} attempt(s) ran twice`);
  } finally {
    client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(running);
  }
}, 120_000);
