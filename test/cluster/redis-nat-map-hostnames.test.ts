/**
 * redis.natMap on a real 3-primary Redis Cluster that announces hostnames
 * (`cluster-announce-hostname`, `cluster-preferred-endpoint-type hostname`), as a
 * Cluster in Kubernetes does: the names (under .invalid, which no resolver knows)
 * are mapped to TCP proxies of each primary's plain and TLS port. Over TLS the
 * certificate names only the announced hostnames, as a certificate made for the
 * Cluster's own network does: the node asks for (SNI) and checks the announced name
 * of the server it dials, the seeds included (given as reachable addresses the map names).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sendCommand, startRedisCluster, type EmbeddedRedisTls, type RedisCluster } from '../../src/store/embedded-redis';
import { createRedis } from '../../src/store/redis';
import { makeCerts } from '../helpers/certs';
import { completeOneStep, startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

let dir = '';
let tls: EmbeddedRedisTls;
let cluster: RedisCluster | undefined;
let plainProxies: TcpProxy[] = [];
let tlsProxies: TcpProxy[] = [];
let t: TestNode | undefined;
const hostname = (i: number) => `redis-${i}.zd-nat.invalid`;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-nat-hostnames-'));
  const san = [0, 1, 2].map((i) => `DNS:${hostname(i)}`).join(',');
  const c = makeCerts(dir, { cn: hostname(0), san, clientAuth: true });
  tls = { certFile: c.cert, keyFile: c.key, caFile: c.ca };
  cluster = await startRedisCluster({ masters: 3, tls });
  const nodes = cluster.nodes;
  for (const [i, n] of nodes.entries()) {
    expect(await sendCommand(n.port, ['CONFIG', 'SET', 'cluster-announce-hostname', hostname(i)])).toBe('OK');
    expect(await sendCommand(n.port, ['CONFIG', 'SET', 'cluster-preferred-endpoint-type', 'hostname'])).toBe('OK');
  }
  // Each primary learns the others' hostnames by gossip: wait until every one names all three.
  await waitFor(async () => {
    const replies = await Promise.all(nodes.map((n) => sendCommand(n.port, ['CLUSTER', 'SLOTS'])));
    return replies.every((r) => Array.isArray(r) && r.length === 3 &&
      r.every((range) => Array.isArray(range) && Array.isArray(range[2]) && /^redis-\d\.zd-nat\.invalid$/.test(String(range[2][0]))));
  }, { timeoutMs: 15_000, intervalMs: 100, description: 'every primary to announce the hostnames' });
  plainProxies = await Promise.all(nodes.map((n) => tcpProxy(n.port)));
  tlsProxies = await Promise.all(nodes.map((n) => tcpProxy(n.tlsPort!)));
}, 90_000);

afterEach(async () => {
  await t?.close();
  t = undefined;
});

afterAll(async () => {
  await t?.close();
  await Promise.all([...plainProxies, ...tlsProxies].map((p) => p.close()));
  await cluster?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});


/** `announced-hostname:port=127.0.0.1:proxy-port` for each primary. */
function natMap(ports: (n: RedisCluster['nodes'][number]) => number, proxies: { port: number }[]): string[] {
  return cluster!.nodes.map((n, i) => `${hostname(i)}:${ports(n)}=127.0.0.1:${proxies[i]!.port}`);
}

it('reaches every primary of a Cluster announcing hostnames through the address redis.natMap maps each hostname to', async () => {
  const before = plainProxies.map((p) => p.accepted);
  t = await startTestNode('', uniquePrefix('nat-host'), {
    'redis.clusterNodes': [...cluster!.seeds], 'redis.natMap': natMap((n) => n.port, plainProxies),
  });
  await completeOneStep(t, 'h1');
  // The node's partitions have keys on all three primaries: each was dialled at its proxy, none at its hostname.
  expect(plainProxies.map((p, i) => p.accepted - before[i]!).every((n) => n > 0)).toBe(true);
}, 60_000);

/** A forwarder to `port` that keeps each connection's first bytes: a TLS ClientHello holds the server name asked for (SNI) in plain text. */
async function sniffer(port: number): Promise<{ port: number; hellos: string[]; close(): Promise<void> }> {
  const hellos: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const target = net.connect(port, '127.0.0.1');
    sockets.add(client).add(target);
    client.once('data', (chunk: Buffer) => hellos.push(chunk.toString('latin1')));
    client.pipe(target);
    target.pipe(client);
    const end = () => {
      client.destroy();
      target.destroy();
    };
    client.on('error', end).on('close', end);
    target.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    hellos,
    close: () => {
      for (const c of sockets) c.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

it('over TLS, checks each primary\'s certificate against the hostname it announces, and asks for that name, not the mapped address dialled', async () => {
  const sniffers = await Promise.all(cluster!.nodes.map((n) => sniffer(n.tlsPort!)));
  try {
    t = await startTestNode('', uniquePrefix('nat-host-tls'), {
      // One seed, at a reachable address the certificate does not name: the others are known from CLUSTER SLOTS alone.
      'redis.clusterNodes': [`127.0.0.1:${sniffers[0]!.port}`], 'redis.natMap': natMap((n) => n.tlsPort!, sniffers),
      'redis.tls': true, 'redis.tlsCa': tls.caFile,
    });
    await completeOneStep(t, 't1');
    // Each primary was dialled at its mapped address, and asked for by the hostname it announces (SNI).
    for (const [i, s] of sniffers.entries()) {
      expect(s.hellos.length).toBeGreaterThan(0);
      expect(s.hellos.every((h) => h.includes(hostname(i)))).toBe(true);
    }
  } finally {
    await t?.close();
    t = undefined;
    await Promise.all(sniffers.map((s) => s.close()));
  }
}, 60_000);

/** Waits until every primary's CLUSTER SLOTS names primary `i` as `name`. */
async function announced(i: number, name: string): Promise<void> {
  await waitFor(async () => {
    const replies = await Promise.all(cluster!.nodes.map((n) => sendCommand(n.port, ['CLUSTER', 'SLOTS'])));
    const port = cluster!.nodes[i]!.port;
    return replies.every((r) => Array.isArray(r) && r.some((range) => Array.isArray(range) && Array.isArray(range[2]) &&
      range[2][0] === name && Number(range[2][1]) === port));
  }, { timeoutMs: 15_000, intervalMs: 100, description: `every primary to announce primary ${i} as ${name}` });
}

/** A key whose slot primary `i` serves (the others answer MOVED). */
async function keyOn(i: number): Promise<string> {
  for (let k = 0; ; k++) {
    if (!(await sendCommand(cluster!.nodes[i]!.port, ['GET', `nat-key-${k}`]) instanceof Error)) return `nat-key-${k}`;
  }
}

it('over TLS, refuses a primary whose certificate names neither the hostname it announces nor the address dialled, and takes one naming the address', async () => {
  // Primary 0 announces a name its certificate does not hold (a certificate issued for other names).
  const rogue = 'rogue.zd-nat.invalid';
  const first = cluster!.nodes[0]!;
  expect(await sendCommand(first.port, ['CONFIG', 'SET', 'cluster-announce-hostname', rogue])).toBe('OK');
  const client = createRedis({
    url: '', clusterNodes: [1, 2].map((i) => `127.0.0.1:${tlsProxies[i]!.port}`), sentinels: [], sentinelName: '', password: '',
    tls: true, tlsCa: tls.caFile,
    natMap: [`${rogue}:${first.tlsPort!}=127.0.0.1:${tlsProxies[0]!.port}`, ...natMap((n) => n.tlsPort!, tlsProxies).slice(1)],
  }, { maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  try {
    await announced(0, rogue);
    const [onFirst, onSecond] = [await keyOn(0), await keyOn(1)];
    // The primaries whose certificates name their hostnames answer; the one that does not is never written to.
    // The first write waits for the client to have connected: with no retries per request, a write queued
    // while a loaded machine's connect round failed was flushed with the round (MaxRetriesPerRequestError).
    await waitFor(() => client.set(onSecond, 'v').then((r) => r === 'OK', () => false), { timeoutMs: 10_000, intervalMs: 100, description: 'a write to primary 1' });
    await expect(client.set(onFirst, 'v')).rejects.toThrow();
    expect(await sendCommand(first.port, ['GET', onFirst])).toBeNull();

    // A certificate that names the address dialled (as one had to before the announced name counted) is taken.
    const dialled = makeCerts(fs.mkdtempSync(path.join(dir, 'dialled-')), { cn: 'proxy', san: 'IP:127.0.0.1', clientAuth: true, ca: tls.caFile });
    expect(await sendCommand(first.port, ['CONFIG', 'SET', 'tls-cert-file', dialled.cert, 'tls-key-file', dialled.key])).toBe('OK');
    await waitFor(() => client.set(onFirst, 'w').then((r) => r === 'OK', () => false), { timeoutMs: 10_000, intervalMs: 100, description: 'a write to primary 0' });
    expect(await sendCommand(first.port, ['GET', onFirst])).toBe('w');
  } finally {
    client.disconnect();
    expect(await sendCommand(first.port, ['CONFIG', 'SET', 'tls-cert-file', tls.certFile, 'tls-key-file', tls.keyFile])).toBe('OK');
    expect(await sendCommand(first.port, ['CONFIG', 'SET', 'cluster-announce-hostname', hostname(0)])).toBe('OK');
    await announced(0, hostname(0));
  }
}, 60_000);
