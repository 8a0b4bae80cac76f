#!/usr/bin/env node
// Copies what tsc does not emit: the generated static module and the Lua
// scripts (loaded at runtime from next to the code that calls them).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const root = path.resolve(__dirname, '..');

function copyTree(from, to, keep) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(src, dst, keep);
    else if (keep(entry.name)) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(src, dst);
    }
  }
}

copyTree(path.join(root, 'src', 'generated'), path.join(root, 'dist', 'generated'), (n) => n.endsWith('.js') || n.endsWith('.d.ts') || n.endsWith('.binpb'));
copyTree(path.join(root, 'src'), path.join(root, 'dist'), (n) => n.endsWith('.lua'));
fs.chmodSync(path.join(root, 'dist', 'cli', 'main.js'), 0o755);
