/**
 * docs/errors.md names every method that answers ZD_OPERATOR_SCOPE_REQUIRED:
 * the auth middleware is asked, with a client token lacking `operator: true`,
 * about every public method, and the doc row must name each one it refuses
 * (a whole service refused by name, e.g. `OperatorService`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Metadata, type CallContext, type ServerMiddlewareCall } from 'nice-grpc';
import { Auth } from '../../src/auth/auth';
import { loadConfig } from '../../src/config';
import { ZdError } from '../../src/errors/server-error';
import { silentLogger } from '../../src/util/logger';
import { MatchingServiceDefinition, OperatorServiceDefinition } from '../../src/wire';

const TOKEN = 'a-client-token-without-operator-scope';

function docRow(code: string): string {
  const text = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
  const row = text.split('\n').find((l) => l.startsWith(`| \`${code}\``));
  if (!row) throw new Error(`${code} is not documented`);
  return row;
}

/** The zdmatch error code the middleware answers for `methodPath`, or 'ok'. */
async function verdict(auth: Auth, methodPath: string): Promise<string> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${TOKEN}`);
  const call = {
    method: { path: methodPath },
    request: {},
    async *next() {
      return {};
    },
  } as unknown as ServerMiddlewareCall<unknown, unknown>;
  const gen = auth.middleware()(call, { metadata, signal: new AbortController().signal } as unknown as CallContext);
  try {
    await gen.next();
    return 'ok';
  } catch (err) {
    return err instanceof ZdError ? err.zdCode : String(err);
  }
}

describe('ZD_OPERATOR_SCOPE_REQUIRED in docs/errors.md', () => {
  let dir: string;
  let auth: Auth;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-operator-scope-'));
    const file = path.join(dir, 'client-tokens.yaml');
    fs.writeFileSync(file, `tokens:\n  - { name: engine, token: ${TOKEN}, tenants: ["*"] }\n`);
    auth = new Auth(loadConfig({ env: {}, args: [], overrides: { 'auth.enabled': true, 'auth.clientTokensFile': file } }), silentLogger);
    auth.start();
  });
  afterAll(() => {
    auth.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names every method refused without the operator scope', async () => {
    const services = { MatchingService: MatchingServiceDefinition, OperatorService: OperatorServiceDefinition };
    const row = docRow('ZD_OPERATOR_SCOPE_REQUIRED');
    const unnamed: string[] = [];
    let refused = 0;
    for (const [service, def] of Object.entries(services)) {
      const methods = Object.values(def).map((m) => m.path);
      const verdicts = await Promise.all(methods.map((p) => verdict(auth, p)));
      expect(verdicts.filter((v) => v !== 'ok' && v !== 'ZD_OPERATOR_SCOPE_REQUIRED')).toEqual([]);
      const hit = methods.filter((_, i) => verdicts[i] === 'ZD_OPERATOR_SCOPE_REQUIRED');
      refused += hit.length;
      if (hit.length === methods.length) {
        if (!row.includes(`\`${service}\``)) unnamed.push(service);
        continue;
      }
      for (const p of hit) {
        const name = p.split('/').pop()!;
        if (!row.includes(name)) unnamed.push(`${service}.${name}`);
      }
    }
    expect(refused).toBeGreaterThan(0); // the token really lacks the scope: the check is not a no-op
    expect(unnamed).toEqual([]);
  });
});
