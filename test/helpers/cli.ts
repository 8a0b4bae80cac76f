import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI_MAIN, REPO_ROOT } from './node-process';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli/main.js ...args` to completion (needs npm run build). */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): CliResult {
  if (!fs.existsSync(CLI_MAIN)) throw new Error(`${path.relative(REPO_ROOT, CLI_MAIN)} is missing: run npm run build first`);
  const r = spawnSync(process.execPath, [CLI_MAIN, ...args], {
    cwd: REPO_ROOT,
    env: opts.env ?? process.env,
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 30000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The same without blocking this process: for a CLI that talks to a node running
 * in the test's own process (runCli would stall the node's event loop).
 */
export function runCliAsync(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  if (!fs.existsSync(CLI_MAIN)) throw new Error(`${path.relative(REPO_ROOT, CLI_MAIN)} is missing: run npm run build first`);
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_MAIN, ...args], { cwd: REPO_ROOT, env: opts.env ?? { PATH: process.env.PATH }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/**
 * runCliAsync with the reading end of `closed` shut before the CLI writes, as
 * `zdmatch --help | true` leaves it: the exit status and what the other stream got.
 */
export function runCliReaderGone(args: string[], closed: 'stdout' | 'stderr', opts: { env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  if (!fs.existsSync(CLI_MAIN)) throw new Error(`${path.relative(REPO_ROOT, CLI_MAIN)} is missing: run npm run build first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { cwd: REPO_ROOT, env: opts.env ?? { PATH: process.env.PATH } });
    child[closed].destroy();
    const out = { stdout: '', stderr: '' };
    for (const name of ['stdout', 'stderr'] as const) {
      if (name !== closed) child[name].setEncoding('utf8').on('data', (d: string) => { out[name] += d; });
    }
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, ...out }));
  });
}

/** runCliAsync with `input` written to the CLI's stdin (then closed). */
export function runCliWithStdin(args: string[], input: string, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  if (!fs.existsSync(CLI_MAIN)) throw new Error(`${path.relative(REPO_ROOT, CLI_MAIN)} is missing: run npm run build first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { cwd: REPO_ROOT, env: opts.env ?? { PATH: process.env.PATH } });
    const out = { stdout: '', stderr: '' };
    for (const name of ['stdout', 'stderr'] as const) child[name].setEncoding('utf8').on('data', (d: string) => { out[name] += d; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, ...out }));
    child.stdin.end(input);
  });
}
