/**
 * `zdmatch dev` starts a private redis-server. However the node ends, that
 * server must end with it and not before it:
 * - closing the terminal (SIGHUP, the usual end of a dev session) stops it as
 *   SIGTERM does: a node killed by SIGHUP's default action left redis-server,
 *   which ignores SIGHUP, running on its port;
 * - Ctrl-C goes to the terminal's whole process group: redis-server must not
 *   be in it, or it quits before the node has drained into it;
 * - a node killed with SIGKILL (no handler runs) still takes it down.
 * Needs `npm run build` (npm test does it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePorts } from '../helpers/ports';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { alive, childrenOf, type Proc } from '../helpers/procs';
import { Worker } from '../../src';
import { gate, recordingLogger, registeredWithClient } from '../helpers/sdk';
import { sleep, waitFor } from '../helpers/wait';

interface Dev {
  proc: ChildProcess;
  /** Its gRPC API address. */
  api: string;
  redis: Proc[];
  exited: Promise<number | NodeJS.Signals | null>;
  output(): string;
}

const started: Dev[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  for (const d of started.splice(0)) {
    d.proc.kill('SIGKILL');
    for (const p of d.redis) if (alive(p.pid)) process.kill(p.pid, 'SIGKILL');
  }
});

/**
 * Runs `zdmatch dev` until its banner is out; `ownGroup` puts it at the head of a process group, as a shell does.
 * `nodeArgs` go to Node.js before the CLI (a module to preload), `extraEnv` to its environment.
 */
async function startDev(ownGroup = false, nodeArgs: string[] = [], extraEnv: Record<string, string> = {}): Promise<Dev> {
  const [api, httpPort, internal, metrics] = await freePorts(4);
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_'))), ...extraEnv };
  const proc = spawn(process.execPath, [...nodeArgs, CLI_MAIN, 'dev', `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`,
    `--internal.listen=127.0.0.1:${internal}`, `--metrics.listen=127.0.0.1:${metrics}`, '--drain.timeout=5s'],
  { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: ownGroup });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | NodeJS.Signals | null>((r) => proc.once('exit', (code, sig) => r(code ?? sig)));
  const dev: Dev = { proc, api: `127.0.0.1:${api}`, redis: [], exited, output: () => out };
  started.push(dev);
  dev.redis = await waitFor(() => {
    const found = childrenOf(proc.pid!).filter((p) => p.cmdline.includes('redis-server'));
    return found.length === 1 && out.includes('Ctrl-C drains and stops.') ? found : undefined;
  }, { timeoutMs: 30_000, description: 'zdmatch dev running' }).catch((err: Error) => {
    throw new Error(`${err.message}; output: ${out}`);
  });
  return dev;
}

async function expectRedisGone(dev: Dev): Promise<void> {
  await waitFor(() => dev.redis.every((p) => !alive(p.pid)), { timeoutMs: 20_000, description: 'redis-server gone' }).catch(() => undefined);
  expect(dev.redis.filter((p) => alive(p.pid)).map((p) => p.cmdline.split(' ').slice(0, 3).join(' '))).toEqual([]);
}

describe('zdmatch dev', () => {
  it.each(['SIGTERM', 'SIGHUP'] as const)('drains, stops its redis-server and exits 0 on %s', async (signal) => {
    const dev = await startDev();
    dev.proc.kill(signal);
    const code = await dev.exited;
    await expectRedisGone(dev);
    expect(code).toBe(0);
  }, 60_000);

  // The banner says the node runs: a signal sent on reading it drains the node. Between the
  // start-up handler's removal and the node's own, Node gave SIGTERM its default action,
  // and the banner was written in that gap: a process descheduled right after writing it
  // (the stall stands for that) was killed by the signal, undrained.
  it('drains and exits 0 on a SIGTERM sent the moment its banner is out', async () => {
    const dev = await startDev(false, ['--require', path.join(__dirname, '../helpers/stall-after-output.js')],
      { STALL_AFTER: 'Ctrl-C drains and stops.' });
    dev.proc.kill('SIGTERM');
    const code = await dev.exited;
    await expectRedisGone(dev);
    expect(code).toBe(0);
    expect(dev.output()).toContain('shutting down: draining');
  }, 60_000);

  it('drains into a live redis-server on Ctrl-C (SIGINT to the whole process group), then stops it', async () => {
    const dev = await startDev(true);
    // A Step in flight when Ctrl-C comes: the drain waits for it, and its outcome goes to Redis.
    const started = gate();
    const release = gate();
    const logger = recordingLogger();
    const w = new Worker({
      address: dev.api, tenant: 'acme', maxConcurrentTasks: 1, reservedRpcTasks: 0, logger,
      flowTypes: { order: { steps: { charge: async () => { started.open(); await release.opened; return 'ok'; } } } },
    });
    const { c } = await registeredWithClient(w, dev.api, cleanups);
    await c.enqueueStep({ tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1' });
    await started.opened;

    process.kill(-dev.proc.pid!, 'SIGINT');
    await waitFor(() => dev.output().includes('node draining'), { timeoutMs: 5000, description: 'the node draining' });
    await sleep(300);
    // redis-server in the node's process group got the SIGINT too and quit before the drain was done.
    expect(dev.redis.filter((p) => !alive(p.pid))).toEqual([]);
    release.open();
    expect(await dev.exited).toBe(0);
    await expectRedisGone(dev);
    expect(logger.lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
    expect(dev.output()).not.toMatch(/ECONNREFUSED|Connection is closed|ZD_STORE_UNAVAILABLE/);
  }, 60_000);

  it('takes its redis-server down when the node is killed with SIGKILL', async () => {
    const dev = await startDev();
    const dataDir = /data in (\S+?),/.exec(dev.output())?.[1];
    expect(dataDir && fs.existsSync(dataDir)).toBe(true);
    dev.proc.kill('SIGKILL');
    await dev.exited;
    await expectRedisGone(dev);
    await waitFor(() => !fs.existsSync(dataDir!), { timeoutMs: 15_000, description: `${dataDir} removed` });
  }, 60_000);
});
