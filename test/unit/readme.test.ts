/** The README's config table is generated from src/config/schema.ts and must match it. */
import fs from 'node:fs';
import path from 'node:path';
import { schema } from '../../src/config/schema';

const root = path.resolve(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { withTable, table } = require(path.join(root, 'scripts', 'config-table.js')) as {
  withTable(readme: string): string;
  table(): string;
};

describe('README.md', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

  it('has an up-to-date config table (fix: node scripts/config-table.js --write)', () => {
    expect(withTable(readme)).toBe(readme);
  });

  it('lists every schema key in the table', () => {
    const keys: string[] = [];
    const walk = (node: object, prefix: string) => {
      for (const [k, v] of Object.entries(node)) {
        const key = prefix ? `${prefix}.${k}` : k;
        if (v && typeof v === 'object' && 'default' in v) keys.push(key);
        else walk(v as object, key);
      }
    };
    walk(schema, '');
    const t = table();
    expect(keys.length).toBeGreaterThan(40);
    for (const key of keys) expect(t).toContain(`| \`${key}\` |`);
  });

  it('has the quick start wait for registration with a startup deadline, and stop the worker when it passes', () => {
    // Without a deadline a worker that cannot reach its node waits for good (UNAVAILABLE is retried).
    const quickStart = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(quickStart).toMatch(/await worker\.waitPullRegistered\(AbortSignal\.timeout\(30_000\)\);\n\} catch \(err\) \{\n {2}await worker\.stop\(\);/);
  });

  it('documents the two fresh-machine commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
  });
});
