/**
 * `zdmatch bench --local` starts a private redis-server and a node process:
 * SIGINT, SIGTERM or SIGHUP sent to the bench alone (a process manager, `timeout`,
 * `kill <pid>`) must stop them too, not leave them running on their ports.
 * Needs `npm run build` (npm test does it).
 */
import { spawn } from 'node:child_process';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { alive, childrenOf, type Proc } from '../helpers/procs';
import { waitFor } from '../helpers/wait';

describe('zdmatch bench --local', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('stops its redis-server and node process on %s and exits non-zero', async (signal) => {
    const bench = spawn(process.execPath, [CLI_MAIN, 'bench', '--local', '--mode', 'rate', '--rate', '20', '--duration', '120',
      '--warmup', '0', '--no-progress'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    bench.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    bench.stdout.resume();
    const exited = new Promise<number | null>((r) => bench.once('exit', (code) => r(code)));
    let started: Proc[] = [];
    try {
      // Running once the worker and producer processes are up (after the redis-server and the node).
      const running = waitFor(() => {
        const kids = childrenOf(bench.pid!);
        const redis = kids.filter((k) => k.cmdline.includes('redis-server'));
        const node = kids.filter((k) => k.cmdline.includes('main.js serve'));
        const load = kids.filter((k) => k.cmdline.includes('"role":"producer"'));
        return redis.length === 1 && node.length === 1 && load.length === 1 ? [...redis, ...node] : undefined;
      }, { timeoutMs: 30_000, description: 'bench --local running' });
      // A bench that could not start says why, at once: not a 30-s wait for processes that will never come.
      const endedEarly = exited.then((code) => {
        throw new Error(`bench --local exited (${code}) before it ran`);
      });
      started = await Promise.race([running, endedEarly]).catch((err: Error) => {
        throw new Error(`${err.message}; its stderr: ${stderr.slice(-1500)}`);
      });

      bench.kill(signal);
      expect(await exited).not.toBe(0);
      await waitFor(() => started.every((p) => !alive(p.pid)), { timeoutMs: 20_000, description: 'local processes gone' }).catch(() => undefined);
      expect(started.filter((p) => alive(p.pid)).map((p) => p.cmdline.split(' ').slice(0, 3).join(' '))).toEqual([]);
      expect(stderr).not.toMatch(/^\s+at /m);
    } finally {
      bench.kill('SIGKILL');
      for (const p of started) if (alive(p.pid)) process.kill(p.pid, 'SIGKILL');
    }
  }, 90_000);
});
