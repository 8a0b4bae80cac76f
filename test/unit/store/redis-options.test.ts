/**
 * The clients createRedis builds from the redis settings (store/redis.ts):
 * Sentinel and Cluster addresses read from "host:port" (an IPv6 host in
 * brackets), the credentials given to data nodes and Sentinels alike, and the
 * Cluster options that keep calls from waiting on a frozen or absent primary.
 * Nothing is dialled: Sentinel clients connect lazily, and the Cluster client
 * is ended before its first connect.
 */
import { Cluster, Redis } from 'ioredis';
import { createRedis, type RedisSettings } from '../../../src/store/redis';

const none: RedisSettings = { url: '', clusterNodes: [], sentinels: [], sentinelName: '', password: '' };

it('reads Sentinel addresses, an IPv6 host unbracketed, and gives the credentials to the Sentinels too', () => {
  const client = createRedis({
    ...none, sentinels: ['[::1]:26379', 'sentinel-b.example:26380', '10.0.0.3:26381'], sentinelName: 'zd-primary', username: 'zd', password: 's3cret',
  }, { lazyConnect: true }) as Redis;
  try {
    expect(client).toBeInstanceOf(Redis);
    expect(client.options.sentinels).toEqual([
      { host: '::1', port: 26379 }, { host: 'sentinel-b.example', port: 26380 }, { host: '10.0.0.3', port: 26381 },
    ]);
    expect(client.options).toMatchObject({
      name: 'zd-primary', username: 'zd', password: 's3cret', sentinelUsername: 'zd', sentinelPassword: 's3cret',
      failoverDetector: true, enableAutoPipelining: false, maxRetriesPerRequest: 3, connectionName: 'zdmatch',
    });
    // a primary demoted under the connection: dropped at the first READONLY, and at nothing else
    const reconnect = client.options.reconnectOnError!;
    expect(reconnect(new Error("READONLY You can't write against a read only replica."))).toBeTruthy();
    expect(reconnect(new Error('ERR unknown command'))).toBeFalsy();
  } finally {
    client.disconnect();
  }
});

it('reads Cluster seeds the same way and keeps calls off frozen or absent primaries', () => {
  const client = createRedis({ ...none, clusterNodes: ['[::1]:7000', 'redis-b.example:7001'], username: 'zd', password: 's3cret' }, { lazyConnect: true });
  try {
    expect(client).toBeInstanceOf(Cluster);
    const cluster = client as Cluster;
    expect((cluster as unknown as { startupNodes: unknown }).startupNodes).toEqual([
      { host: '::1', port: 7000 }, { host: 'redis-b.example', port: 7001 },
    ]);
    expect(cluster.options).toMatchObject({
      scaleReads: 'master', slotsRefreshInterval: 5000, retryDelayOnTryAgain: 100, maxRedirections: 64, enableAutoPipelining: false,
    });
    expect(cluster.options.redisOptions).toMatchObject({ username: 'zd', password: 's3cret', maxRetriesPerRequest: 3 });
    // no READONLY reconnect on a Cluster: a failover there answers MOVED
    expect(cluster.options.redisOptions?.reconnectOnError).toBeUndefined();
    // reconnects slow down, to at most 2 s apart
    const retry = cluster.options.clusterRetryStrategy!;
    expect(retry(1, new Error('x'))).toBe(102);
    expect(retry(5000, new Error('x'))).toBe(2000);
  } finally {
    client.disconnect();
  }
});

it('refuses settings that name no Redis at all', () => {
  expect(() => createRedis(none)).toThrow('redis.url is not set');
});
