/**
 * `zdmatch dev` starts a private redis-server. Closing the terminal it runs in
 * (SIGHUP, the usual end of a dev session) must stop it as SIGTERM does: a
 * node killed by SIGHUP's default action leaves redis-server, which ignores
 * SIGHUP, running on its port.
 * Needs `npm run build` (npm test does it).
 */
import { spawn } from 'node:child_process';
import { freePorts } from '../helpers/ports';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { alive, childrenOf, type Proc } from '../helpers/procs';
import { waitFor } from '../helpers/wait';

describe('zdmatch dev', () => {
  it.each(['SIGTERM', 'SIGHUP'] as const)('drains, stops its redis-server and exits 0 on %s', async (signal) => {
    const [api, httpPort, internal, metrics] = await freePorts(4);
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_')));
    const dev = spawn(process.execPath, [CLI_MAIN, 'dev', `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`,
      `--internal.listen=127.0.0.1:${internal}`, `--metrics.listen=127.0.0.1:${metrics}`, '--drain.timeout=5s'],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    dev.stdout.on('data', (c: Buffer) => (out += c.toString()));
    dev.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | NodeJS.Signals | null>((r) => dev.once('exit', (code, sig) => r(code ?? sig)));
    let redis: Proc[] = [];
    try {
      redis = await waitFor(() => {
        const found = childrenOf(dev.pid!).filter((p) => p.cmdline.includes('redis-server'));
        return found.length === 1 && out.includes('Ctrl-C drains and stops.') ? found : undefined;
      }, { timeoutMs: 30_000, description: 'zdmatch dev running' }).catch((err: Error) => {
        throw new Error(`${err.message}; output: ${out}`);
      });

      dev.kill(signal);
      const code = await exited;
      await waitFor(() => redis.every((p) => !alive(p.pid)), { timeoutMs: 20_000, description: 'redis-server gone' }).catch(() => undefined);
      expect(redis.filter((p) => alive(p.pid)).map((p) => p.cmdline.split(' ').slice(0, 3).join(' '))).toEqual([]);
      expect(code).toBe(0);
    } finally {
      dev.kill('SIGKILL');
      for (const p of redis) if (alive(p.pid)) process.kill(p.pid, 'SIGKILL');
    }
  }, 60_000);
});
