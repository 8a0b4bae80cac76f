/**
 * Tokens files as Kubernetes mounts them, against a real node and
 * redis-server (docs/security.md "Reload", "Fail closed"): a Secret update
 * swaps the folder's `..data` symlink, never the file's own name, and is
 * seen by the folder watch (the periodic check here is an hour away); a
 * malformed file fails closed with an ERROR naming the file and the line,
 * and none of the file's text (which may hold plain tokens); a kind with no
 * tokens file configured is refused, with an ERROR at startup.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientError, Status, createClient } from 'nice-grpc';
import { ExternalTaskServiceDefinition } from '../../src/wire';
import { bearer as md, clientTokenAccepted, startAuthNode, type AuthNode } from '../helpers/auth-node';
import { useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const OLD = 'k8s-client-old-0123456789';
const NEW = 'k8s-client-new-0123456789';
const BROKEN = 'k8s-token-in-a-broken-file-0123456789';
const secret = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-k8s-secret-'));
const clients = path.join(secret, 'clients.yaml');
let t: AuthNode;
let version = 0;

/** What the kubelet does on a Secret update: a new timestamped folder, then `..data` renamed over to point at it. */
function secretUpdate(text: string): void {
  const dir = `..2024_01_01_00_00_0${++version}`;
  fs.mkdirSync(path.join(secret, dir));
  fs.writeFileSync(path.join(secret, dir, 'clients.yaml'), text);
  fs.symlinkSync(dir, path.join(secret, '..data_tmp'));
  fs.renameSync(path.join(secret, '..data_tmp'), path.join(secret, '..data'));
  if (version > 1) fs.rmSync(path.join(secret, `..2024_01_01_00_00_0${version - 1}`), { recursive: true });
}
const tokens = (token: string) => `tokens:\n  - { name: engine, token: "${token}", tenants: [acme] }\n`;

beforeAll(async () => {
  secretUpdate(tokens(OLD));
  fs.symlinkSync('..data/clients.yaml', clients);
  t = await startAuthNode(redis.url, 'k8sauth', { workers: [], clients: [] }, {
    // no worker tokens file: a config that forgot it
    'auth.clientTokensFile': clients, 'auth.workerTokensFile': '', 'auth.reloadInterval': '1h',
  });
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(secret, { recursive: true, force: true });
});

const accepted = (token: string) => clientTokenAccepted(t, token);

it('picks up a Kubernetes Secret update (the ..data symlink swap) at once: the old token stops, the new one works', async () => {
  expect(await accepted(OLD)).toBe(true);
  secretUpdate(tokens(NEW));
  await waitFor(() => accepted(NEW), { timeoutMs: 2000 });
  expect(await accepted(OLD)).toBe(false);
});

it('a malformed file fails closed with an ERROR naming the file and the line, and none of its text', async () => {
  const from = t.logs.length;
  // line 2 holds a token, and a key twice
  secretUpdate(`tokens:\n  - { token: "${BROKEN}", tenants: [acme], tenants: [globex] }\n`);
  const error = await waitFor(() => t.logs.slice(from).find((l) => l.level === 50 && l.kind === 'client'), { timeoutMs: 2000 });
  expect(error.file).toBe(clients);
  expect(String(error.err)).toMatch(/\bline 2\b/);
  expect(JSON.stringify(t.logs)).not.toContain(BROKEN);
  expect(await accepted(NEW)).toBe(false);
  expect(await accepted(BROKEN)).toBe(false);
  secretUpdate(tokens(NEW));
  await waitFor(() => accepted(NEW), { timeoutMs: 2000 });
});

it('with no worker tokens file configured, says so in an ERROR at startup and refuses every worker token', async () => {
  const errors = t.logs.filter((l) => l.level === 50 && l.kind === 'worker').map((l) => String(l.msg));
  expect(errors).toEqual([expect.stringContaining('no auth.workerTokensFile configured')]);
  const external = createClient(ExternalTaskServiceDefinition, t.channel);
  const err = await external.fetchAndLock({ worker_id: 'w', topics: [{ tenant: 'acme', flow_type: 'f', step_type: 's' }], wait_ms: 1 }, md('some-worker-token-0123456789'))
    .then(() => undefined, (e: unknown) => e);
  expect(err instanceof ClientError && Status[err.code]).toBe('UNAUTHENTICATED');
});
