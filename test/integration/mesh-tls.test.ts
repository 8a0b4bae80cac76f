/**
 * The peer mesh over mutual TLS when the node certificate names a DNS name
 * only (a cert-manager certificate for a Service, say) and peers advertise
 * an IP address, as pods do (docs/security.md "Deploying with TLS"). Dialled
 * by IP, the certificate fails hostname verification and no message crosses
 * the mesh; with tls.peerServerName set to a name the certificate carries,
 * every node verifies its peers against that name, and an InvokeRpc and a
 * Step are routed across the mesh. Two nodes in this process, a CA and a
 * certificate made by openssl in the test, a real redis-server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChannelCredentials } from '@grpc/grpc-js';
import { ClientError, Status } from 'nice-grpc';
import { ConfigError, loadConfig } from '../../src/config';
import { partitionOf } from '../../src/store/keys';
import { pb } from '../../src/wire';
import { makeCerts } from '../helpers/certs';
import { captureLogs } from '../helpers/logs';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

/** The only name the node certificate carries (no IP SAN). */
const CERT_NAME = 'zdmatch.zd.svc';

interface Certs { ca: string; cert: string; key: string }

let dir: string;
let certs: Certs;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-mesh-tls-'));
  // One certificate for every node, serving and dialling (mutual TLS on the mesh).
  certs = makeCerts(dir, { cn: CERT_NAME, san: `DNS:${CERT_NAME}`, clientAuth: true });
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

interface TlsNode extends TestNode {
  /** The node's log lines (debug and up), parsed. */
  logs: { msg?: string; err?: string }[];
}

async function startTlsNode(prefix: string, nodeId: string, extra: Record<string, unknown>): Promise<TlsNode> {
  const { logger, lines: logs } = captureLogs<{ msg?: string; err?: string }>('debug');
  const t = await startTestNode(redis.url, prefix, {
    'cluster.nodeId': nodeId, 'cluster.nodeTtl': '1500ms', 'matching.dispatchWait': '2s', 'matching.stickyWait': '1s',
    'tls.enabled': true, 'tls.cert': certs.cert, 'tls.key': certs.key, 'tls.ca': certs.ca,
    ...extra,
  }, {
    logger,
    // The test's own clients dial by IP too, and verify the node as the name its certificate carries.
    credentials: ChannelCredentials.createSsl(fs.readFileSync(certs.ca)),
    channelOptions: { 'grpc.ssl_target_name_override': CERT_NAME, 'grpc.default_authority': CERT_NAME },
  });
  return Object.assign(t, { logs });
}

/** Two TLS nodes on one Redis, each holding its half of the partitions. */
async function startPair(extra: Record<string, unknown>): Promise<[TlsNode, TlsNode]> {
  const prefix = uniquePrefix('mesh-tls');
  const pair = await Promise.all([startTlsNode(prefix, 'n-a', extra), startTlsNode(prefix, 'n-b', extra)]);
  const [a, b] = pair;
  const half = a.config.cluster.partitions / 2;
  await waitFor(() => a.node.leases.heldPartitions().length === half && b.node.leases.heldPartitions().length === half,
    { timeoutMs: 30_000, description: 'each node holds its half of the partitions' });
  return pair;
}

let nodes: TlsNode[] = [];
const slots: RawSlot[] = [];
afterEach(async () => {
  for (const s of slots.splice(0)) s.reset();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

async function slotAt(n: TlsNode, appWorkerId: string): Promise<RawSlot> {
  const s = openSlot(n.worker, registerFrame({ app_worker_id: appWorkerId }));
  slots.push(s);
  await s.nextOf('registered');
  return s;
}

/** A flow whose partition `owner` holds. */
function flowOwnedBy(owner: TlsNode, prefix: string): string {
  const partitions = owner.config.cluster.partitions;
  for (let i = 0; ; i++) if (owner.node.leases.holds(partitionOf('acme', `${prefix}${i}`, partitions)) !== undefined) return `${prefix}${i}`;
}

const ALTNAME_ERROR = /Hostname\/IP does not match certificate's altnames/;

it('without tls.peerServerName, peers dialled by IP fail hostname verification and nothing crosses the mesh', async () => {
  nodes = await startPair({});
  const [a, b] = nodes as [TlsNode, TlsNode];
  expect(a.node.internalAddress).toMatch(/^127\.0\.0\.1:\d+$/);
  const w = await slotAt(b, 'w-b');
  // b's capacity never reaches a: a does not learn of b's worker...
  await expect(waitFor(() => a.node.view.nodeOfWorker('acme', 'w-b'), { timeoutMs: 2000 })).rejects.toThrow();
  // ...so an InvokeRpc on a finds no worker, and b's worker never sees it.
  const err = (await a.matching.invokeRpc({
    tenant: 'acme', flow_id: 'r1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 1000,
  }).catch((e: unknown) => e)) as ClientError;
  expect(err).toBeInstanceOf(ClientError);
  expect([Status.NOT_FOUND, Status.UNAVAILABLE]).toContain(err.code);
  await expect(w.nextOf('rpc_task', 200)).rejects.toThrow(/no frame/);
  // The reason, as both nodes log it: the certificate names CERT_NAME, not 127.0.0.1.
  for (const n of [a, b]) {
    await waitFor(() => n.logs.some((l) => ALTNAME_ERROR.test(l.err ?? '')), { timeoutMs: 5000, description: `${n.node.nodeId} logs the hostname mismatch` });
  }
});

it('with tls.peerServerName, peers are verified against that name: an InvokeRpc and a Step cross the mesh', async () => {
  nodes = await startPair({ 'tls.peerServerName': CERT_NAME });
  const [a, b] = nodes as [TlsNode, TlsNode];
  expect(a.config.tls.peerServerName).toBe(CERT_NAME);
  expect(b.node.internalAddress).toMatch(/^127\.0\.0\.1:\d+$/);

  // An RPC called on a runs on b's worker.
  const w = await slotAt(b, 'w-b');
  await waitFor(() => a.node.view.nodeOfWorker('acme', 'w-b') !== undefined, { timeoutMs: 5000, description: 'a sees w-b' });
  const call = a.matching.invokeRpc({ tenant: 'acme', flow_id: 'r1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 3000 });
  const rpc = (await w.nextOf('rpc_task', 3000)).rpc_task!;
  w.send({ rpc_result: { task_token: rpc.task_token, output: Buffer.from('over tls') } });
  expect((await w.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  const r = await call;
  expect(Buffer.from(r.output!).toString()).toBe('over tls');
  expect(r.app_worker_id).toBe('w-b');

  // A Step of a partition a owns: a offers it to b's idle worker over the mesh.
  const flowId = flowOwnedBy(a, 'tls');
  const e = await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'charge', step_execution_id: 's1' } });
  const step = (await w.nextOf('step_task', 5000)).step_task!;
  expect(step).toMatchObject({ task_id: e.task_id, attempt: 1 });
  w.send({ step_result: { task_token: step.task_token, output: Buffer.from('charged') } });
  expect((await w.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  const outcome = (await a.matching.waitOutcome({ task_id: e.task_id, wait_ms: 5000 })).outcome!;
  expect(outcome.status).toBe(pb.OutcomeStatus.COMPLETED);
  expect(Buffer.from(outcome.output!).toString()).toBe('charged');

  expect([...a.logs, ...b.logs].filter((l) => ALTNAME_ERROR.test(l.err ?? ''))).toEqual([]);
});

it('refuses a tls.peerServerName that is not a host name, naming the key', () => {
  // A DNS name's bounds: no label starts or ends with a hyphen, a label is at most 63 characters, the name 253.
  const label63 = 'a'.repeat(63);
  const name253 = [label63, label63, label63, 'a'.repeat(61)].join('.');
  const refused = [
    'zdmatch.zd.svc:8803', '*.zdmatch-peers.zd.svc', 'https://zdmatch.zd.svc', 'two words',
    'zdmatch-.zd.svc', '-zdmatch.zd.svc', 'zdmatch.zd-.svc', `${'a'.repeat(64)}.svc`, `${name253}a`, `a${name253}`,
  ];
  for (const good of ['zd-match.zd.svc', `${label63}.svc`, name253, 'zdmatch.zd.svc.']) {
    expect(loadConfig({ env: { ZD_TLS_PEER_SERVER_NAME: good } }).tls.peerServerName).toBe(good);
  }
  for (const bad of refused) {
    let err: unknown;
    try {
      loadConfig({ env: { ZD_TLS_PEER_SERVER_NAME: bad } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).key).toBe('tls.peerServerName');
  }
  expect(loadConfig({ env: { ZD_TLS_PEER_SERVER_NAME: 'zdmatch-peers.zd.svc.cluster.local' } }).tls.peerServerName).toBe('zdmatch-peers.zd.svc.cluster.local');
});
