/**
 * TLS to Redis (redis.tls, redis.tlsCa), as managed Redis services require: a
 * single Redis at a rediss:// url, a Redis Cluster whose nodes tell TLS
 * clients their TLS ports, and a Sentinel that names a primary it reaches over
 * TLS. Each serves a Step end to end; the certificate is checked against
 * redis.tlsCa, and one the client cannot verify is refused. Real
 * redis-servers with certificates made by openssl in the test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config';
import {
  sendCommand, startEmbeddedRedis, startRedisCluster, type EmbeddedRedis, type EmbeddedRedisTls, type RedisCluster,
} from '../../src/store/embedded-redis';
import { partitionOf } from '../../src/store/keys';
import { createRedis } from '../../src/store/redis';
import { pb } from '../../src/wire';
import { makeCerts } from '../helpers/certs';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';
import { waitFor } from '../helpers/wait';

let dir = '';
let tls: EmbeddedRedisTls;
let single: EmbeddedRedis | undefined;
let cluster: RedisCluster | undefined;
let sentinelPrimary: EmbeddedRedis | undefined;
let sentinel: TestSentinel | undefined;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-redis-tls-'));
  // Cluster nodes dial each other's bus with the same certificate: client and server use.
  const c = makeCerts(dir, { cn: 'redis', san: 'IP:127.0.0.1', clientAuth: true });
  tls = { certFile: c.cert, keyFile: c.key, caFile: c.ca };
});

afterAll(async () => {
  sentinel?.stop();
  await Promise.all([single?.stop(), cluster?.stop(), sentinelPrimary?.stop()]);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A Step of flow `flowId` enqueued, served by a raw worker slot and completed; its outcome read back. */
async function serveStep(t: TestNode, flowId: string): Promise<void> {
  const s = openSlot(t.worker, registerFrame());
  try {
    await s.nextOf('registered');
    const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 's', step_execution_id: '1' } });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from(`over tls ${flowId}`) } });
    await s.nextOf('result_ack');
    const o = (await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 })).outcome!;
    expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
    expect(Buffer.from(o.output!).toString()).toBe(`over tls ${flowId}`);
  } finally {
    s.reset();
  }
}

describe('a single Redis', () => {
  beforeAll(async () => {
    single = await startEmbeddedRedis({ tls });
  });

  it('serves Steps at a rediss:// url, checking the certificate against redis.tlsCa', async () => {
    const t = await startTestNode(single!.tlsUrl!, uniquePrefix('tls'), { 'redis.tlsCa': tls.caFile });
    try {
      await serveStep(t, 'single');
    } finally {
      await t.close();
    }
  });

  it('refuses a certificate it cannot verify (no redis.tlsCa: the system CAs)', async () => {
    const client = createRedis({ url: single!.tlsUrl!, clusterNodes: [], sentinels: [], sentinelName: '', password: '' },
      { maxRetriesPerRequest: 0, retryStrategy: () => null });
    const errors: string[] = [];
    client.on('error', (err: Error) => errors.push(err.message));
    try {
      await expect(client.ping()).rejects.toThrow();
      expect(errors.join(' ')).toMatch(/self[- ]signed certificate|unable to (get local issuer|verify)/);
    } finally {
      client.disconnect();
    }
  });
});

it('takes a rewritten redis.tlsCa without a restart: a reconnect after Redis moved to a new CA succeeds', async () => {
  const sub = (n: string) => {
    fs.mkdirSync(path.join(dir, n), { recursive: true });
    return path.join(dir, n);
  };
  const before = makeCerts(sub('rotate-before'), { cn: 'redis', san: 'IP:127.0.0.1' });
  const after = makeCerts(sub('rotate-after'), { cn: 'redis', san: 'IP:127.0.0.1' });
  const caFile = path.join(sub('rotate-ca'), 'ca.pem');
  fs.copyFileSync(before.ca, caFile);
  const server = await startEmbeddedRedis({ tls: { certFile: before.cert, keyFile: before.key, caFile: before.ca } });
  const logs: { level: number; msg?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line) as { level: number; msg?: string });
      done();
    },
  });
  const t = await startTestNode(server.tlsUrl!, uniquePrefix('tls-ca'), { 'redis.tlsCa': caFile }, { logger: pino({ level: 'info' }, sink) });
  try {
    await serveStep(t, 'before');
    // Redis's certificate moves to a new CA, and the CA file follows.
    fs.writeFileSync(caFile, fs.readFileSync(after.ca));
    await waitFor(() => logs.some((l) => l.msg?.startsWith('redis.tlsCa reloaded')), { description: 'the node reads the new CA file' });
    expect(await sendCommand(server.port, ['CONFIG', 'SET', 'tls-cert-file', after.cert, 'tls-key-file', after.key])).toBe('OK');
    // Connections to Redis drop (a restart, a failover): the node reconnects, checking the new certificate.
    await sendCommand(server.port, ['CLIENT', 'KILL', 'TYPE', 'normal']);
    await serveStep(t, 'after');
    expect(logs.filter((l) => l.level >= 50)).toEqual([]);
  } finally {
    await t.close();
    await server.stop();
  }
});

it('refuses a redis.tlsCa without TLS to Redis, and one it cannot read, naming the key', () => {
  const load = (overrides: Record<string, unknown>) => () => loadConfig({ env: {}, overrides: { 'auth.enabled': false, ...overrides } });
  expect(load({ 'redis.url': 'redis://127.0.0.1:6379', 'redis.tlsCa': tls.caFile })).toThrow(ConfigError);
  expect(load({ 'redis.url': 'redis://127.0.0.1:6379', 'redis.tlsCa': tls.caFile }))
    .toThrow(/^config redis\.tlsCa: is set, but TLS to Redis is off: set redis\.tls, or give redis\.url as rediss:\/\//);
  expect(load({ 'redis.url': 'rediss://127.0.0.1:6379', 'redis.tlsCa': path.join(dir, 'missing.pem') }))
    .toThrow(/^config redis\.tlsCa: cannot read .*missing\.pem: ENOENT/);
  expect(load({ 'redis.clusterNodes': ['127.0.0.1:7000'], 'redis.tls': true, 'redis.tlsCa': tls.caFile })().redis)
    .toMatchObject({ tls: true, tlsCa: tls.caFile });
});

it('serves Steps on every primary of a Redis Cluster over TLS', async () => {
  cluster = await startRedisCluster({ masters: 3, tls });
  const t = await startTestNode('', uniquePrefix('tls-cluster'), {
    'redis.clusterNodes': [...cluster.tlsSeeds], 'redis.tls': true, 'redis.tlsCa': tls.caFile,
  });
  try {
    // Flows until each primary holds one's partition: the primary that answers a key of its tag (the others say MOVED).
    const primaries = new Set<number>();
    for (let i = 0; primaries.size < 3; i++) {
      const tag = t.node.keys.tag(partitionOf('acme', `f${i}`, t.config.cluster.partitions));
      const replies = await Promise.all(cluster.nodes.map((n) => sendCommand(n.port, ['GET', `${tag}probe`])));
      const owner = replies.findIndex((r) => !(r instanceof Error));
      if (primaries.has(owner)) continue;
      primaries.add(owner);
      await serveStep(t, `f${i}`);
    }
  } finally {
    await t.close();
  }
}, 60_000);

it('serves Steps through a Sentinel, both it and the primary it names reached over TLS', async () => {
  sentinelPrimary = await startEmbeddedRedis({ tls, args: ['--tls-replication', 'yes'] });
  sentinel = await startSentinel(sentinelPrimary.tlsPort!, { name: 'tlsmaster', downAfterMs: 5000, tls });
  const t = await startTestNode('', uniquePrefix('tls-sentinel'), {
    ...sentinel.nodeConfig, 'redis.tls': true, 'redis.tlsCa': tls.caFile,
  });
  try {
    await serveStep(t, 'sentinel');
  } finally {
    await t.close();
  }
}, 30_000);
