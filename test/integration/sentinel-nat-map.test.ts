/**
 * redis.natMap behind Sentinel: the primary a real Sentinel names is dialled at
 * the address the map gives for it (here a TCP proxy, standing for the address a
 * node behind NAT reaches it at), and the node loses Redis when that refuses.
 * Over TLS, the primary's certificate is checked against the hostname Sentinel
 * names it by, not the address dialled, and against redis.tlsCa as rewritten
 * since: the mapped primary's name to check is its own, the CA the client's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientError, Status } from 'nice-grpc';
import { sendCommand, startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { makeCerts } from '../helpers/certs';
import { captureLogs } from '../helpers/logs';
import { startTestNode, type TestNode, type TestNodeOptions } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let sentinel: TestSentinel | undefined;
let proxy: TcpProxy | undefined;
let t: TestNode | undefined;
afterAll(async () => {
  await t?.close();
  sentinel?.stop();
  await proxy?.close();
});

const step = (flow: string) => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 's', step_execution_id: '1' });

/** A scratch directory for certificates; `sub(name)` makes a folder in it. */
function scratch(prefix: string): { dir: string; sub: (name: string) => string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    dir,
    sub: (name) => {
      fs.mkdirSync(path.join(dir, name));
      return path.join(dir, name);
    },
  };
}

interface NatTlsSetup {
  primary: EmbeddedRedis;
  proxy: TcpProxy;
  node: TestNode;
}

/**
 * A TLS primary whose Sentinel names it `localhost`, a TCP proxy in front of it, and a node
 * that reaches it only through the proxy (redis.natMap), over TLS with `tls.nodeCa` as
 * redis.tlsCa. `run` gets them; they are stopped after, and `dir` removed.
 */
async function onTlsPrimaryBehindNat(
  dir: string,
  tls: { primary: { cert: string; key: string }; sentinel: { cert: string; key: string }; serverCa: string; nodeCa: string },
  prefix: string,
  run: (s: NatTlsSetup) => Promise<void>,
  opts: TestNodeOptions = {},
): Promise<void> {
  let primary: EmbeddedRedis | undefined;
  let tlsSentinel: TestSentinel | undefined;
  let tlsProxy: TcpProxy | undefined;
  let node: TestNode | undefined;
  try {
    primary = await startEmbeddedRedis({ tls: { certFile: tls.primary.cert, keyFile: tls.primary.key, caFile: tls.serverCa } });
    tlsSentinel = await startSentinel(primary.tlsPort!, {
      downAfterMs: 5000, primaryHost: 'localhost', tls: { certFile: tls.sentinel.cert, keyFile: tls.sentinel.key, caFile: tls.serverCa },
    });
    tlsProxy = await tcpProxy(primary.tlsPort!);
    node = await startTestNode('', uniquePrefix(prefix), {
      ...tlsSentinel.nodeConfig, 'redis.tls': true, 'redis.tlsCa': tls.nodeCa,
      'redis.natMap': [`localhost:${primary.tlsPort!}=127.0.0.1:${tlsProxy.port}`],
    }, opts);
    await run({ primary, proxy: tlsProxy, node });
  } finally {
    await node?.close();
    tlsSentinel?.stop();
    await tlsProxy?.close();
    await primary?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

it('dials the primary Sentinel names at the address redis.natMap maps it to', async () => {
  sentinel = await startSentinel(redis.port, { downAfterMs: 5000 });
  proxy = await tcpProxy(redis.port);
  t = await startTestNode('', uniquePrefix('sen-nat'), { ...sentinel.nodeConfig, 'redis.natMap': [`127.0.0.1:${redis.port}=127.0.0.1:${proxy.port}`] });
  expect((await t.matching.enqueueStep({ step: step('f1') })).created).toBe(true);
  expect(proxy.accepted).toBeGreaterThan(0);

  proxy.refuse();
  const err = await t.matching.enqueueStep({ step: step('f2') }, { signal: AbortSignal.timeout(20_000) }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.UNAVAILABLE);
  expect((err as ClientError).details).toMatch(/^ZD_STORE_UNAVAILABLE: /);
  proxy.resume();
}, 60_000);

it('over TLS, checks the certificate of the primary Sentinel names by hostname against that name, not the mapped address', async () => {
  const { dir, sub } = scratch('zd-sen-nat-tls-');
  // The primary's certificate names its hostname only; the Sentinel's, the address it is dialled at.
  const primaryCerts = makeCerts(sub('primary'), { cn: 'localhost', san: 'DNS:localhost', clientAuth: true });
  const sentinelCerts = makeCerts(sub('sentinel'), { cn: 'sentinel', san: 'IP:127.0.0.1', clientAuth: true, ca: primaryCerts.ca });
  const tls = { primary: primaryCerts, sentinel: sentinelCerts, serverCa: primaryCerts.ca, nodeCa: primaryCerts.ca };
  await onTlsPrimaryBehindNat(dir, tls, 'sen-nat-tls', async ({ proxy: tlsProxy, node }) => {
    expect((await node.matching.enqueueStep({ step: step('tls1') })).created).toBe(true);
    expect(tlsProxy.accepted).toBeGreaterThan(0);
  });
}, 60_000);

it('over TLS, takes a rewritten redis.tlsCa for the primary it dials at the mapped address: a new connection after the primary moved to a new CA succeeds', async () => {
  const { dir, sub } = scratch('zd-sen-nat-ca-');
  // The primary moves from one CA to another; the Sentinel's certificate is of a third, in the CA file throughout.
  const before = makeCerts(sub('before'), { cn: 'localhost', san: 'DNS:localhost' });
  const after = makeCerts(sub('after'), { cn: 'localhost', san: 'DNS:localhost' });
  const sentinelCerts = makeCerts(sub('sentinel'), { cn: 'sentinel', san: 'IP:127.0.0.1', clientAuth: true });
  const bundle = (...files: string[]) => Buffer.concat(files.map((f) => fs.readFileSync(f)));
  const serverCas = path.join(sub('server-cas'), 'ca.pem');
  fs.writeFileSync(serverCas, bundle(before.ca, after.ca, sentinelCerts.ca));
  const caFile = path.join(sub('node'), 'ca.pem');
  fs.writeFileSync(caFile, bundle(before.ca, sentinelCerts.ca));
  // The Sentinel reaches the primary over TLS whichever CA signed its certificate.
  const tls = { primary: before, sentinel: sentinelCerts, serverCa: serverCas, nodeCa: caFile };
  const logs = captureLogs<{ level: number; msg?: string }>();
  await onTlsPrimaryBehindNat(dir, tls, 'sen-nat-ca', async ({ primary, proxy: tlsProxy, node }) => {
    expect((await node.matching.enqueueStep({ step: step('ca1') })).created).toBe(true);

    // The primary's certificate moves to the new CA, and the CA file follows.
    expect(await sendCommand(primary.port, ['CONFIG', 'SET', 'tls-cert-file', after.cert, 'tls-key-file', after.key])).toBe('OK');
    fs.writeFileSync(caFile, bundle(after.ca, sentinelCerts.ca));
    await waitFor(() => logs.lines.some((l) => l.msg?.startsWith('redis.tlsCa reloaded')), { description: 'the node reads the new CA file' });

    // The connections through the mapped address are reset: the node dials the primary anew.
    const lastId = Number(await sendCommand(primary.port, ['CLIENT', 'ID']));
    const accepted = tlsProxy.accepted;
    tlsProxy.cut();
    expect((await node.matching.enqueueStep({ step: step('ca2') }, { signal: AbortSignal.timeout(15_000) })).created).toBe(true);
    expect(tlsProxy.accepted).toBeGreaterThan(accepted);
    const clients = String(await sendCommand(primary.port, ['CLIENT', 'LIST'])).split('\n');
    expect(clients.some((l) => Number(/^id=(\d+) /.exec(l)?.[1]) > lastId && / name=zdmatch /.test(l) &&
      / laddr=\S+:(\d+) /.exec(l)?.[1] === String(primary.tlsPort))).toBe(true);
    expect(logs.lines.filter((l) => l.level >= 50)).toEqual([]);
  }, { logger: logs.logger });
}, 60_000);
