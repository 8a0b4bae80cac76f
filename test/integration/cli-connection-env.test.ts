/**
 * The CLI's connection settings from the environment on success (docs/security.md:
 * "The CLI's client commands read `ZD_TOKEN` or `ZD_TOKEN_FILE`, and `ZD_TLS_CA`"):
 * the built CLI against a real node with auth on, given its token only through the
 * file `ZD_TOKEN_FILE` names, and against a node serving TLS, given only the CA file
 * `ZD_TLS_CA` names. The same command without the setting is refused, so the setting
 * is what made it work. Needs `npm run build` (npm test does it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../../src';
import { startAuthNode } from '../helpers/auth-node';
import { makeCerts } from '../helpers/certs';
import { runCliAsync, type CliResult } from '../helpers/cli';
import { startTestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let dir: string;

beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-cli-env-')); });
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const enqueue = (address: string, id: string) => [
  'enqueue', '--tenant', 'acme', '--flow-id', 'f1', '--flow-type', 'order', '--step-type', 'charge', '--step-execution-id', id,
  '--json', '--address', address,
];

/** The CLI's enqueue of s1 answered created with nothing on stderr, and the node holds that Step under the task it named. */
async function expectEnqueued(r: CliResult, client: Client): Promise<void> {
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  const out = JSON.parse(r.stdout) as { taskId: string; created: boolean };
  expect(out.created).toBe(true);
  const again = await client.enqueueStep({ tenant: 'acme', flowId: 'f1', flowType: 'order', stepType: 'charge', stepExecutionId: 's1' });
  expect({ created: again.created, taskId: again.taskId }).toEqual({ created: false, taskId: out.taskId });
}

it('takes the client token from the file ZD_TOKEN_FILE names, on a node with auth on', async () => {
  const token = 'client-acme-0123456789';
  const node = await startAuthNode(redis.url, 'cli-token-file', { workers: [], clients: [{ token, tenants: ['acme'] }] });
  const client = new Client({ address: node.node.apiAddress, credential: token });
  try {
    const file = path.join(dir, 'token');
    fs.writeFileSync(file, `${token}\n`); // as `echo` or a mounted Secret leaves it
    const r = await runCliAsync(enqueue(node.node.apiAddress, 's1'), { env: { PATH: process.env.PATH, ZD_TOKEN_FILE: file } });
    await expectEnqueued(r, client);
    // Without the file the same command is refused: the token came from it.
    const bare = await runCliAsync(enqueue(node.node.apiAddress, 's2'), { env: { PATH: process.env.PATH } });
    expect(bare.status).not.toBe(0);
    expect(bare.stderr).toContain('UNAUTHENTICATED');
  } finally {
    client.close();
    await node.close();
  }
});

it('trusts the CA of the file ZD_TLS_CA names, on a node serving TLS, and no other', async () => {
  const certsIn = (name: string) => {
    fs.mkdirSync(path.join(dir, name));
    return makeCerts(path.join(dir, name), { cn: '127.0.0.1', san: 'IP:127.0.0.1,DNS:localhost' });
  };
  const certs = certsIn('node');
  const other = certsIn('other'); // a CA of its own
  const t = await startTestNode(redis.url, uniquePrefix('cli-tls-ca'), { 'tls.enabled': true, 'tls.cert': certs.cert, 'tls.key': certs.key });
  const client = new Client({ address: t.node.apiAddress, tls: { ca: certs.ca } });
  try {
    const r = await runCliAsync(enqueue(t.node.apiAddress, 's1'), { env: { PATH: process.env.PATH, ZD_TLS_CA: certs.ca } });
    // Nothing on stderr: not even Node's notice (DEP0123) of a TLS dial of an IP address.
    await expectEnqueued(r, client);
    // Without ZD_TLS_CA the CLI speaks cleartext, and with another CA the node's certificate is not trusted: neither enqueues.
    const bare = await runCliAsync(enqueue(t.node.apiAddress, 's2'), { env: { PATH: process.env.PATH } });
    const untrusted = await runCliAsync(enqueue(t.node.apiAddress, 's3'), { env: { PATH: process.env.PATH, ZD_TLS_CA: other.ca } });
    expect([bare.status, untrusted.status]).toEqual([1, 1]);
    expect(await client.describeQueues('acme')).toEqual([expect.objectContaining({ ready: 1 })]);
  } finally {
    client.close();
    await t.close();
  }
});
