/**
 * Tokens files (docs/security.md): an entry that could never authenticate is
 * a broken file, named by entry and field, not a silently dead credential.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Metadata, type CallContext } from 'nice-grpc';
import { Auth, principalOf } from '../../../src/auth/auth';
import { parseTokensFile, TokenFile } from '../../../src/auth/tokens';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/util/logger';

const file = (token: string) => `tokens:\n  - { name: e, token: ${JSON.stringify(token)}, tenants: [acme] }\n`;

it.each([
  ['a space', 'has a space in the middle-0123456789', 'tokens[0].token: must be visible ASCII characters only'],
  ['a tab', 'tab\there-0123456789abcdef', 'tokens[0].token: must be visible ASCII characters only'],
  ['a non-ASCII letter', 'café-0123456789abcdef', 'tokens[0].token: must be visible ASCII characters only'],
  ['more than 4096 characters', 'x'.repeat(4097), 'tokens[0].token: must be at most 4096 characters'],
  ['fewer than 16 characters', 'short', 'tokens[0].token: must be at least 16 characters'],
  ['15 characters', 'x'.repeat(15), 'tokens[0].token: must be at least 16 characters'],
])('refuses a token with %s, naming the entry', (_what, token, message) => {
  expect(() => parseTokensFile(file(token), 'client')).toThrow(message);
});

it.each([['a number', '42'], ['a list', '[a, b]'], ['a mapping', '{ first: a }']])('refuses a name that is %s, naming the entry', (_what, name) => {
  const text = `tokens:\n  - { name: ${name}, token: "client-secret-0123456789", tenants: [acme] }\n`;
  expect(() => parseTokensFile(text, 'client')).toThrow('tokens[0].name: must be a string');
  expect(parseTokensFile(text.replace(`name: ${name}`, 'name: ci'), 'client').size).toBe(1);
});

it('accepts the shortest, the longest and the most varied token a bearer header carries', () => {
  const longest = 'y'.repeat(4096);
  const punctuated = '!"#$%&\'()*+,-./0123456789:;<=>?@[\\]^_`{|}~';
  for (const token of ['s'.repeat(16), longest, punctuated]) {
    const parsed = parseTokensFile(file(token), 'client');
    expect([...parsed.keys()]).toEqual([createHash('sha256').update(token).digest('hex')]);
  }
});

it('authenticates a bearer token of 4096 characters and refuses one of 4097 or with non-ASCII', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-tokens-'));
  const longest = 'z'.repeat(4096);
  // An entry by digest can name a token no header carries: it still never authenticates.
  const sha = createHash('sha256').update(`${longest}z`).digest('hex');
  fs.writeFileSync(path.join(dir, 'clients.yaml'), `${file(longest)}  - { name: too-long, sha256: ${sha}, tenants: [acme] }\n`);
  fs.writeFileSync(path.join(dir, 'workers.yaml'), 'tokens: []\n');
  const config = loadConfig({
    env: {},
    overrides: { 'auth.enabled': true, 'auth.clientTokensFile': path.join(dir, 'clients.yaml'), 'auth.workerTokensFile': path.join(dir, 'workers.yaml') },
  });
  const auth = new Auth(config, createLogger('silent'));
  try {
    auth.start();
    expect(auth.authenticate('client', `Bearer ${longest}`).name).toBe('e');
    expect(() => auth.authenticate('client', `Bearer ${longest}z`)).toThrow('ZD_UNAUTHENTICATED: a bearer token is required');
    expect(() => auth.authenticate('client', 'Bearer café-0123456789abcdef')).toThrow('ZD_UNAUTHENTICATED');
  } finally {
    auth.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('reads an unchanged tokens file once, however many periodic checks pass', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-tokens-'));
  const tokens = new TokenFile('client', path.join(dir, 'clients.yaml'), createLogger('silent'), 50);
  fs.writeFileSync(tokens.file, file('client-secret-0123456789'));
  try {
    tokens.start();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(tokens.generation).toBe(1);
    expect(tokens.lookup('client-secret-0123456789')?.name).toBe('e');
  } finally {
    tokens.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('refuses a call whose credential no middleware checked, failing closed', () => {
  expect(() => principalOf(undefined)).toThrow('ZD_UNAUTHENTICATED: no credential was checked for this call');
  expect(() => principalOf({ metadata: Metadata({ authorization: 'Bearer client-secret-0123456789' }) } as unknown as CallContext))
    .toThrow('ZD_UNAUTHENTICATED');
});
