/**
 * How `serve` and `dev` end on a signal (src/cli/common.ts, onShutdownSignals):
 * the first signal drains and exits 0, or 1 when the drain fails; a second
 * signal, or the drain outlasting its deadline, exits 1 at once. A process
 * manager reads the exit code, so a forced or failed stop must not look clean.
 * Each case runs the built function in a process of its own with a shutdown the
 * test controls: a real node's idle drain can end before a second signal lands.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { sleep } from '../helpers/wait';

const DIST = path.dirname(path.dirname(CLI_MAIN));

/** A process whose shutdown resolves ('ok'), rejects ('fail') or never ends ('hang'); resolves once its handlers are set. */
async function withShutdown(kind: 'ok' | 'fail' | 'hang', forceAfterMs: number): Promise<{ child: ChildProcess; exit: Promise<number | null> }> {
  const script = `
    const { onShutdownSignals } = require(${JSON.stringify(path.join(DIST, 'cli', 'common.js'))});
    const { silentLogger } = require(${JSON.stringify(path.join(DIST, 'util', 'logger.js'))});
    const [kind, force] = process.argv.slice(1);
    setInterval(() => undefined, 1000); // a node's servers keep it running while it drains
    onShutdownSignals(silentLogger, () =>
      kind === 'ok' ? Promise.resolve() : kind === 'fail' ? Promise.reject(new Error('drain failed')) : new Promise(() => undefined), Number(force));
    process.stdout.write('ready\\n');
  `;
  const child = spawn(process.execPath, ['-e', script, kind, String(forceAfterMs)], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`exited ${code} before it was ready`)));
  });
  return { child, exit };
}

let running: ChildProcess | undefined;
afterEach(() => {
  if (running && running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
  running = undefined;
});

it('exits 0 once the drain a signal started has ended', async () => {
  const { child, exit } = await withShutdown('ok', 60_000);
  running = child;
  child.kill('SIGTERM');
  expect(await exit).toBe(0);
});

it('exits 1 when the drain fails', async () => {
  const { child, exit } = await withShutdown('fail', 60_000);
  running = child;
  child.kill('SIGTERM');
  expect(await exit).toBe(1);
});

it('keeps draining after the first signal, and exits 1 at once on a second', async () => {
  const { child, exit } = await withShutdown('hang', 60_000);
  running = child;
  child.kill('SIGTERM');
  await sleep(300);
  expect(child.exitCode).toBeNull(); // still draining
  child.kill('SIGINT');
  expect(await exit).toBe(1);
}, 10_000);

it('exits 1 when the drain outlasts its deadline', async () => {
  const { child, exit } = await withShutdown('hang', 300);
  running = child;
  const signalled = Date.now();
  child.kill('SIGHUP');
  expect(await exit).toBe(1);
  expect(Date.now() - signalled).toBeGreaterThanOrEqual(250);
}, 10_000);
