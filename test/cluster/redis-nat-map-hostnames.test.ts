/**
 * redis.natMap on a real 3-primary Redis Cluster that announces hostnames
 * (`cluster-announce-hostname`, `cluster-preferred-endpoint-type hostname`), as a
 * Cluster in Kubernetes does: the names (under .invalid, which no resolver knows)
 * are mapped to TCP proxies of each primary's plain and TLS port. The Cluster
 * serves TLS too, with a certificate that names only the announced hostnames, as
 * one made for the Cluster's own network does.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pb } from '../../src/wire';
import { sendCommand, startRedisCluster, type EmbeddedRedisTls, type RedisCluster } from '../../src/store/embedded-redis';
import { makeCerts } from '../helpers/certs';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
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

const step = (flow: string) => ({ tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's' });

/** Enqueues a Step of `flow`, has a worker complete it, and reads its outcome. */
async function runStep(node: TestNode, flow: string): Promise<void> {
  const s = openSlot(node.worker, registerFrame());
  try {
    await s.nextOf('registered');
    const r = await node.matching.enqueueStep({ step: step(flow) });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
    expect((await node.matching.waitOutcome({ task_id: r.task_id, wait_ms: 0 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
  } finally {
    s.reset();
  }
}

/** `announced-hostname:port=127.0.0.1:proxy-port` for each primary. */
function natMap(ports: (n: RedisCluster['nodes'][number]) => number, proxies: TcpProxy[]): string[] {
  return cluster!.nodes.map((n, i) => `${hostname(i)}:${ports(n)}=127.0.0.1:${proxies[i]!.port}`);
}

it('reaches every primary of a Cluster announcing hostnames through the address redis.natMap maps each hostname to', async () => {
  const before = plainProxies.map((p) => p.accepted);
  t = await startTestNode('', uniquePrefix('nat-host'), {
    'redis.clusterNodes': [...cluster!.seeds], 'redis.natMap': natMap((n) => n.port, plainProxies),
  });
  await runStep(t, 'h1');
  // The node's partitions have keys on all three primaries: each was dialled at its proxy, none at its hostname.
  expect(plainProxies.map((p, i) => p.accepted - before[i]!).every((n) => n > 0)).toBe(true);
}, 60_000);
