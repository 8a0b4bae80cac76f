/**
 * Membership scores are read by every node against its own "now": a score
 * written by one node's clock and judged by another's moved each member's
 * liveness by the skew between the two. A node whose clock ran behind by
 * more than cluster.nodeTtl was dead to its peers while it heartbeat (they
 * failed its running attempts as a dead node's and targeted its partitions),
 * one whose clock ran ahead stayed live for the skew after it died, and
 * removed its peers' entries as long dead. Scores are Redis's time, so
 * liveness holds whatever the nodes' clocks say. Real redis-server.
 */
import { Membership } from '../../src/cluster/membership';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import type { Clock } from '../../src/util/clock';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
const NODE_TTL = 1000;
let client: RedisClient;
let keys: Keys;
const made: Membership[] = [];

beforeEach(() => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  keys = new Keys(uniquePrefix('skew-members'));
});
afterEach(() => {
  for (const m of made.splice(0)) m.stop();
  client.disconnect();
});

function member(nodeId: string, clock: Clock): Membership {
  // Beats by hand: heartbeatMs is never reached.
  const m = new Membership(client, keys, { nodeId, bootId: `boot-${nodeId}`, address: `${nodeId}:1`, heartbeatMs: 60_000, nodeTtlMs: NODE_TTL }, clock, silentLogger);
  made.push(m);
  return m;
}

const skewed = (ms: number): Clock => ({ now: () => Date.now() + ms });

it('a member whose clock runs behind by more than nodeTtl is live to its peers while it heartbeats', async () => {
  const late = member('n-late', skewed(-5 * NODE_TTL));
  const self = member('n-self', systemClock);
  await late.beat();
  await self.beat();
  expect(self.liveIds()).toEqual(['n-late', 'n-self']);
  expect(await self.isGone('n-late', 'boot-n-late')).toBe(false);
  await late.beat();
  expect(late.liveIds()).toEqual(['n-late', 'n-self']);
});

it("a member whose clock runs ahead leaves its peers' entries alone, and is dead nodeTtl after its last heartbeat", async () => {
  const self = member('n-self', systemClock);
  const ahead = member('n-ahead', skewed(10 * NODE_TTL));
  await self.beat();
  await ahead.beat();
  expect(await client.zscore(keys.members(), 'n-self')).not.toBeNull();
  expect(ahead.liveIds()).toEqual(['n-ahead', 'n-self']);

  ahead.stop(); // it dies: no more heartbeats
  await sleep(NODE_TTL + 300);
  await self.beat();
  expect(self.liveIds()).toEqual(['n-self']);
  expect(await self.isGone('n-ahead', 'boot-n-ahead')).toBe(true);
});
