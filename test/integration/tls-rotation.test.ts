/**
 * Certificates rotate without a restart (docs/security.md "Rotating certificates"). The tls.* files
 * sit in a Kubernetes Secret volume as cert-manager updates it: tls.crt → ..data/tls.crt, and an
 * update swaps the ..data symlink to a new folder at once. After a swap, a new connection to each
 * listener (API, HTTP, peer) is served the new certificate, a connection opened before keeps
 * working, the expiry gauge follows; a broken update keeps the certificate in service and logs an
 * ERROR naming the file. Between two nodes on mutual TLS, a node whose certificate and CA bundle
 * were rotated presents its new certificate and trusts the new CA when it dials a peer. Real
 * nodes in this process, certificates made by openssl, a real redis-server.
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { ChannelCredentials } from '@grpc/grpc-js';
import { createChannel, createClient, type Channel } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { TLS_SETTLE_MS } from '../../src/node/tls-certificates';
import { MatchingServiceDefinition, pb, WorkerTaskServiceDefinition } from '../../src/wire';
import { makeCerts, type TestCerts } from '../helpers/certs';
import { captureLogs } from '../helpers/logs';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const SAN = 'IP:127.0.0.1,DNS:localhost';

let dir: string;
/** Two generations, each with its own CA; `gen2b` is a second certificate of gen2's CA. */
let gen1: TestCerts;
let gen2: TestCerts;
let gen2b: TestCerts;
const read = (f: string) => fs.readFileSync(f);
const fingerprintOf = (certFile: string) => new X509Certificate(read(certFile)).fingerprint256;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-tls-rotation-'));
  const sub = (n: string) => fs.mkdirSync(path.join(dir, n));
  for (const n of ['g1', 'g2', 'g2b']) sub(n);
  gen1 = makeCerts(path.join(dir, 'g1'), { cn: 'zdmatch-1', san: SAN, clientAuth: true });
  gen2 = makeCerts(path.join(dir, 'g2'), { cn: 'zdmatch-2', san: SAN, clientAuth: true });
  gen2b = makeCerts(path.join(dir, 'g2b'), { cn: 'zdmatch-2b', san: SAN, clientAuth: true, ca: gen2.ca });
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A Kubernetes Secret volume: each file a symlink into ..data, which an update points at a new folder in one rename. */
class SecretVolume {
  private version = 0;
  constructor(readonly dir: string) {
    fs.mkdirSync(dir);
  }

  path(name: string): string {
    return path.join(this.dir, name);
  }

  publish(files: Record<string, Buffer | string>): void {
    const old = fs.existsSync(this.path('..data')) ? fs.readlinkSync(this.path('..data')) : undefined;
    const version = `..2026_12_06_${++this.version}`;
    fs.mkdirSync(this.path(version));
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(this.path(version), name), content);
    fs.symlinkSync(version, this.path('..data_tmp'));
    fs.renameSync(this.path('..data_tmp'), this.path('..data'));
    for (const name of Object.keys(files)) if (!fs.existsSync(this.path(name))) fs.symlinkSync(path.join('..data', name), this.path(name));
    if (old) fs.rmSync(this.path(old), { recursive: true });
  }
}

interface Log { level: number; msg?: string; err?: string; file?: string; key?: string }

interface LoggedNode extends TestNode {
  logs: Log[];
}

async function startNode(volume: { path(name: string): string }, prefix: string, nodeId: string): Promise<LoggedNode> {
  const { logger, lines: logs } = captureLogs<Log>('info');
  const t = await startTestNode(redis.url, prefix, {
    'cluster.partitions': 4, 'cluster.nodeId': nodeId, 'cluster.nodeTtl': '1500ms',
    'tls.enabled': true, 'tls.cert': volume.path('tls.crt'), 'tls.key': volume.path('tls.key'), 'tls.ca': volume.path('ca.crt'),
  }, { logger });
  return Object.assign(t, { logs });
}

/** The fingerprint of the certificate a new TLS connection to `address` is served (presenting `client` when asked). */
function servedFingerprint(address: string, ca: Buffer, client: TestCerts): Promise<string> {
  const i = address.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = tls.connect({
      host: address.slice(0, i), port: Number(address.slice(i + 1)), ca, cert: read(client.cert), key: read(client.key),
      ALPNProtocols: ['h2', 'http/1.1'],
    }, () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.end();
    });
    s.on('error', (err) => reject(new Error(`${address}: ${err.message}`)));
  });
}

/** A request on one kept-alive HTTPS connection (a body the node reads, so it keeps the connection): the fingerprint of the certificate it was served. */
function httpsPost(agent: https.Agent, address: string): Promise<{ status: number; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(`https://${address}/v1/external-tasks/fetch-and-lock`, {
      agent, method: 'POST', headers: { 'content-type': 'application/json' },
    }, (res) => {
      // Read now: at the end the socket goes back to the agent's pool.
      const fingerprint = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, fingerprint }));
    });
    req.on('error', (err) => reject(new Error(`POST ${address}: ${err.message}`)));
    req.end('{}');
  });
}

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

it('a ..data swap puts the new certificate on every listener for new connections; open ones keep theirs; a broken update changes nothing and logs an ERROR', async () => {
  const vol = new SecretVolume(path.join(dir, 'secret-single'));
  vol.publish({ 'tls.crt': read(gen1.cert), 'tls.key': read(gen1.key), 'ca.crt': read(gen1.ca) });
  const n = await startNode(vol, uniquePrefix('tls-rot'), 'rot-1');
  closers.push(() => n.close());
  const { node } = n;
  const bothCas = Buffer.concat([read(gen1.ca), read(gen2.ca)]);
  const listeners = { api: node.apiAddress, http: node.httpAddress, internal: node.internalAddress };
  for (const a of Object.values(listeners)) expect(await servedFingerprint(a, bothCas, gen1)).toBe(fingerprintOf(gen1.cert));

  // Connections opened before the rotation, by clients trusting gen1's CA only: they can work on only as the connections they are.
  const oldChannel: Channel = createChannel(node.apiAddress, ChannelCredentials.createSsl(read(gen1.ca)));
  closers.push(() => oldChannel.close());
  const health = createClient(HealthDefinition, oldChannel);
  expect((await health.check({ service: '' })).status).toBe(1);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: read(gen1.ca) });
  closers.push(() => agent.destroy());
  expect((await httpsPost(agent, node.httpAddress)).fingerprint).toBe(fingerprintOf(gen1.cert));

  // cert-manager's update: a new certificate of a new CA, and a bundle of both CAs.
  vol.publish({ 'tls.crt': read(gen2.cert), 'tls.key': read(gen2.key), 'ca.crt': bothCas });
  for (const [name, a] of Object.entries(listeners)) {
    await waitFor(async () => (await servedFingerprint(a, bothCas, gen1)) === fingerprintOf(gen2.cert),
      { timeoutMs: 10_000, description: `a new connection to ${name} is served the new certificate` });
  }
  expect(n.logs.some((l) => l.msg?.startsWith('tls: certificate files reloaded'))).toBe(true);
  const gauge = await node.metrics.tlsCertificateExpiry.get();
  const notAfter = Date.parse(new X509Certificate(read(gen2.cert)).validTo) / 1000;
  expect(gauge.values.map((v) => [v.labels.listener, v.value]).sort()).toEqual([['api', notAfter], ['http', notAfter], ['internal', notAfter]]);

  // The connections opened before still work, on the certificate they were served.
  expect((await health.check({ service: '' })).status).toBe(1);
  const again = await httpsPost(agent, node.httpAddress);
  expect(again.fingerprint).toBe(fingerprintOf(gen1.cert));

  // A broken update: gen2b's key with gen2's certificate. Nothing changes; an ERROR names the key and the file.
  const reads = () => (node as unknown as { tlsFiles: { generation: number } }).tlsFiles.generation;
  const before = reads();
  vol.publish({ 'tls.crt': read(gen2.cert), 'tls.key': read(gen2b.key), 'ca.crt': bothCas });
  await waitFor(() => reads() > before, { timeoutMs: 10_000, description: 'the node reads the broken update' });
  const error = await waitFor(() => n.logs.find((l) => l.level === 50 && l.key === 'tls.key'), { description: 'an ERROR naming tls.key' });
  expect(error.file).toBe(vol.path('tls.key'));
  expect(error.msg).toMatch(/not the key of the certificate in tls\.cert.*the certificate in service stays/);
  for (const a of Object.values(listeners)) expect(await servedFingerprint(a, bothCas, gen1)).toBe(fingerprintOf(gen2.cert));
  expect((await node.metrics.tlsCertificateExpiry.get()).values.every((v) => v.value === notAfter)).toBe(true);

  // A file gone for a moment (a non-atomic writer): the same.
  const errorsBefore = n.logs.filter((l) => l.level === 50).length;
  fs.rmSync(vol.path('tls.crt'));
  await waitFor(() => n.logs.filter((l) => l.level === 50).length > errorsBefore, { description: 'an ERROR for the missing file' });
  expect(n.logs.filter((l) => l.level === 50).at(-1)!.file).toBe(vol.path('tls.crt'));
  for (const a of Object.values(listeners)) expect(await servedFingerprint(a, bothCas, gen1)).toBe(fingerprintOf(gen2.cert));
});

it('mutual TLS on the mesh: a node with a rotated certificate and CA bundle presents the new certificate and trusts the new CA when it dials a peer', async () => {
  const prefix = uniquePrefix('tls-rot-mesh');
  const volA = new SecretVolume(path.join(dir, 'secret-a'));
  volA.publish({ 'tls.crt': read(gen1.cert), 'tls.key': read(gen1.key), 'ca.crt': read(gen1.ca) });
  const a = await startNode(volA, prefix, 'mesh-a');
  closers.push(() => a.close());

  // a's Secret is renewed into the new CA (a bundle of both while peers move), and a peer
  // joins that knows the new CA only: each side is served, and dials with, what it rotated to.
  volA.publish({ 'tls.crt': read(gen2b.cert), 'tls.key': read(gen2b.key), 'ca.crt': Buffer.concat([read(gen1.ca), read(gen2.ca)]) });
  await waitFor(async () => (await servedFingerprint(a.node.internalAddress, read(gen2.ca), gen2)) === fingerprintOf(gen2b.cert),
    { timeoutMs: 10_000, description: 'a serves its new certificate' });
  const volB = new SecretVolume(path.join(dir, 'secret-b'));
  volB.publish({ 'tls.crt': read(gen2.cert), 'tls.key': read(gen2.key), 'ca.crt': read(gen2.ca) });
  const b = await startNode(volB, prefix, 'mesh-b');
  closers.push(() => b.close());

  // b → a: b's worker reaches a's view (a accepts b's certificate of the new CA).
  const channel = createChannel(b.node.apiAddress, ChannelCredentials.createSsl(read(gen2.ca)));
  closers.push(() => channel.close());
  const slot: RawSlot = openSlot(createClient(WorkerTaskServiceDefinition, channel), registerFrame({ app_worker_id: 'w-b' }));
  closers.push(() => slot.reset());
  await slot.nextOf('registered');
  await waitFor(() => a.node.view.nodeOfWorker('acme', 'w-b') !== undefined, { timeoutMs: 10_000, description: 'a sees w-b' });

  // a → b: an RPC called on a runs on b's worker (a trusts the new CA and presents its new certificate).
  const matchingA = createChannel(a.node.apiAddress, ChannelCredentials.createSsl(read(gen2.ca)));
  closers.push(() => matchingA.close());
  const call = createClient(MatchingServiceDefinition, matchingA).invokeRpc({
    tenant: 'acme', flow_id: 'r1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 5000,
  });
  const rpc = (await slot.nextOf('rpc_task', 5000)).rpc_task!;
  slot.send({ rpc_result: { task_token: rpc.task_token, output: Buffer.from('rotated') } });
  expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(Buffer.from((await call).output!).toString()).toBe('rotated');
});

it('a certificate and key saved 300 ms apart: the new certificate is served, and no ERROR for the mismatched pair between the two', async () => {
  const folder = path.join(dir, 'plain-files');
  fs.mkdirSync(folder);
  const at = (name: string) => path.join(folder, name);
  const bothCas = Buffer.concat([read(gen1.ca), read(gen2.ca)]);
  fs.writeFileSync(at('tls.crt'), read(gen1.cert));
  fs.writeFileSync(at('tls.key'), read(gen1.key));
  fs.writeFileSync(at('ca.crt'), bothCas);
  const n = await startNode({ path: at }, uniquePrefix('tls-rot-apart'), 'rot-apart');
  closers.push(() => n.node.close());

  // A writer that saves the files one after the other, in place.
  fs.writeFileSync(at('tls.crt'), read(gen2.cert));
  await new Promise((r) => setTimeout(r, 300));
  fs.writeFileSync(at('tls.key'), read(gen2.key));
  await waitFor(async () => (await servedFingerprint(n.node.apiAddress, bothCas, gen1)) === fingerprintOf(gen2.cert),
    { timeoutMs: 10_000, description: 'a new connection is served the new certificate' });
  // Past the time a set that does not check out is read again: nothing was reported.
  await new Promise((r) => setTimeout(r, TLS_SETTLE_MS + 500));
  expect(n.logs.filter((l) => l.level >= 50)).toEqual([]);
  expect(n.logs.filter((l) => l.msg?.startsWith('tls: certificate files reloaded'))).toHaveLength(1);
});
