/**
 * No Docker engine runs here (and hadolint is not obtainable), so the
 * Dockerfile is checked by reading it: every path it COPYs exists after
 * `npm run build` (npm test builds first), its stages are named, the runtime
 * is non-root, and it runs `zdmatch serve --config …`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/node-process';

const text = fs.readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

it('copies only paths that exist (from the context, or from the build stage after npm run build)', () => {
  const stages = lines.filter((l) => /^FROM /i.test(l)).map((l) => / AS (\S+)$/i.exec(l)?.[1]);
  expect(stages.every(Boolean)).toBe(true);
  const copies = lines.filter((l) => /^COPY /i.test(l));
  expect(copies.length).toBeGreaterThan(3);
  for (const c of copies) {
    const words = c.split(/\s+/).slice(1).filter((w) => !w.startsWith('--') || w.startsWith('--from='));
    const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
    const paths = words.filter((w) => !w.startsWith('--'));
    const sources = paths.slice(0, -1);
    expect(sources.length).toBeGreaterThan(0);
    for (const s of sources) {
      expect(stages).toEqual(from ? expect.arrayContaining([from]) : expect.anything());
      // The build stage's WORKDIR is /app holding the repository's files (dist/ and node_modules/ made there).
      const rel = from ? s.replace(/^\/app\/?/, '') : s;
      expect(`${c} → ${rel}: ${fs.existsSync(path.join(REPO_ROOT, rel))}`).toBe(`${c} → ${rel}: true`);
    }
  }
});

it('runs zdmatch serve --config as a non-root user', () => {
  const entry = lines.filter((l) => /^ENTRYPOINT /.test(l)).pop()!;
  const cmd = lines.filter((l) => /^CMD /.test(l)).pop()!;
  const argv = [...JSON.parse(entry.slice('ENTRYPOINT '.length)), ...JSON.parse(cmd.slice('CMD '.length))] as string[];
  expect(argv.slice(0, 2)).toEqual(['node', 'dist/cli/main.js']);
  expect(fs.existsSync(path.join(REPO_ROOT, argv[1]!))).toBe(true);
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  expect(pkg.bin.zdmatch).toBe(argv[1]);
  expect(argv.slice(2, 4)).toEqual(['serve', '--config']);
  expect(argv[4]).toMatch(/^\/etc\/zdmatch\//);
  const user = lines.filter((l) => /^USER /.test(l)).pop()!;
  expect(user).not.toMatch(/^USER (root|0)(:|$)/);
  // The runtime stage copies a config to where CMD reads it.
  expect(lines.some((l) => /^COPY /.test(l) && l.endsWith(argv[4]!))).toBe(true);
});
