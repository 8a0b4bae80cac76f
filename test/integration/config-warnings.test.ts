/**
 * Configs that boot but work against themselves are said at startup, as one
 * WARN each naming the keys: a busy-stream silence that healthy workers'
 * Pongs cannot beat, leases that outlive nodeTtl, and a redis.password that
 * a single Redis (redis.url) never gets.
 */
import { configWarnings, loadConfig } from '../../src/config';
import { ZdNode } from '../../src/node/node';
import { captureLogs } from '../helpers/logs';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();

const configOf = (over: Record<string, unknown>) => loadConfig({
  env: {},
  overrides: {
    'redis.url': redis.url, 'redis.keyPrefix': uniquePrefix('cfgwarn'), 'api.listen': '127.0.0.1:0', 'http.listen': '127.0.0.1:0',
    'metrics.listen': '127.0.0.1:0', 'internal.listen': '127.0.0.1:0', 'cluster.partitions': 4, 'auth.enabled': false, ...over,
  },
});

it('warns of nothing with the defaults', () => {
  expect(configWarnings(loadConfig({ env: {} }))).toEqual([]);
});

it.each([
  [{ 'matching.busyStreamSilence': '20s' }, 'matching.busyStreamSilence (20000ms)'],
  [{ 'matching.busyStreamSilence': '5s' }, 'matching.busyStreamSilence (5000ms)'],
  [{ 'cluster.leaseTtl': '15s', 'cluster.nodeTtl': '10s' }, 'cluster.leaseTtl (15000ms) is longer than cluster.nodeTtl (10000ms)'],
  [{ 'cluster.leaseTtl': '10001ms', 'cluster.nodeTtl': '10s' }, 'cluster.leaseTtl (10001ms) is longer than cluster.nodeTtl (10000ms)'],
  [{ 'redis.url': 'redis://redis:6379', 'redis.password': 'pw' }, 'redis.password is set but applies to redis.clusterNodes and redis.sentinels only'],
  [{ 'redis.url': 'redis://redis:6379', 'redis.username': 'zd' }, 'redis.username is set but applies to redis.clusterNodes and redis.sentinels only'],
])('warns of %j', (over, text) => {
  const warnings = configWarnings(loadConfig({ env: {}, overrides: over }));
  expect(warnings).toEqual([expect.stringContaining(text)]);
});

it('leaves a silence past the Pong interval, or off, leases as long as nodeTtl, a password where it applies alone, and credentials with no Redis named', () => {
  for (const over of [
    { 'matching.busyStreamSilence': '21s' }, { 'matching.busyStreamSilence': 0 }, { 'cluster.leaseTtl': '10s', 'cluster.nodeTtl': '10s' },
    { 'redis.url': 'redis://:pw@redis:6379' }, { 'redis.url': '', 'redis.sentinels': 'a:26379', 'redis.password': 'pw' },
    { 'redis.url': '', 'redis.clusterNodes': 'a:7000', 'redis.username': 'zd', 'redis.password': 'pw' },
    // No Redis named yet (a file that leaves it to ZD_REDIS_URL, or `zdmatch dev`): no url for them to miss.
    { 'redis.url': '', 'redis.username': 'zd' }, { 'redis.url': '', 'redis.password': 'pw' },
  ]) {
    expect(configWarnings(loadConfig({ env: {}, overrides: over }))).toEqual([]);
  }
});

it('logs each warning once at startup', async () => {
  const { logger, lines } = captureLogs<{ level: number; msg: string }>('info');
  const node = await ZdNode.start(configOf({ 'matching.busyStreamSilence': '10s', 'cluster.nodeTtl': '1s', 'cluster.leaseTtl': '2s', 'cluster.heartbeat': '200ms' }), {
    logger,
  });
  try {
    const warned = lines.filter((l) => l.level === 40 && /^(matching\.busyStreamSilence|cluster\.leaseTtl) /.test(l.msg)).map((l) => l.msg.split(' ')[0]);
    expect(warned.sort()).toEqual(['cluster.leaseTtl', 'matching.busyStreamSilence']);
  } finally {
    await node.close();
  }
});
