/**
 * `zdmatch dev` as a child process on free loopback ports, with no ZD_* variable
 * of this process in its environment. Needs `npm run build` (npm test does it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_MAIN, REPO_ROOT } from './node-process';
import { freePorts } from './ports';
import { waitFor } from './wait';

export interface DevProcess {
  child: ChildProcess;
  /** The environment it runs with, for CLI calls beside it. */
  env: NodeJS.ProcessEnv;
  ports: { api: number; http: number; internal: number; metrics: number };
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once the banner is printed; rejects with the output when it is not within 30 s. */
  banner(): Promise<void>;
  /** The exit code. */
  exited: Promise<number | null>;
}

export async function startDev(args: string[]): Promise<DevProcess> {
  const [api, http, internal, metrics] = await freePorts(4);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_')));
  const child = spawn(process.execPath, [CLI_MAIN, 'dev', ...args,
    `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${http}`, `--internal.listen=127.0.0.1:${internal}`,
    `--metrics.listen=127.0.0.1:${metrics}`, '--drain.timeout=1s'],
  { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child, env, ports: { api: api!, http: http!, internal: internal!, metrics: metrics! }, exited,
    output: () => out,
    banner: () => waitFor(() => out.includes('Ctrl-C drains and stops.'), { timeoutMs: 30_000, description: 'the dev banner' })
      .then(() => undefined, (err: Error) => {
        throw new Error(`${err.message}; output:\n${out}`);
      }),
  };
}
