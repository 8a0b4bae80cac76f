/**
 * A config file that YAML parses only with a warning (a tag or directive it
 * does not know): Node would print the warning to stderr with the file's line,
 * which may hold redis.password, so the file fails at startup in one line
 * naming the file and the line instead.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../../src/config';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-config-yaml-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SECRET = 'redis-password-0123456789';

it.each([
  ['an unknown tag', `redis:\n  sentinels: [a:26379]\n  password: !vault ${SECRET}\n`, /Unresolved tag: !vault at line 3\b/],
  ['an unknown directive', `%SECRETS ${SECRET}\n---\nredis:\n  sentinels: [a:26379]\n`, /Unknown directive %SECRETS at line 1\b/],
])('a file with %s fails naming the file and the line, and prints none of its text', (_name, text, reason) => {
  const file = path.join(tmp, `${Math.random().toString(16).slice(2)}.yaml`);
  fs.writeFileSync(file, text);
  // Recorded instead of printed: what Node would write to stderr.
  const warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  let err: unknown;
  let printed: string[] = [];
  try {
    loadConfig({ env: {}, file });
  } catch (e) {
    err = e;
  } finally {
    printed = warnings.mock.calls.map((c) => String(c[0]));
    warnings.mockRestore();
  }
  expect(JSON.stringify(printed)).not.toContain(SECRET);
  expect(err).toBeInstanceOf(ConfigError);
  const message = (err as Error).message;
  expect(message.startsWith(`config file: ${file}: `)).toBe(true);
  expect(message).toMatch(reason);
  expect(message).not.toContain(SECRET);
  expect(message).not.toContain('\n');
});

it('takes a section whose keys are all commented out as empty, keeping its defaults', () => {
  // Guards `fetch:` alone: YAML reads it as null, which replaced the whole section, and the node
  // refused to boot over "fetch.lockDuration missing", a key the file never named.
  const file = path.join(tmp, 'empty-section.yaml');
  fs.writeFileSync(file, 'fetch:\n  # lockDuration: 5m\nmatching:\n  dispatchWait: 12s\n');
  const c = loadConfig({ env: {}, file });
  expect(c.fetch).toEqual(loadConfig({ env: {} }).fetch);
  expect(c.matching.dispatchWait).toBe(12_000);
});
