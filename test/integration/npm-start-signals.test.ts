/**
 * `npm start` (the README's first command) runs `zdmatch dev`, which starts a
 * private redis-server. A SIGTERM to npm alone (a process manager, `kill
 * <npm pid>`, a container runtime) must reach `zdmatch dev`, which then drains
 * and stops its redis-server: npm signals its script's shell, and a shell
 * that does not exec the node process neither passes the signal on nor
 * waits, so node and redis-server outlived it on their ports.
 * Runs the real `npm start` (it builds first).
 */
import { spawn } from 'node:child_process';
import { freePort } from '../helpers/ports';
import { REPO_ROOT } from '../helpers/node-process';
import { alive, descendantsOf, type Proc } from '../helpers/procs';
import { waitFor } from '../helpers/wait';

it('stops zdmatch dev and its redis-server when npm alone gets SIGTERM', async () => {
  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, ZD_API_LISTEN: `127.0.0.1:${ports[0]}`, ZD_HTTP_LISTEN: `127.0.0.1:${ports[1]}`,
      ZD_METRICS_LISTEN: `127.0.0.1:${ports[2]}`, ZD_INTERNAL_LISTEN: `127.0.0.1:${ports[3]}`, ZD_REDIS_URL: '',
    },
  });
  let out = '';
  npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
  npm.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((r) => npm.once('exit', () => r()));
  let started: Proc[] = [];
  try {
    started = await waitFor(() => {
      const all = descendantsOf(npm.pid!);
      const dev = all.filter((p) => !p.cmdline.startsWith('sh ') && p.cmdline.includes('main.js dev'));
      const redis = all.filter((p) => p.cmdline.includes('redis-server'));
      return dev.length === 1 && redis.length === 1 && out.includes('zdmatch dev: a single local node') ? [...dev, ...redis] : undefined;
    }, { timeoutMs: 100_000, intervalMs: 200, description: 'npm start running zdmatch dev' }).catch((err: Error) => {
      throw new Error(`${err.message}; output: ${out}; processes: ${JSON.stringify(descendantsOf(npm.pid!))}`);
    });
    npm.kill('SIGTERM');
    await exited;
    await waitFor(() => started.every((p) => !alive(p.pid)), { timeoutMs: 20_000, description: 'dev and redis-server gone' }).catch(() => undefined);
    expect(started.filter((p) => alive(p.pid)).map((p) => p.cmdline.split(' ').slice(0, 3).join(' '))).toEqual([]);
  } finally {
    npm.kill('SIGKILL');
    for (const p of started) if (alive(p.pid)) process.kill(p.pid, 'SIGKILL');
  }
}, 150_000);
