/**
 * Whether the node instance (id + boot) that started an attempt is gone, as an
 * owner's sweep asks before failing the attempt as worker_lost (DESIGN §3, §6):
 * a node that left the members (a graceful stop removes its entry at once) is
 * gone without waiting nodeTtl, and so is an earlier boot of a node id that
 * restarted within nodeTtl, though the id's score is fresh: the new boot's
 * heartbeat must not keep the old boot's attempts running for ever. A restart
 * under the same id is a change of the members, heard at the next read. Real
 * redis-server.
 */
import { Membership } from '../../src/cluster/membership';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { systemClock } from '../../src/util/clock';
import { silentLogger } from '../../src/util/logger';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let client: RedisClient;
const members: Membership[] = [];
afterEach(() => {
  for (const m of members.splice(0)) m.stop();
  client?.disconnect();
});

function member(keys: Keys, nodeId: string, bootId: string): Membership {
  const m = new Membership(client, keys, { nodeId, bootId, address: `${nodeId}:1`, heartbeatMs: 60_000, nodeTtlMs: 60_000 }, systemClock, silentLogger);
  members.push(m);
  return m;
}

beforeEach(() => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
});

it('takes a node that left the members for gone at once, long before nodeTtl', async () => {
  const keys = new Keys(uniquePrefix('gone-left'));
  const self = member(keys, 'n2', 'b1');
  const peer = member(keys, 'n1', 'b1');
  await peer.beat();
  await self.beat();
  expect(await self.isGone('n1', 'b1')).toBe(false);

  await peer.leave();
  await self.beat();
  expect(self.liveIds()).toEqual(['n2']);
  expect(await self.isGone('n1', 'b1')).toBe(true);
  // Never a member at all: gone too.
  expect(await self.isGone('n9', 'b1')).toBe(true);
});

it('takes the earlier boot of a node id restarted within nodeTtl for gone, and the new boot for live', async () => {
  const keys = new Keys(uniquePrefix('gone-reboot'));
  const self = member(keys, 'n2', 'b1');
  await member(keys, 'n1', 'boot-old').beat();
  await self.beat();
  expect(await self.isGone('n1', 'boot-old')).toBe(false);

  // The process restarts under its id: the new boot heartbeats, the old one never again.
  await member(keys, 'n1', 'boot-new').beat();
  await self.beat();
  expect(await self.isGone('n1', 'boot-old')).toBe(true);
  expect(await self.isGone('n1', 'boot-new')).toBe(false);
});

it('hears a node id restarted under a new boot as a change of the members', async () => {
  const keys = new Keys(uniquePrefix('gone-change'));
  const self = member(keys, 'n2', 'b1');
  await member(keys, 'n1', 'boot-old').beat();
  await self.beat();
  const changes: (readonly string[])[] = [];
  self.on('change', (ids: readonly string[]) => changes.push(ids));

  await self.beat();
  expect(changes).toEqual([]); // the same members: no change
  await member(keys, 'n1', 'boot-new').beat();
  await self.beat();
  expect(changes).toEqual([['n1', 'n2']]);
  expect(self.get('n1')?.bootId).toBe('boot-new');
});
