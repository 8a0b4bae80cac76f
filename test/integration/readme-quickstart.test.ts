/**
 * The README's quick start, taken from README.md as it stands, runs against a
 * real `zdmatch dev` (with its private redis-server) and gets its outcome.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { freePorts } from '../helpers/ports';
import { CLI_MAIN, REPO_ROOT } from '../helpers/node-process';
import { waitFor } from '../helpers/wait';

function quickStartSource(address: string): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no ts block under "## Quick start"');
  const body = block
    .replace("from 'zdmatch'", `from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'index.js'))}`)
    .replaceAll('127.0.0.1:8801', address);
  const imports = body.split('\n').filter((l) => l.startsWith('import '));
  const rest = body.split('\n').filter((l) => !l.startsWith('import ')).join('\n');
  const wrapped = `${imports.join('\n')}\n(async () => {\n${rest}\n})().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });\n`;
  return ts.transpileModule(wrapped, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText;
}

it('runs the README quick start against npm start (zdmatch dev)', async () => {
  const [api, httpPort, internal, metrics] = await freePorts(4);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZD_')));
  const dev = spawn(process.execPath, [CLI_MAIN, 'dev', `--api.listen=127.0.0.1:${api}`, `--http.listen=127.0.0.1:${httpPort}`,
    `--internal.listen=127.0.0.1:${internal}`, `--metrics.listen=127.0.0.1:${metrics}`, '--drain.timeout=2s'],
  { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  dev.stdout.on('data', (c: Buffer) => (out += c.toString()));
  dev.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => dev.once('exit', (code) => r(code)));
  try {
    await waitFor(() => out.includes('Ctrl-C drains and stops.'), { timeoutMs: 30000 });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'zd-quickstart-')), 'quickstart.js');
    fs.writeFileSync(file, quickStartSource(`127.0.0.1:${api}`));
    const run = spawnSync(process.execPath, [file], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n').pop()).toBe('COMPLETED {"charged":5,"attempt":1}');
    dev.kill('SIGINT');
    expect(await exited).toBe(0);
  } finally {
    dev.kill('SIGKILL');
  }
});
