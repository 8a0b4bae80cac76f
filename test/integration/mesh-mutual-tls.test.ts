/**
 * With tls.ca set the peer mesh is mutual TLS (docs/security.md "Deploying
 * with TLS"): the internal listener takes no bearer tokens, so the client
 * certificate is all that keeps a rogue process from running RPCs and
 * cancelling attempts of any tenant. A caller that presents no certificate,
 * or one another CA signed, gets nothing through; a peer presenting a
 * certificate the CA signed is served. A real node, a real redis-server, and
 * certificates made by openssl in the test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChannelCredentials } from '@grpc/grpc-js';
import { ClientError, createChannel, createClient, Status } from 'nice-grpc';
import { PeerServiceDefinition } from '../../src/wire';
import { makeCerts, type TestCerts } from '../helpers/certs';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';

const redis = useEmbeddedRedis();
const SAN = 'IP:127.0.0.1,DNS:localhost';
let dir: string;
let cluster: TestCerts;
let rogue: TestCerts;
let t: TestNode;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-mesh-mtls-'));
  fs.mkdirSync(path.join(dir, 'cluster'));
  fs.mkdirSync(path.join(dir, 'rogue'));
  cluster = makeCerts(path.join(dir, 'cluster'), { cn: 'localhost', san: SAN, clientAuth: true });
  rogue = makeCerts(path.join(dir, 'rogue'), { cn: 'localhost', san: SAN, clientAuth: true }); // a CA of its own
  t = await startTestNode(redis.url, uniquePrefix('mesh-mtls'), {
    'tls.enabled': true, 'tls.cert': cluster.cert, 'tls.key': cluster.key, 'tls.ca': cluster.ca,
  }, { credentials: ChannelCredentials.createSsl(fs.readFileSync(cluster.ca)) });
});
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** One HeldAttempts call on the node's internal listener, dialling with `credentials`: undefined when served, else its status. */
async function peerCall(credentials: ChannelCredentials): Promise<Status | undefined> {
  const channel = createChannel(t.node.internalAddress, credentials);
  try {
    await createClient(PeerServiceDefinition, channel).heldAttempts({ nonces: [], boot_id: '' }, { signal: AbortSignal.timeout(3000) });
    return undefined;
  } catch (err) {
    if (err instanceof ClientError) return err.code;
    throw err;
  } finally {
    channel.close();
  }
}

const read = (f: string) => fs.readFileSync(f);

it('serves a peer presenting a certificate tls.ca signed', async () => {
  expect(await peerCall(ChannelCredentials.createSsl(read(cluster.ca), read(cluster.key), read(cluster.cert)))).toBeUndefined();
});

it('refuses a caller that presents no client certificate', async () => {
  expect(await peerCall(ChannelCredentials.createSsl(read(cluster.ca)))).toBe(Status.UNAVAILABLE);
});

it('refuses a caller whose certificate another CA signed', async () => {
  expect(await peerCall(ChannelCredentials.createSsl(read(cluster.ca), read(rogue.key), read(rogue.cert)))).toBe(Status.UNAVAILABLE);
});
