/**
 * A private `redis-server` child process, for `zdmatch dev` and for tests.
 *
 * Contract:
 * - `startEmbeddedRedis()` spawns `redis-server` from PATH on 127.0.0.1 with
 *   its own data dir, and resolves once it answers PING. Persistence is off
 *   (`--save '' --appendonly no`) unless `args` turn it on (later args win,
 *   e.g. `['--appendonly', 'yes']`).
 * - Without a `port`, a free port is picked by binding port 0; if another
 *   process takes it before redis-server binds it, the start is retried on a
 *   new port. An explicit `port` is never changed.
 * - `stop()` sends SIGTERM, waits for the exit (SIGKILL after `stopTimeoutMs`)
 *   and removes the data dir when this module created it; a `dataDir` passed
 *   in is kept, so a test can restart a server over the same files. `stop()`
 *   is idempotent.
 * - When this process exits, every embedded server still running is killed;
 *   when it dies without a chance to (SIGKILL, OOM), a watchdog that reads
 *   EOF on a pipe from it stops the server and removes its temp data dir.
 * - The server runs in a process group of its own: Ctrl-C in a terminal
 *   signals the whole foreground group, and the server must outlive the
 *   node's drain into it.
 * - `startRedisCluster()` starts `masters` servers with `--cluster-enabled
 *   yes`, joins them with `redis-cli --cluster create`, and resolves once every
 *   node reports `cluster_state:ok`.
 *
 * It needs no Redis client library: readiness and the few commands used here
 * go over a raw socket (`sendCommand`).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const REDIS_NOT_FOUND_MESSAGE = 'redis-server not found on PATH; install it with: apt-get install -y redis-server';

/** Thrown when `redis-server` (or `redis-cli` for a cluster) is not on PATH; `message` is one line. */
export class RedisNotFoundError extends Error {
  constructor(binary = 'redis-server') {
    super(binary === 'redis-server' ? REDIS_NOT_FOUND_MESSAGE : `${binary} not found on PATH; install it with: apt-get install -y redis-server`);
    this.name = 'RedisNotFoundError';
  }
}

export interface EmbeddedRedisOptions {
  /** Data dir (kept on stop). Default: a fresh dir under the OS temp dir, removed on stop. */
  dataDir?: string;
  /** Port on 127.0.0.1. Default: a free port. */
  port?: number;
  /** Extra `redis-server` arguments, after the defaults (so they override them). */
  args?: string[];
  /** How long to wait for PING to answer. @default 15000 */
  startTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL. @default 10000 */
  stopTimeoutMs?: number;
  /**
   * Also serve TLS on a second free port (`tlsPort`, `tlsUrl`), with these PEM
   * files; clients need no certificate of their own. The plain port stays open.
   */
  tls?: EmbeddedRedisTls;
}

export interface EmbeddedRedisTls {
  certFile: string;
  keyFile: string;
  caFile: string;
}

export interface EmbeddedRedis {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** With `tls`: the TLS port, and `rediss://127.0.0.1:<tlsPort>`. */
  readonly tlsPort?: number;
  readonly tlsUrl?: string;
  readonly dataDir: string;
  readonly process: ChildProcess;
  /** The last lines redis-server wrote (for error messages). */
  output(): string;
  /** SIGTERM, wait for the exit, remove the temp data dir. Idempotent. */
  stop(): Promise<void>;
  /** Sends a signal and does not wait (crash tests). */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited(): Promise<number | NodeJS.Signals | null>;
}

const HOST = '127.0.0.1';
const live = new Set<ChildProcess>();
const watchdogs = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous: the only thing possible in 'exit'. Leaves no orphans behind a crashed test run.
  process.on('exit', () => {
    // Watchdogs first: one that outlived its server could signal a reused pid.
    for (const child of [...watchdogs, ...live]) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

/**
 * A shell that waits for EOF on its stdin, a pipe only this process holds:
 * EOF means this process is gone however it died. It then stops the server
 * (SIGTERM, so a server with persistence on still saves) and removes `dir`
 * once the server has exited (bounded: an unreaped zombie still answers kill -0).
 * Neither the shell nor its pipe keeps this process alive.
 */
function startWatchdog(pid: number, dir: string | undefined): ChildProcess | undefined {
  const script = 'read _; kill -TERM "$1" 2>/dev/null || exit 0; [ -n "$2" ] || exit 0; ' +
    'i=0; while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; rm -rf -- "$2"';
  try {
    const dog = spawn('/bin/sh', ['-c', script, 'zdmatch-redis-watchdog', String(pid), dir ?? ''], {
      stdio: ['pipe', 'ignore', 'ignore'], detached: true,
    });
    dog.on('error', () => watchdogs.delete(dog)); // no /bin/sh: the exit hook still covers clean exits
    dog.stdin!.on('error', () => undefined);
    dog.unref();
    (dog.stdin as unknown as { unref?: () => void }).unref?.();
    watchdogs.add(dog);
    return dog;
  } catch {
    return undefined;
  }
}

/** The server exited: its watchdog must not signal a pid that may be reused. */
function stopWatchdog(dog: ChildProcess | undefined): void {
  if (!dog || !watchdogs.delete(dog)) return;
  try {
    dog.kill('SIGKILL');
  } catch {
    /* already gone */
  }
}

/** Absolute path of `name` on PATH (read at call time), or undefined. */
export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** A port that was free on `host` a moment ago (bind port 0, read it, close). */
export function findFreePort(host = HOST): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read a free port'))));
    });
  });
}

/** True when `port` can be bound on `host` right now. */
export function isPortFree(port: number, host = HOST): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export type RespValue = string | number | null | RespValue[] | Error;

/** Encodes a command as a RESP array of bulk strings. */
function encode(args: readonly (string | number)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.from(String(a));
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Parses one RESP reply at `offset`; undefined when the buffer is incomplete. */
function parse(buf: Buffer, offset: number): { value: RespValue; next: number } | undefined {
  const eol = buf.indexOf('\r\n', offset);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[offset]!);
  const line = buf.toString('utf8', offset + 1, eol);
  const after = eol + 2;
  switch (type) {
    case '+':
      return { value: line, next: after };
    case '-':
      return { value: new Error(line), next: after };
    case ':':
      return { value: Number(line), next: after };
    case '$': {
      const len = Number(line);
      if (len < 0) return { value: null, next: after };
      if (buf.length < after + len + 2) return undefined;
      return { value: buf.toString('utf8', after, after + len), next: after + len + 2 };
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return { value: null, next: after };
      const items: RespValue[] = [];
      let pos = after;
      for (let i = 0; i < n; i++) {
        const item = parse(buf, pos);
        if (!item) return undefined;
        items.push(item.value);
        pos = item.next;
      }
      return { value: items, next: pos };
    }
    default:
      throw new Error(`unexpected RESP type ${JSON.stringify(type)}`);
  }
}

/**
 * Sends one command over a fresh socket and resolves with the reply (an
 * error reply resolves to an `Error` value; a socket failure rejects).
 */
export function sendCommand(
  port: number,
  args: readonly (string | number)[],
  opts: { host?: string; timeoutMs?: number } = {},
): Promise<RespValue> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: opts.host ?? HOST, port });
    let buf = Buffer.alloc(0);
    let settled = false;
    const done = (err: Error | undefined, value?: RespValue) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) reject(err);
      else resolve(value ?? null);
    };
    socket.setTimeout(opts.timeoutMs ?? 2000, () => done(new Error(`redis ${args[0]} on port ${port} timed out`)));
    socket.once('error', (err) => done(err));
    socket.once('close', () => done(new Error(`redis connection on port ${port} closed before a reply`)));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        const reply = parse(buf, 0);
        if (reply) done(undefined, reply.value);
      } catch (err) {
        done(err as Error);
      }
    });
    socket.once('connect', () => socket.write(encode(args)));
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Starts a private redis-server; see the module comment. */
export async function startEmbeddedRedis(opts: EmbeddedRedisOptions = {}): Promise<EmbeddedRedis> {
  const bin = findOnPath('redis-server');
  if (!bin) throw new RedisNotFoundError();
  const attempts = opts.port === undefined ? 5 : 1;
  let lastError: Error | undefined;
  for (let i = 0; i < attempts; i++) {
    const port = opts.port ?? (await findFreePort());
    try {
      return await startOnce(bin, port, opts);
    } catch (err) {
      lastError = err as Error;
      if (!(err instanceof PortClashError)) throw err;
    }
  }
  throw lastError ?? new Error('redis-server did not start');
}

class PortClashError extends Error {}

async function startOnce(bin: string, port: number, opts: EmbeddedRedisOptions): Promise<EmbeddedRedis> {
  const ownsDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-redis-'));
  fs.mkdirSync(dataDir, { recursive: true });
  const tlsPort = opts.tls ? await findFreePort() : undefined;
  const tlsArgs = opts.tls ? [
    '--tls-port', String(tlsPort), '--tls-cert-file', opts.tls.certFile, '--tls-key-file', opts.tls.keyFile,
    '--tls-ca-cert-file', opts.tls.caFile, '--tls-auth-clients', 'no',
  ] : [];
  const args = [
    '--port', String(port),
    '--bind', HOST,
    '--dir', dataDir,
    '--save', '',
    '--appendonly', 'no',
    '--daemonize', 'no',
    '--protected-mode', 'no',
    '--logfile', '',
    ...tlsArgs,
    ...(opts.args ?? []),
  ];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dataDir, detached: true });
  installExitHook();
  live.add(child);
  const watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid, ownsDir ? dataDir : undefined);

  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(l);
    if (lines.length > 60) lines.splice(0, lines.length - 60);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);

  let exitValue: number | NodeJS.Signals | null | undefined;
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      stopWatchdog(watchdog);
      exitValue = code ?? signal;
      resolve(exitValue);
    });
    child.once('error', () => {
      live.delete(child);
      stopWatchdog(watchdog);
      exitValue = exitValue ?? null;
      resolve(null);
    });
  });
  const removeDir = () => {
    if (ownsDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };

  // Wait for PING, or for an early exit (a port clash, a bad argument).
  const deadline = Date.now() + (opts.startTimeoutMs ?? 15000);
  for (;;) {
    if (exitValue !== undefined) {
      removeDir();
      const out = lines.join('\n');
      if (/Address already in use/i.test(out)) throw new PortClashError(`port ${port} is taken`);
      throw new Error(`redis-server exited (${String(exitValue)}) before it was ready: ${lines.slice(-3).join(' | ')}`);
    }
    try {
      // PING alone is not enough: another server may already hold the port
      // (ours then exits with "Address already in use"). Check it is ours.
      const reply = await sendCommand(port, ['PING'], { timeoutMs: 500 });
      if (reply === 'PONG') {
        const info = await sendCommand(port, ['INFO', 'server'], { timeoutMs: 500 });
        const pid = typeof info === 'string' ? /process_id:(\d+)/.exec(info)?.[1] : undefined;
        if (pid !== undefined && Number(pid) === child.pid) break;
      }
      // LOADING (dataset being read) or someone else's server: keep waiting.
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      removeDir();
      throw new Error(`redis-server on port ${port} did not answer PING within ${opts.startTimeoutMs ?? 15000}ms`);
    }
    await sleep(20);
  }

  let stopping: Promise<void> | undefined;
  return {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    ...(tlsPort !== undefined ? { tlsPort, tlsUrl: `rediss://${HOST}:${tlsPort}` } : {}),
    dataDir,
    process: child,
    output: () => lines.join('\n'),
    exited: () => exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (exitValue === undefined) child.kill(signal);
    },
    stop() {
      stopping ??= (async () => {
        if (exitValue === undefined) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), opts.stopTimeoutMs ?? 10000);
          await exited;
          clearTimeout(timer);
        }
        removeDir();
      })();
      return stopping;
    },
  };
}

export interface RedisClusterOptions {
  /** Number of primaries. @default 3 */
  masters?: number;
  /** Extra `redis-server` arguments for every node. */
  args?: string[];
  /** How long to wait for `cluster_state:ok`. @default 30000 */
  readyTimeoutMs?: number;
  /** Indexes of the primaries that get one replica each (in sync before this returns). @default none */
  replicaOf?: number[];
  /** TLS for clients and the cluster bus; clients that dial a TLS port are told the nodes' TLS ports (`tlsSeeds`). */
  tls?: EmbeddedRedisTls;
}

export interface RedisCluster {
  /** The primaries. */
  readonly nodes: readonly EmbeddedRedis[];
  /** The replicas of `replicaOf`, in its order. */
  readonly replicas: readonly EmbeddedRedis[];
  /** `127.0.0.1:<port>` of every node: the seeds for `redis.clusterNodes`. */
  readonly seeds: readonly string[];
  /** With `tls`: `127.0.0.1:<tlsPort>` of every node, the seeds for `redis.clusterNodes` with `redis.tls`. */
  readonly tlsSeeds: readonly string[];
  /** Stops every node (in parallel). Idempotent. */
  stop(): Promise<void>;
}

/** A free port whose cluster bus port (port + 10000) is free and valid too. */
async function findClusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = await findFreePort();
    if (port + 10000 > 65535 || taken.has(port) || taken.has(port + 10000)) continue;
    if (await isPortFree(port + 10000)) return port;
  }
  throw new Error('could not find a free port pair for a cluster node');
}

function runRedisCli(bin: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli ${args.slice(0, 2).join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Starts a Redis Cluster of `masters` primaries (and a replica of each in `replicaOf`); see the module comment. */
export async function startRedisCluster(opts: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = opts.masters ?? 3;
  if (masters < 3) throw new Error('a Redis Cluster needs at least 3 masters');
  if (!findOnPath('redis-server')) throw new RedisNotFoundError();
  const cli = findOnPath('redis-cli');
  if (!cli) throw new RedisNotFoundError('redis-cli');

  const nodes: EmbeddedRedis[] = [];
  const replicas: EmbeddedRedis[] = [];
  const stopAll = async () => {
    await Promise.all([...nodes, ...replicas].map((n) => n.stop()));
  };
  const taken = new Set<number>();
  // Ports are chosen one by one so the bus ports do not collide either.
  const startNode = async (): Promise<EmbeddedRedis> => {
    for (let attempt = 0; ; attempt++) {
      const port = await findClusterPort(taken);
      try {
        const node = await startEmbeddedRedis({
          port,
          ...(opts.tls ? { tls: opts.tls } : {}),
          args: [
            ...(opts.tls ? ['--tls-cluster', 'yes', '--tls-replication', 'yes'] : []),
            '--cluster-enabled', 'yes',
            '--cluster-config-file', 'nodes.conf',
            '--cluster-node-timeout', '5000',
            // A replica's first full sync starts at once, not after the 5-s diskless-sync
            // delay: the replicas of `replicaOf` are added one by one, each waited for.
            '--repl-diskless-sync-delay', '0',
            ...(opts.args ?? []),
          ],
        });
        taken.add(port).add(port + 10000);
        return node;
      } catch (err) {
        if (!(err instanceof PortClashError) || attempt >= 4) throw err;
      }
    }
  };
  try {
    for (let i = 0; i < masters; i++) nodes.push(await startNode());
    const seeds = nodes.map((n) => `${n.host}:${n.port}`);
    await runRedisCli(cli, ['--cluster', 'create', ...seeds, '--cluster-replicas', '0', '--cluster-yes'], 60000);

    const timeoutMs = opts.readyTimeoutMs ?? 30000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const infos = await Promise.all(
        nodes.map((n) => sendCommand(n.port, ['CLUSTER', 'INFO']).catch((e: Error) => e.message)),
      );
      if (infos.every((i) => typeof i === 'string' && /cluster_state:ok/.test(i))) break;
      if (Date.now() > deadline) throw new Error(`redis cluster did not reach cluster_state:ok within ${timeoutMs}ms`);
      await sleep(100);
    }
    for (const i of opts.replicaOf ?? []) {
      const primary = nodes[i];
      if (!primary) throw new Error(`replicaOf: there is no primary ${i}`);
      const replica = await startNode();
      replicas.push(replica);
      const id = String(await sendCommand(primary.port, ['CLUSTER', 'MYID']));
      await runRedisCli(cli, ['--cluster', 'add-node', `${replica.host}:${replica.port}`, `${primary.host}:${primary.port}`,
        '--cluster-slave', '--cluster-master-id', id], 60000);
      for (;;) {
        const info = String(await sendCommand(primary.port, ['INFO', 'replication']).catch((e: Error) => e.message));
        if (new RegExp(`slave\\d+:ip=[^,]+,port=${replica.port},state=online`).test(info)) break;
        if (Date.now() > deadline) throw new Error(`the replica of primary ${i} did not come online within ${timeoutMs}ms`);
        await sleep(100);
      }
    }
    const tlsSeeds = opts.tls ? nodes.map((n) => `${n.host}:${n.tlsPort}`) : [];
    return { nodes, replicas, seeds, tlsSeeds, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
