/**
 * What ListOutcomeGroups and DropOutcomeGroup know of a group comes from
 * XINFO GROUPS / CONSUMERS on each partition's stream. A read that fails is
 * not "no consumers": taken for one, a group read a moment ago looked idle,
 * and DropOutcomeGroup without `force` dropped it, its unacked outcomes with
 * it. Such a read fails the call instead. Here the reads fail by a Redis ACL
 * that refuses XINFO to the connection; a connection lost then fails the same way.
 */
import { describeOutcomeGroups } from '../../src/store/outcome-groups';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'groupserr');
let limited: RedisClient | undefined;
afterEach(() => limited?.disconnect());

async function limitedClient(user: string, denied: string): Promise<RedisClient> {
  expect(await redis.command('ACL', 'SETUSER', user, 'on', `>${user}-secret`, '~*', '&*', '+@all', `-${denied}`)).toBe('OK');
  return createRedis({ url: `redis://${user}:${user}-secret@127.0.0.1:${redis.port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
}

it('fails, rather than describing a group a consumer read just now as one nobody reads, when XINFO fails', async () => {
  const key = fx.keys.out(1);
  await fx.client.xadd(key, '*', 'taskId', 't1', 'o', 'x');
  await fx.client.xgroup('CREATE', key, 'engine', '0');
  await fx.client.xreadgroup('GROUP', 'engine', 'c1', 'COUNT', 1, 'STREAMS', key, '>');
  // What a reader that can read says: one consumer, idle for a moment.
  const seen = (await describeOutcomeGroups(fx.client, fx.keys, 4)).find((g) => g.name === 'engine');
  expect([seen?.consumers, seen!.idleMs! < 60_000]).toEqual([1, true]);

  for (const denied of ['xinfo|consumers', 'xinfo|groups']) {
    limited = await limitedClient(`no-${denied.replace('|', '-')}`, denied);
    const described = await describeOutcomeGroups(limited, fx.keys, 4).then((g) => JSON.stringify(g), (err: Error) => err.message);
    expect(described).toMatch(/NOPERM/);
    limited.disconnect();
  }
});
