/**
 * The node process's Node.js flags (src/node/runtime-flags.ts) are the same
 * wherever a node starts: the image (NODE_OPTIONS), `npm start`, and they take
 * effect the way the image passes them.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { NODE_RUNTIME_FLAGS } from '../../src/node/runtime-flags';

const root = path.join(__dirname, '..', '..');
const flags = NODE_RUNTIME_FLAGS.join(' ');

/** V8's heap limit (young generation included) of a Node.js started with `args` and `env`. */
function heapLimit(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const r = spawnSync(process.execPath, [...args, '-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], {
    env: { ...process.env, NODE_OPTIONS: '', ...env }, encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  return Number(r.stdout);
}

test('the image passes the flags as NODE_OPTIONS, before its entrypoint', () => {
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const env = dockerfile.indexOf(`ENV NODE_OPTIONS="${flags}"`);
  expect(env).toBeGreaterThan(-1);
  expect(env).toBeLessThan(dockerfile.indexOf('ENTRYPOINT'));
});

test('npm start runs the node with the flags', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(pkg.scripts.start).toContain(`node ${flags} dist/cli/main.js dev`);
});

test('the flags are allowed in NODE_OPTIONS and give the young generation its 64 MB semi-spaces', () => {
  const plain = heapLimit([]);
  // Three semi-spaces' worth (two semi-spaces and the new large-object space) of 64 instead of 16 MB.
  expect(heapLimit([], { NODE_OPTIONS: flags }) - plain).toBe(3 * (64 - 16) * 1024 * 1024);
  expect(heapLimit([...NODE_RUNTIME_FLAGS])).toBe(heapLimit([], { NODE_OPTIONS: flags }));
});
