/**
 * A node refuses to boot under a node id that another running node heartbeats
 * (cluster.nodeId set alike on two nodes): the two would fail each other's
 * running attempts as a dead boot's and serve the same leases. The boot that
 * left the id behind by crashing does not hold it up, beyond one heartbeat;
 * two that started at the same moment say so at ERROR while they share it.
 * Real nodes on a real redis-server.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { Membership } from '../../src/cluster/membership';
import { Keys } from '../../src/store/keys';
import { createRedis } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const started: TestNode[] = [];
afterEach(async () => {
  for (const t of started.splice(0)) await t.close();
});

async function start(prefix: string, nodeId: string, cluster: Record<string, string> = {}): Promise<TestNode> {
  const t = await startTestNode(redis.url, prefix, { 'cluster.nodeId': nodeId, ...cluster });
  started.push(t);
  return t;
}

it('refuses a second node with the id of a running one, naming the key, and leaves the running one a member', async () => {
  const prefix = uniquePrefix('twin');
  const keys = new Keys(prefix);
  // The second boot watches the id's score for a heartbeat and up to a second more: 400 ms
  // with the tests' 200-ms beat, which a stall of this process on a loaded machine outlasted,
  // and it booted. With a 1-s beat it watches 2 s, a second more than the next beat needs.
  const beat = { 'cluster.heartbeat': '1s', 'cluster.nodeTtl': '5s' };
  const first = await start(prefix, 'twin', beat);
  const boot = await redis.command('HGET', keys.node('twin'), 'boot');

  await expect(start(prefix, 'twin', beat)).rejects.toThrow(/^config cluster\.nodeId: twin is in use by another running node \(boot \S+\)/);
  // The refused boot wrote nothing under the id and, closing, did not take the running node's entry away.
  expect(await redis.command('HGET', keys.node('twin'), 'boot')).toBe(boot);
  expect(await redis.command('ZSCORE', keys.members(), 'twin')).not.toBeNull();
  expect(first.node.membership.liveIds()).toEqual(['twin']);
}, 15_000);

it('boots under the id of a crashed node whose last heartbeat is still within nodeTtl', async () => {
  const prefix = uniquePrefix('crashed');
  const keys = new Keys(prefix);
  // What a SIGKILLed boot leaves: a fresh score and its boot id, and no more heartbeats.
  await redis.command('ZADD', keys.members(), Date.now(), 'phoenix');
  await redis.command('HSET', keys.node('phoenix'), 'address', '127.0.0.1:1', 'boot', 'crashed-boot');
  const t = await start(prefix, 'phoenix');
  expect(await redis.command('HGET', keys.node('phoenix'), 'boot')).not.toBe('crashed-boot');
  expect(t.node.membership.liveIds()).toEqual(['phoenix']);
});

it('says so at ERROR while a second process that started at the same moment shares the id', async () => {
  const prefix = uniquePrefix('same-moment');
  const keys = new Keys(prefix);
  const lines: { level: number; msg: string; otherBoot?: string }[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  const client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const m = new Membership(client, keys, { nodeId: 'twin', bootId: 'boot-1', address: '127.0.0.1:1', heartbeatMs: 100, nodeTtlMs: 1000 }, systemClock, pino(sink));
  try {
    await m.start();
    await sleep(300);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    // The other process's heartbeat, between two of ours.
    await redis.command('HSET', keys.node('twin'), 'boot', 'boot-2');
    await waitFor(() => lines.some((l) => l.level === 50), { timeoutMs: 2000, description: 'the ERROR line' });
    expect(lines.find((l) => l.level === 50)).toMatchObject({ msg: expect.stringContaining('another running node heartbeats this node id'), otherBoot: 'boot-2' });
  } finally {
    m.stop();
    client.disconnect();
  }
});

it('does not wait to boot under the id of a node whose last heartbeat is older than nodeTtl', async () => {
  const keys = new Keys(uniquePrefix('long-gone'));
  const client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const nodeTtlMs = 1000;
  // A boot that stopped heartbeating two nodeTtl ago (by Redis's clock, as scores are).
  const [sec] = (await redis.command('TIME')) as string[];
  await redis.command('ZADD', keys.members(), Number(sec) * 1000 - 2 * nodeTtlMs, 'phoenix');
  await redis.command('HSET', keys.node('phoenix'), 'address', '127.0.0.1:1', 'boot', 'old-boot');
  const m = new Membership(client, keys, { nodeId: 'phoenix', bootId: 'new-boot', address: '127.0.0.1:2', heartbeatMs: 3000, nodeTtlMs }, systemClock, pino({ level: 'silent' }));
  try {
    const t0 = Date.now();
    await m.start();
    // Nothing to watch: a live boot would have beaten within nodeTtl. Watched, it took a heartbeat and a second more.
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(m.liveIds()).toEqual(['phoenix']);
  } finally {
    m.stop();
    client.disconnect();
  }
});
