/**
 * A rewritten redis.tlsCa reaches the servers redis.natMap maps: each mapped Redis
 * Cluster primary is dialled with TLS options of its own (the name it announces to
 * check), and those follow the CA file as the rest do. A real 3-primary Cluster over
 * TLS, each primary behind a TCP proxy (the address a node behind NAT reaches it at);
 * the primaries move to a certificate of a new CA, the CA file follows, and the
 * node's new connections through the proxies check against the new CA.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { makeCerts } from '../helpers/certs';
import { captureLogs } from '../helpers/logs';
import { completeOneStep, startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

let dir = '';
let cluster: RedisCluster | undefined;
let proxies: TcpProxy[] = [];
let t: TestNode | undefined;

afterAll(async () => {
  await t?.close();
  await Promise.all(proxies.map((p) => p.close()));
  await cluster?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const sub = (n: string): string => {
  fs.mkdirSync(path.join(dir, n), { recursive: true });
  return path.join(dir, n);
};

it('takes a rewritten redis.tlsCa for the primaries redis.natMap maps: new connections after Redis moved to a new CA succeed', async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-nat-ca-'));
  // Both certificates dial the cluster bus too (client use); the primaries trust both CAs on the bus, the node one at a time.
  const before = makeCerts(sub('before'), { cn: 'redis', san: 'IP:127.0.0.1', clientAuth: true });
  const after = makeCerts(sub('after'), { cn: 'redis', san: 'IP:127.0.0.1', clientAuth: true });
  const busCa = path.join(sub('bus'), 'ca.pem');
  fs.writeFileSync(busCa, Buffer.concat([fs.readFileSync(before.ca), fs.readFileSync(after.ca)]));
  const caFile = path.join(sub('node'), 'ca.pem');
  fs.copyFileSync(before.ca, caFile);
  cluster = await startRedisCluster({ masters: 3, tls: { certFile: before.cert, keyFile: before.key, caFile: busCa } });
  const nodes = cluster.nodes;
  proxies = await Promise.all(nodes.map((n) => tcpProxy(n.tlsPort!)));
  const logs = captureLogs<{ level: number; msg?: string }>();
  t = await startTestNode('', uniquePrefix('nat-ca'), {
    // The seed is a mapped server's reachable address: it, too, is dialled with that server's options.
    'redis.clusterNodes': [`127.0.0.1:${proxies[0]!.port}`], 'redis.tls': true, 'redis.tlsCa': caFile,
    'redis.natMap': nodes.map((n, i) => `127.0.0.1:${n.tlsPort!}=127.0.0.1:${proxies[i]!.port}`),
  }, { logger: logs.logger });
  await completeOneStep(t, 'before');

  // The primaries' certificates move to the new CA, and the CA file follows.
  for (const n of nodes) expect(await sendCommand(n.port, ['CONFIG', 'SET', 'tls-cert-file', after.cert, 'tls-key-file', after.key])).toBe('OK');
  fs.writeFileSync(caFile, fs.readFileSync(after.ca));
  await waitFor(() => logs.lines.some((l) => l.msg?.startsWith('redis.tlsCa reloaded')), { description: 'the node reads the new CA file' });

  // Every connection through the proxies is reset (a network reset): the node dials each primary anew.
  // Client ids grow: one above each primary's id now is a connection made after the reset.
  const lastIds = await Promise.all(nodes.map(async (n) => Number(await sendCommand(n.port, ['CLIENT', 'ID']))));
  const accepted = proxies.map((p) => p.accepted);
  for (const p of proxies) p.cut();
  await completeOneStep(t, 'after');
  // Each primary holds a connection of the node's made since, through its mapped address: checked against the new CA.
  const reconnected = async (i: number): Promise<boolean> => String(await sendCommand(nodes[i]!.port, ['CLIENT', 'LIST'])).split('\n')
    .some((l) => Number(/^id=(\d+) /.exec(l)?.[1]) > lastIds[i]! && / name=zdmatch /.test(l) && / laddr=\S+:(\d+) /.exec(l)?.[1] === String(nodes[i]!.tlsPort));
  await waitFor(async () => (await Promise.all(nodes.map((_, i) => reconnected(i)))).every(Boolean),
    { timeoutMs: 10_000, intervalMs: 100, description: 'a new connection of the node on every primary' });
  expect(proxies.map((p, i) => p.accepted > accepted[i]!)).toEqual([true, true, true]);
  expect(logs.lines.filter((l) => l.level >= 50)).toEqual([]);
}, 90_000);
