/**
 * A node whose heartbeat comes back after about cluster.nodeTtl of silence (a
 * frozen process, Redis out of its reach) may have been taken for gone by its
 * peers meanwhile, and the attempts its slots run failed as worker_lost: it
 * says so ('returned'), so that the node sends those slots Cancel rather than
 * letting their workers run attempts that have ended. A heartbeat on time says
 * nothing. Real redis-server.
 */
import { Membership } from '../../src/cluster/membership';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let client: RedisClient;
afterEach(() => client?.disconnect());

it('says it returned when its heartbeat lands nodeTtl after the one before, and not for a heartbeat on time', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('returned'));
  const nodeTtlMs = 1000;
  const self = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 60_000, nodeTtlMs }, systemClock, silentLogger);
  let returned = 0;
  self.on('returned', () => returned++);
  try {
    await self.beat();
    await self.beat(); // well within nodeTtl of the first
    expect(returned).toBe(0);

    // Silent past nodeTtl: peers read the score as dead meanwhile.
    await sleep(nodeTtlMs + 100);
    await self.beat();
    expect(returned).toBe(1);
    await self.beat();
    expect(returned).toBe(1);
  } finally {
    self.stop();
  }
});

it('says it returned for a heartbeat that lands just short of nodeTtl after the one before: a peer may have read the old score a moment before', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('returned-edge'));
  const nodeTtlMs = 1000;
  // Within a heartbeat of nodeTtl counts: here from 800 ms on.
  const self = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 200, nodeTtlMs }, systemClock, silentLogger);
  let returned = 0;
  self.on('returned', () => returned++);
  try {
    await self.beat();
    await sleep(600);
    await self.beat();
    expect(returned).toBe(0);
    await sleep(900);
    await self.beat();
    expect(returned).toBe(1);
  } finally {
    self.stop();
  }
});
