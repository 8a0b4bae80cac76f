/**
 * The outcome stream's trim (DESIGN §8: entries are trimmed only after every
 * registered group acked them) reads the stream's consumer groups first. A
 * read that fails is not "no group": taken for one, the trim fell back to
 * outcomes.retention and cut entries a group had been delivered and not acked
 * yet, so nobody could ever redeliver them. Here the read fails by a Redis
 * ACL that refuses XINFO to the trimming connection; a connection lost at
 * that moment fails it the same way.
 */
import { OutcomeStore } from '../../src/store/outcomes';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'trimerr');
const P = 2;
const DAY = 86_400_000;
let limited: RedisClient | undefined;
afterEach(() => limited?.disconnect());

it('trims nothing when the consumer groups cannot be read, and keeps what a group holds unacked', async () => {
  const key = fx.keys.out(P);
  // 300 outcomes with ids 1-0 … 300-0 (ms timestamps far older than the retention).
  const pipeline = fx.client.pipeline();
  for (let i = 1; i <= 300; i++) pipeline.xadd(key, `${i}-0`, 'taskId', `t${i}`, 'o', 'x');
  await pipeline.exec();
  await fx.client.xgroup('CREATE', key, 'engine', '0');
  // A consumer of the group is handed all 300 and has acked none of them yet.
  const read = (await fx.client.xreadgroup('GROUP', 'engine', 'c1', 'COUNT', 300, 'STREAMS', key, '>')) as [string, unknown[]][];
  expect(read[0]![1]).toHaveLength(300);

  expect(await redis.command('ACL', 'SETUSER', 'no-xinfo', 'on', '>no-xinfo-secret', '~*', '&*', '+@all', '-xinfo')).toBe('OK');
  limited = createRedis({ url: `redis://no-xinfo:no-xinfo-secret@127.0.0.1:${redis.port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  const outcomes = new OutcomeStore(limited, fx.keys, 8);

  const trim = await outcomes.trim(P, 10 * DAY, 1000).then(() => 'done', (err: Error) => err.message);
  expect(await fx.client.xlen(key)).toBe(300);
  // The trim fails (the node logs it and tries again at its next round) instead of trimming.
  expect(trim).toMatch(/NOPERM/);
  // Every unacked entry is still there to redeliver.
  const claimed = (await fx.client.xautoclaim(key, 'engine', 'c2', 0, '0-0', 'COUNT', 300)) as [string, [string, string[]][]];
  expect(claimed[1]).toHaveLength(300);
});
