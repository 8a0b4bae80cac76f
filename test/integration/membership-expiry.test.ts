/**
 * A member is live while its score is younger than nodeTtl (DESIGN §3): a
 * node reads a peer's death when that peer's score turns nodeTtl old, not at
 * its own next heartbeat, which may come up to cluster.heartbeat later. A read
 * of the members that does not find this node itself live says nothing of
 * which task layout every member reads: until its next heartbeat, it writes the
 * oldest.
 */
import { Membership } from '../../src/cluster/membership';
import { OLDEST_TASK_LAYOUT, TASK_LAYOUT } from '../../src/store/layout';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let client: RedisClient;
const started: Membership[] = [];
afterEach(() => {
  for (const m of started.splice(0)) m.stop();
  client?.disconnect();
});

it("reads a peer's death when its score turns nodeTtl old, though its own next heartbeat is far off", async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('expiry'));
  // Two seconds: the death's read is bounded below twice nodeTtl with room for a loaded machine.
  const nodeTtlMs = 2000;
  const member = (nodeId: string, heartbeatMs: number) => {
    const m = new Membership(client, keys, { nodeId, bootId: 'b1', address: `${nodeId}:1`, heartbeatMs, nodeTtlMs }, systemClock, silentLogger);
    started.push(m);
    return m;
  };
  const peer = member('n1', 100);
  await peer.start();
  // This node beats once a minute: only the check armed for the peer's score reads its death.
  const self = member('n2', 60_000);
  await self.start();
  expect(self.liveIds()).toEqual(['n1', 'n2']);
  const changes: string[][] = [];
  self.on('change', (ids: string[]) => void changes.push([...ids]));

  peer.stop(); // dies: no leave, its entry stays until its score is nodeTtl old
  const stoppedAt = Date.now();
  // This node's own score must outlive the peer's last: the peer may have beaten since this
  // node's start, and a read that finds neither live would say nothing of the peer alone. A
  // beat of the peer's already on the wire lands after the stop, and each member dates its
  // score by its own reading of Redis's TIME, off by up to half a round trip: a beat of this
  // node's at once could date its score at or before the peer's last (on a loaded machine it
  // did, and the check's read found neither live). So it beats halfway to the peer's expiry,
  // which leaves the check half a nodeTtl to fire late by.
  await sleep(nodeTtlMs / 2);
  await self.beat();
  const scoreOf = async (id: string) => Number(await client.zscore(keys.members(), id));
  expect(await scoreOf('n2')).toBeGreaterThan((await scoreOf('n1')) + 100);
  await waitFor(() => changes.length > 0, { timeoutMs: 3 * nodeTtlMs, intervalMs: 10, description: 'n1 read as gone' });
  expect(changes).toEqual([['n2']]);
  // Its last score is at most a heartbeat older than the stop: read within nodeTtl of it, with room
  // for a loaded machine, and short of twice nodeTtl, where a check armed a nodeTtl late would land.
  expect(Date.now() - stoppedAt).toBeLessThan(nodeTtlMs + 1500);
  expect(await self.isGone('n1', 'b1')).toBe(true);
});

it('writes the oldest task layout after a read of the members that does not find itself live', async () => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const keys = new Keys(uniquePrefix('expiry-layout'));
  const nodeTtlMs = 500;
  const peer = new Membership(client, keys, { nodeId: 'n1', bootId: 'b1', address: 'n1:1', heartbeatMs: 100, nodeTtlMs }, systemClock, silentLogger);
  started.push(peer);
  await peer.start();
  // Its next heartbeat is a minute away: its own score turns nodeTtl old long before.
  const self = new Membership(client, keys, { nodeId: 'n2', bootId: 'b1', address: 'n2:1', heartbeatMs: 60_000, nodeTtlMs }, systemClock, silentLogger);
  started.push(self);
  await self.start();
  expect(self.taskLayout()).toBe(TASK_LAYOUT);
  await sleep(400); // the peer beats on: its last score is younger than this node's
  peer.stop();
  // The check armed for the peer's score reads the members: neither node is live there.
  await waitFor(() => self.liveIds().length === 0, { timeoutMs: 5000, intervalMs: 10, description: 'no member live' });
  expect(self.taskLayout()).toBe(OLDEST_TASK_LAYOUT);
});
