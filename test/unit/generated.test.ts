/**
 * src/generated must match proto/: `node scripts/gen-proto.js --check` passes
 * on a copy of the tree, and fails once a proto of the copy changed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

function check(dir: string, env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, [path.join(dir, 'scripts', 'gen-proto.js'), '--check'], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 50000,
  });
}

describe('generated code', () => {
  // The tree's own proto/ and src/generated, copied: the check passes on them as they are.
  describe('on a copy of the tree', () => {
    let tmp: string;
    beforeAll(() => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-gen-test-'));
      fs.cpSync(path.join(root, 'scripts'), path.join(tmp, 'scripts'), { recursive: true });
      fs.cpSync(path.join(root, 'proto'), path.join(tmp, 'proto'), { recursive: true });
      fs.cpSync(path.join(root, 'src', 'generated'), path.join(tmp, 'src', 'generated'), { recursive: true });
      // The generator runs node_modules/.bin/pbjs relative to its own root.
      fs.symlinkSync(path.join(root, 'node_modules'), path.join(tmp, 'node_modules'), 'dir');
      // A failing --check leaves its scratch dir behind; keep it inside ours.
      fs.mkdirSync(path.join(tmp, 'scratch'));
    });
    const env = () => ({ ...process.env, TMPDIR: path.join(tmp, 'scratch') });
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('passes while the copy is unchanged: src/generated is up to date with proto/', () => {
      const r = check(tmp, env());
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
      expect(r.stdout).toContain('generated code is up to date');
    });

    it('fails, naming the stale file, once a proto changes', () => {
      const file = path.join(tmp, 'proto', 'zdmatch', 'v1', 'common.proto');
      const text = fs.readFileSync(file, 'utf8');
      const changed = text.replace(/message RetryPolicy \{/, 'message RetryPolicy {\n  string added_by_test = 99;');
      expect(changed).not.toBe(text);
      fs.writeFileSync(file, changed);
      const r = check(tmp, env());
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/src\/generated\/zdmatch\.(js|d\.ts) is stale: run npm run gen/);
    });
  });
});
