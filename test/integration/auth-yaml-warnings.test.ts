/**
 * A tokens file that YAML parses only with a warning (a tag or a directive it
 * does not know, such as `token: !vault …`), against a real node and
 * redis-server: the warning must not reach stderr, where Node prints it with
 * the file's line and so the plain token on it, and the file fails closed with
 * an ERROR naming the problem and its line (docs/security.md "Fail closed").
 */
import fs from 'node:fs';
import path from 'node:path';
import { clientTokenAccepted, startAuthNode, type AuthNode } from '../helpers/auth-node';
import { useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const GOOD = 'client-good-token-0123456789';
const TAGGED = 'client-tagged-token-0123456789';
let t: AuthNode;

beforeAll(async () => {
  t = await startAuthNode(redis.url, 'yamlwarn', { workers: [], clients: [{ token: GOOD, tenants: ['acme'] }] });
});
afterAll(async () => {
  await t?.close();
});

const accepted = (token: string) => clientTokenAccepted(t, token);

it('a tokens file with an unknown YAML tag prints none of its text and fails closed, naming the tag warning and its line', async () => {
  expect(await accepted(GOOD)).toBe(true);
  // Recorded instead of printed: what Node would write to stderr (the test realm's errors are no Errors to it).
  const warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  try {
    const from = t.logs.length;
    fs.writeFileSync(path.join(t.dir, 'clients.yaml'),
      `tokens:\n  - name: engine\n    token: !vault ${TAGGED}\n    tenants: [acme]\n`);
    t.node.auth.reload();
    expect(JSON.stringify(warnings.mock.calls.map((c) => String(c[0])))).not.toContain(TAGGED);
    expect(await accepted(TAGGED)).toBe(false);
    expect(await accepted(GOOD)).toBe(false);
    const error = await waitFor(() => t.logs.slice(from).find((l) => l.level === 50 && l.kind === 'client'), { timeoutMs: 2000 });
    expect(String(error.err)).toMatch(/^TAG_RESOLVE_FAILED at line 3\b/);
    expect(JSON.stringify(t.logs)).not.toContain(TAGGED);
  } finally {
    warnings.mockRestore();
  }
});
