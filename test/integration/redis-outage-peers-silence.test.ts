/**
 * When a node takes a peer for gone after Redis was out of its reach (DESIGN §11:
 * a live worker's attempt is not failed as worker_lost). A peer live when this
 * node lost Redis has nodeTtl from this node's first heartbeat back, however short
 * the loss was: peers come back from one Redis restart up to a reconnect backoff
 * apart. A node that only stalled while connected gives nothing of the kind.
 * Node n1 reaches a real redis-server through a TCP proxy that cuts its connection
 * and holds the next one; n2 is a peer that beats once and then stops.
 */
import { Membership } from '../../src/cluster/membership';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const clients: RedisClient[] = [];
const members: Membership[] = [];
const timers: NodeJS.Timeout[] = [];
let proxy: TcpProxy | undefined;

afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  for (const m of members.splice(0)) m.stop();
  for (const c of clients.splice(0)) c.disconnect();
  await proxy?.close();
  proxy = undefined;
});

const NODE_TTL = 4000;

/** n1 (through the proxy) and n2 (direct), heartbeating by hand; both have beaten once. */
async function pair(label: string, timing = { heartbeatMs: 500, nodeTtlMs: NODE_TTL }) {
  proxy = await tcpProxy(redis.port);
  const settings = { clusterNodes: [], sentinels: [], sentinelName: '', password: '' };
  const viaProxy = createRedis({ ...settings, url: `redis://127.0.0.1:${proxy.port}` });
  const direct = createRedis({ ...settings, url: redis.url });
  clients.push(viaProxy, direct);
  const keys = new Keys(uniquePrefix(label));
  const member = (client: RedisClient, nodeId: string) =>
    new Membership(client, keys, { nodeId, bootId: 'b1', address: `${nodeId}:1`, ...timing }, systemClock, silentLogger);
  const self = member(viaProxy, 'n1');
  const peer = member(direct, 'n2');
  members.push(self, peer);
  await self.beat();
  await peer.beat();
  const peerBeat = Date.now(); // its score is no later than this
  peer.stop();
  return { self, peerBeat };
}

/** The node's heartbeats from now on, every 250 ms (by hand: its own loop is never started). */
function heartbeats(m: Membership): void {
  timers.push(setInterval(() => void m.beat().catch(() => undefined), 250));
}

it('gives a peer that was live when this node lost Redis for less than nodeTtl nodeTtl from its return', async () => {
  const { self, peerBeat } = await pair('silence-short');
  // Redis out of n1's reach for 1.5 s: far short of nodeTtl less a heartbeat (3.5 s), so by time
  // alone this was no silence.
  proxy!.freeze();
  proxy!.cut();
  await sleep(1500);
  proxy!.resume();
  await self.beat();
  const back = Date.now();
  heartbeats(self);
  // Halfway between the peer's score turning nodeTtl old (the expiry read has dropped it by then)
  // and nodeTtl after n1's return: the peer may be on its way back from the same outage.
  await sleep((peerBeat + NODE_TTL + back + NODE_TTL) / 2 - Date.now());
  expect(self.liveIds()).toEqual(['n1']);
  expect(await self.isGone('n2', 'b1')).toBe(false);
  // Still silent nodeTtl after n1's return: gone.
  await sleep(back + NODE_TTL + 1000 - Date.now());
  expect(await self.isGone('n2', 'b1')).toBe(true);
}, 20_000);

it('takes no peer for gone on a read of the members held across the reconnect that lands before this node\'s heartbeat', async () => {
  const { self, peerBeat } = await pair('silence-held-read');
  await self.beat(); // n1's read of the members now checks again when n2's score turns nodeTtl old
  proxy!.freeze();
  proxy!.cut();
  // The expiry check's read is sent while Redis is away: the client holds it for the next connection.
  await sleep(peerBeat + NODE_TTL + 500 - Date.now());
  proxy!.resume();
  await waitFor(() => !self.liveIds().includes('n2'), { timeoutMs: 5000, description: 'the held read landed and dropped n2' });
  // n1 has not beaten since: its own silence is not marked by a heartbeat yet.
  expect(await self.isGone('n2', 'b1')).toBe(false);
  // Its heartbeat lands: the peer has nodeTtl from it, then is gone.
  await self.beat();
  const back = Date.now();
  heartbeats(self);
  await sleep(NODE_TTL / 2);
  expect(await self.isGone('n2', 'b1')).toBe(false);
  await sleep(back + NODE_TTL + 1000 - Date.now());
  expect(await self.isGone('n2', 'b1')).toBe(true);
}, 20_000);

it('gives a peer no more time when this node only stalled while connected to Redis', async () => {
  const { self, peerBeat } = await pair('silence-stall');
  // n1's heartbeats stop for over half of nodeTtl (a loaded machine), its connection open.
  await sleep(2500);
  await self.beat();
  const back = Date.now();
  heartbeats(self);
  // The peer is gone once its score is nodeTtl old, not nodeTtl after n1's late heartbeat.
  await sleep(peerBeat + NODE_TTL + 500 - Date.now());
  expect(Date.now()).toBeLessThan(back + NODE_TTL);
  expect(await self.isGone('n2', 'b1')).toBe(true);
}, 20_000);

describe('with nodeTtl under two heartbeats (2 s and 3.6 s)', () => {
  // A quarter of nodeTtl (900 ms) is the margin a beat on time has against a loaded machine.
  const timing = { heartbeatMs: 2000, nodeTtlMs: 3600 };

  it('opens no silence at a heartbeat on time: a dead peer is gone once its score is nodeTtl old', async () => {
    const { self, peerBeat } = await pair('silence-on-time', timing);
    // A beat on time comes a heartbeat after the last one started, plus that one's own calls.
    await sleep(2050);
    await self.beat();
    await sleep(peerBeat + timing.nodeTtlMs + 300 - Date.now());
    expect(await self.isGone('n2', 'b1')).toBe(true);
  }, 20_000);

  it('still opens one at a beat late by a quarter of nodeTtl (a frozen process): the peer has nodeTtl from it', async () => {
    const { self, peerBeat } = await pair('silence-late', timing);
    await sleep(timing.heartbeatMs + timing.nodeTtlMs / 4 + 100);
    await self.beat();
    const back = Date.now();
    await sleep(peerBeat + timing.nodeTtlMs + 300 - Date.now());
    expect(Date.now()).toBeLessThan(back + timing.nodeTtlMs);
    expect(await self.isGone('n2', 'b1')).toBe(false);
  }, 20_000);
});
