import { spawnSync } from 'node:child_process';
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
