#!/usr/bin/env node
// Generates src/generated/zdmatch.{js,d.ts} from proto/ with protobufjs-cli
// (static module + TypeScript definitions). `--check` regenerates into a
// temporary folder and fails when the committed files differ (stale).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const protoDir = path.join(root, 'proto');
const files = fs
  .readdirSync(path.join(protoDir, 'zdmatch', 'v1'))
  .filter((f) => f.endsWith('.proto'))
  .sort()
  .map((f) => path.join(protoDir, 'zdmatch', 'v1', f));
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function generate(outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  const js = path.join(outDir, 'zdmatch.js');
  execFileSync(
    bin('pbjs'),
    ['-t', 'static-module', '-w', 'commonjs', '--force-number', '--no-beautify', '--no-service',
      '--keep-case', '-p', protoDir, '-o', js, ...files],
    { cwd: protoDir, stdio: 'inherit' },
  );
  execFileSync(bin('pbts'), ['--no-comments', '-o', path.join(outDir, 'zdmatch.d.ts'), js], { stdio: 'inherit' });
  // The descriptor set behind gRPC server reflection (buf curl, grpcurl).
  execFileSync(bin('buf'), ['build', protoDir, '-o', path.join(outDir, 'zdmatch.binpb')], { stdio: 'inherit' });
}

const target = path.join(root, 'src', 'generated');
if (process.argv.includes('--check')) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-gen-'));
  generate(tmp);
  for (const f of ['zdmatch.js', 'zdmatch.d.ts', 'zdmatch.binpb']) {
    const a = fs.readFileSync(path.join(tmp, f));
    const b = fs.existsSync(path.join(target, f)) ? fs.readFileSync(path.join(target, f)) : Buffer.alloc(0);
    if (!a.equals(b)) {
      console.error(`src/generated/${f} is stale: run npm run gen`);
      process.exit(1);
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log('generated code is up to date');
} else {
  generate(target);
}
