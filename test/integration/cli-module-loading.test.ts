/**
 * What the CLI loads before it does anything: `zdmatch --help` loads no client
 * library, and the client commands load the SDK but not the node's side (Redis,
 * the config schema's convict and YAML, the logger). Each of these was loaded
 * at every start, which made a `zdmatch queues` take 2-3 times its time to say
 * anything; the node commands load them when they run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-cli-modules-'));
  // Preloaded into the CLI: at exit, the files it required.
  fs.writeFileSync(path.join(dir, 'hook.js'),
    "process.on('exit', () => require('fs').writeFileSync(process.env.ZD_LOADED_OUT, JSON.stringify(Object.keys(require.cache))));\n");
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The packages (and zdmatch's own folders under dist/) the CLI loaded for `args`. */
function loaded(args: string[]): { status: number | null; stderr: string; parts: Set<string> } {
  const out = path.join(dir, `${args[0]}.json`);
  const r = runCli(args, { env: { PATH: process.env.PATH, ZD_LOADED_OUT: out, NODE_OPTIONS: `--require ${path.join(dir, 'hook.js')}` } });
  const parts = new Set<string>();
  for (const file of JSON.parse(fs.readFileSync(out, 'utf8')) as string[]) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file) ?? /\/dist\/([^/]+)\//.exec(file);
    if (m) parts.add(m[1]!);
  }
  return { status: r.status, stderr: r.stderr, parts };
}

const NODE_SIDE = ['ioredis', 'convict', 'yaml', 'pino', 'prom-client', 'node', 'owner', 'gateway', 'cluster'];
const CLIENT_SIDE = ['@grpc/grpc-js', 'nice-grpc', 'protobufjs', 'generated'];

it('loads no client library and nothing of the node for --help', () => {
  const r = loaded(['--help']);
  expect(r.status).toBe(0);
  expect(r.parts).toContain('commander'); // the hook saw the CLI's own loads
  for (const p of [...NODE_SIDE, ...CLIENT_SIDE]) expect(r.parts).not.toContain(p);
});

it('loads the SDK, and nothing of the node, for a client command', () => {
  // Port 1 refuses: the command dials, fails and exits 1.
  const r = loaded(['queues', '--tenant', 'acme', '--address', '127.0.0.1:1']);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/ECONNREFUSED/);
  for (const p of CLIENT_SIDE) expect(r.parts).toContain(p);
  for (const p of NODE_SIDE) expect(r.parts).not.toContain(p);
});

it('loads the config schema when a node command reads its config', () => {
  // A config error (exit 2) comes after the config is read, before a node starts.
  const r = loaded(['serve', '--matching.dispatchWait=soon']);
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(/matching\.dispatchWait/);
  expect(r.parts).toContain('convict');
});
