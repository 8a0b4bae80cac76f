/**
 * Each entry of a tokens file is read strictly (docs/security.md "Tokens
 * files"): an unknown field, a malformed or doubled credential, a bad tenant
 * name, a non-boolean operator, the operator scope on a worker token, or an
 * entry granting nothing makes the whole file invalid, named by entry and
 * field. Taken loosely, each would grant something nobody wrote down
 * (`operator: "no"` read as the operator scope, a tenant name no request can
 * carry), ignore what was written (a misspelt field, the token beside a
 * sha256) or silently drop a credential. A sha256 is hex in either case, and
 * the bearer scheme is case-insensitive (RFC 7235).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Auth } from '../../../src/auth/auth';
import { parseTokensFile } from '../../../src/auth/tokens';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/util/logger';

const TOKEN = 'client-secret-0123456789';
const DIGEST = createHash('sha256').update(TOKEN).digest('hex');
const entry = (fields: string) => `tokens:\n  - { name: e, ${fields} }\n`;

it.each([
  ['an unknown field', entry(`token: "${TOKEN}", tenant: [acme]`), 'client', 'tokens[0].tenant: is not a known field'],
  ['a sha256 that is not 64 hex digits', entry(`sha256: "${DIGEST.slice(1)}", tenants: [acme]`), 'client', 'tokens[0].sha256: must be 64 hex digits'],
  ['both a token and a sha256', entry(`token: "${TOKEN}", sha256: "${DIGEST}", tenants: [acme]`), 'client', 'tokens[0]: needs exactly one of "token" or "sha256"'],
  ['neither a token nor a sha256', entry('tenants: [acme]'), 'client', 'tokens[0]: needs exactly one of "token" or "sha256"'],
  ['a tenant with a space', entry(`token: "${TOKEN}", tenants: ["ac me"]`), 'client', 'tokens[0].tenants: must be a list of tenant names'],
  ['a tenant starting with a dash', entry(`token: "${TOKEN}", tenants: ["-acme"]`), 'client', 'tokens[0].tenants: must be a list of tenant names'],
  ['a tenant starting with a dot', entry(`token: "${TOKEN}", tenants: [".acme"]`), 'client', 'tokens[0].tenants: must be a list of tenant names'],
  ['a tenant with a colon', entry(`token: "${TOKEN}", tenants: ["acme:eu"]`), 'client', 'tokens[0].tenants: must be a list of tenant names'],
  ['an empty tenant', entry(`token: "${TOKEN}", tenants: [""]`), 'client', 'tokens[0].tenants: must be a list of tenant names'],
  ['tenants that are no list', entry(`token: "${TOKEN}", tenants: acme`), 'client', 'tokens[0].tenants: must be a list of tenant names'],
  ['an operator that is text', entry(`token: "${TOKEN}", operator: "no"`), 'client', 'tokens[0].operator: must be true or false'],
  ['the operator scope on a worker token', entry(`token: "${TOKEN}", operator: true`), 'worker', 'tokens[0].operator: only client tokens carry the operator scope'],
  ['no tenants and no operator scope', entry(`token: "${TOKEN}"`), 'client', 'tokens[0].tenants: must name at least one tenant (or set operator: true)'],
  ['no tenants and operator: false', entry(`token: "${TOKEN}", tenants: [], operator: false`), 'client', 'tokens[0].tenants: must name at least one tenant'],
  [
    'the same token twice, once as its sha256',
    `tokens:\n  - { token: "${TOKEN}", tenants: [acme] }\n  - { sha256: "${DIGEST.toUpperCase()}", tenants: [globex] }\n`,
    'client', 'tokens[1]: the same token appears twice',
  ],
] as const)('refuses a file with %s, naming the entry and field', (_what, text, kind, message) => {
  expect(() => parseTokensFile(text, kind)).toThrow(message);
});

it('takes an operator entry without tenants, and tenant names with dots, dashes and underscores', () => {
  const parsed = parseTokensFile(`tokens:\n  - { token: "${TOKEN}", operator: true }\n  - { token: "worker-secret-0123456789", tenants: [a.b-c_d, "*"] }\n`, 'client');
  expect([...parsed.values()].map((p) => [p.operator, p.allTenants, [...p.tenants]])).toEqual([[true, false, []], [false, true, ['a.b-c_d']]]);
});

describe('a node with a client tokens file', () => {
  let dir: string;
  let auth: Auth;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-token-entries-'));
    // The digest as `sha256sum` prints it, upper-cased as some tools and people write hex.
    fs.writeFileSync(path.join(dir, 'clients.yaml'), entry(`sha256: "${DIGEST.toUpperCase()}", tenants: [acme]`));
    fs.writeFileSync(path.join(dir, 'workers.yaml'), 'tokens: []\n');
    const config = loadConfig({
      env: {},
      overrides: { 'auth.enabled': true, 'auth.clientTokensFile': path.join(dir, 'clients.yaml'), 'auth.workerTokensFile': path.join(dir, 'workers.yaml') },
    });
    auth = new Auth(config, createLogger('silent'));
    auth.start();
  });
  afterAll(() => {
    auth.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates the token of an upper-case sha256', () => {
    expect(auth.authenticate('client', `Bearer ${TOKEN}`).name).toBe('e');
  });

  it('takes the bearer scheme in any case, and refuses a token run into it', () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) expect(auth.authenticate('client', `${scheme} ${TOKEN}`).name).toBe('e');
    expect(() => auth.authenticate('client', `Bearer${TOKEN}`)).toThrow('ZD_UNAUTHENTICATED');
    expect(() => auth.authenticate('client', TOKEN)).toThrow('ZD_UNAUTHENTICATED');
  });
});
