/**
 * A zdmatch node as a real child process: `node dist/cli/main.js serve
 * --config <yaml>` with every listener on a free 127.0.0.1 port. For cluster
 * tests that kill nodes for real. Needs `npm run build` (npm test does it).
 *
 *   const node = await startNodeProcess({ redisUrl: redis.url, keyPrefix: uniquePrefix() });
 *   ... node.apiAddress ...
 *   await node.kill('SIGKILL');   // or: await node.stop()  (SIGTERM → drain)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { NODE_RUNTIME_FLAGS } from '../../src/node/runtime-flags';
import { freePorts } from './ports';
import { waitFor } from './wait';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const CLI_MAIN = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');

export type ConfigTree = { [key: string]: unknown };

export interface NodeProcessOptions {
  /** redis.url (or pass redis.clusterNodes in `config`). */
  redisUrl?: string;
  /** redis.keyPrefix; use uniquePrefix(). */
  keyPrefix?: string;
  /** cluster.nodeId. @default a unique `node-<n>` */
  nodeId?: string;
  /** More config, merged over the generated one (nested: `{ matching: { stickyWait: '1s' } }`). */
  config?: ConfigTree;
  /** Extra `--section.key=value` flags. */
  args?: string[];
  /** Extra environment. */
  env?: NodeJS.ProcessEnv;
  /** @default 30000 */
  readyTimeoutMs?: number;
  /** Also copy the node's output to this process's stderr (debugging). @default ZD_TEST_NODE_LOGS=1 */
  echo?: boolean;
}

export interface NodeProcess {
  readonly nodeId: string;
  readonly apiAddress: string;
  readonly httpAddress: string;
  readonly internalAddress: string;
  readonly metricsAddress: string;
  readonly configFile: string;
  readonly process: ChildProcess;
  /** Everything the node wrote so far (stdout and stderr, in order). */
  logs(): string;
  /** Log lines parsed as JSON (pino); other lines are skipped. */
  jsonLogs(): Record<string, unknown>[];
  /** Sends `signal` (default SIGKILL) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
  /** SIGTERM (graceful drain), SIGKILL after `timeoutMs` (default 45000); resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | NodeJS.Signals | null>;
  /** Resolves once the process has exited. */
  exited(): Promise<number | NodeJS.Signals | null>;
}

const children = new Set<ChildProcess>();
let hookInstalled = false;
let seq = 0;

function installExitHook(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  process.on('exit', () => {
    for (const c of children) {
      try {
        c.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
  });
}

function deepMerge(base: ConfigTree, extra: ConfigTree): ConfigTree {
  const out: ConfigTree = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    const cur = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && cur && typeof cur === 'object' && !Array.isArray(cur)
        ? deepMerge(cur as ConfigTree, v as ConfigTree)
        : v;
  }
  return out;
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', reject);
  });
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.setTimeout(1000, () => {
      s.destroy();
      resolve(false);
    });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Starts a node process and resolves once it is ready (GET /readyz = 200 on the metrics port: it joined and runs). */
export async function startNodeProcess(opts: NodeProcessOptions = {}): Promise<NodeProcess> {
  if (!fs.existsSync(CLI_MAIN)) throw new Error(`${path.relative(REPO_ROOT, CLI_MAIN)} is missing: run npm run build first`);
  const [api, httpPort, internal, metrics] = (await freePorts(4)) as [number, number, number, number];
  seq += 1;
  const nodeId = opts.nodeId ?? `node-${process.env.JEST_WORKER_ID ?? '0'}-${process.pid}-${seq}`;
  let config: ConfigTree = {
    api: { listen: `127.0.0.1:${api}` },
    http: { listen: `127.0.0.1:${httpPort}` },
    internal: { listen: `127.0.0.1:${internal}`, advertise: `127.0.0.1:${internal}` },
    metrics: { listen: `127.0.0.1:${metrics}` },
    cluster: { nodeId },
    log: { level: 'info' },
    // Auth is on unless configured off explicitly (docs/security.md); tests that need it pass `config.auth`.
    auth: { enabled: false },
  };
  const redis: ConfigTree = {};
  if (opts.redisUrl) redis.url = opts.redisUrl;
  if (opts.keyPrefix) redis.keyPrefix = opts.keyPrefix;
  if (Object.keys(redis).length) config.redis = redis;
  if (opts.config) config = deepMerge(config, opts.config);
  // The addresses as configured: `config` may set listeners of its own (a restart on the same ports).
  const listenOf = (section: string) => String((config[section] as ConfigTree).listen);
  const apiAddress = listenOf('api');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-node-'));
  const configFile = path.join(dir, 'config.yaml');
  fs.writeFileSync(configFile, YAML.stringify(config));

  // Run as deployed: the node's own Node.js flags (src/node/runtime-flags.ts).
  const child = spawn(process.execPath, [...NODE_RUNTIME_FLAGS, CLI_MAIN, 'serve', '--config', configFile, ...(opts.args ?? [])], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  installExitHook();
  children.add(child);

  const chunks: string[] = [];
  const echo = opts.echo ?? process.env.ZD_TEST_NODE_LOGS === '1';
  const collect = (chunk: Buffer) => {
    const s = chunk.toString('utf8');
    chunks.push(s);
    if (echo) process.stderr.write(`[${nodeId}] ${s}`);
  };
  const stderrChunks: string[] = [];
  child.stdout!.on('data', collect);
  child.stderr!.on('data', (chunk: Buffer) => {
    collect(chunk);
    stderrChunks.push(chunk.toString('utf8'));
  });
  // 'exit' can come before the last of the pipes is read, 'close' once both are at their end.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let exitValue: number | NodeJS.Signals | null | undefined;
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      exitValue = code ?? signal;
      fs.rmSync(dir, { recursive: true, force: true });
      resolve(exitValue);
    });
  });
  const logs = () => chunks.join('');

  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (exitValue === undefined) child.kill(signal);
    return exited;
  };

  const metricsAddress = listenOf('metrics');
  const stopWaiting = new AbortController();
  // A failed start ends with the CLI's one line on stderr, but stdout's log lines (one per
  // partition unloaded, say) are read in whatever order the two pipes come: its tail is
  // given apart, so the output's tail cannot push it out.
  void exited
    .then(() => Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]))
    .then(() => stopWaiting.abort(new Error(`node ${nodeId} exited (${String(exitValue)}) before it was ready:\n${logs().slice(-4000)}`
      + `\nstderr:\n${stderrChunks.join('').slice(-2000)}`)));
  try {
    await waitFor(
      async () => {
        // /healthz answers from the moment the metrics port is bound, before the node joins.
        const status = await httpStatus(`http://${metricsAddress}/readyz`).catch(() => 0);
        if (status === 200) return true;
        // A node without /readyz yet: an accepting gRPC port is the next best signal.
        return status === 404 && (await tcpOpen(Number(apiAddress.slice(apiAddress.lastIndexOf(':') + 1))));
      },
      { timeoutMs: opts.readyTimeoutMs ?? 30000, intervalMs: 50, description: `node ${nodeId} ready`, signal: stopWaiting.signal },
    );
  } catch (err) {
    await kill('SIGKILL');
    if (stopWaiting.signal.aborted) throw err;
    throw new Error(`${(err as Error).message}\n${logs().slice(-4000)}`);
  }

  return {
    nodeId,
    apiAddress,
    httpAddress: listenOf('http'),
    internalAddress: listenOf('internal'),
    metricsAddress,
    configFile,
    process: child,
    logs,
    jsonLogs: () =>
      logs()
        .split('\n')
        .flatMap((l) => {
          if (!l.startsWith('{')) return [];
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    kill,
    async stop(timeoutMs = 45000) {
      if (exitValue !== undefined) return exitValue;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    exited: () => exited,
  };
}
