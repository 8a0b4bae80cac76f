/**
 * Where the node finds Redis is checked at boot, naming the key: ioredis took
 * "localhost:6379" or an http:// URL as something else (a socket path, the
 * default host) and failed later with an error about neither, and a Cluster
 * seed or Sentinel without its port was dialled at port NaN.
 */
import { loadConfig } from '../../../src/config';
import { configRefusal as refusal } from '../../helpers/config-refusal';

it.each(['localhost:6379', 'http://redis:6379', 'redis//redis:6379', 'redis://', 'redis:// redis:6379'])('redis.url %j is refused naming the key', (url) => {
  expect(refusal({ ZD_REDIS_URL: url })).toMatch(/redis\.url: must be redis:\/\//);
});

it.each(['redis://redis:6379', 'rediss://user:p%40ss@redis.example.com:6380/2', 'redis://127.0.0.1', 'redis://:secret@[::1]:6379/0'])('redis.url %j is taken', (url) => {
  expect(loadConfig({ env: { ZD_REDIS_URL: url } }).redis.url).toBe(url);
});

it.each([
  ['ZD_REDIS_CLUSTER_NODES', 'a:7000,localhost', 'redis.clusterNodes'],
  ['ZD_REDIS_CLUSTER_NODES', 'a:70000', 'redis.clusterNodes'],
  ['ZD_REDIS_SENTINELS', 's1:26379,s2', 'redis.sentinels'],
  ['ZD_REDIS_SENTINELS', 'http://s1:26379', 'redis.sentinels'],
])('%s=%j is refused naming %s', (env, value, key) => {
  expect(refusal({ [env]: value })).toMatch(new RegExp(`${key.replace('.', '\\.')}: .* must be host:port`));
});

it('takes host:port seeds, IPv6 bracketed', () => {
  expect(loadConfig({ env: { ZD_REDIS_CLUSTER_NODES: 'a:7000, b.example.com:7001,[::1]:7002' } }).redis.clusterNodes).toEqual(['a:7000', 'b.example.com:7001', '[::1]:7002']);
  expect(loadConfig({ env: { ZD_REDIS_SENTINELS: '10.0.0.1:26379' } }).redis.sentinels).toEqual(['10.0.0.1:26379']);
});

it.each(['redis://redis:6379/db0', 'redis://redis:6379/0/x'])('redis.url %j (a database that is no number) is refused naming the key', (url) => {
  expect(refusal({ ZD_REDIS_URL: url })).toMatch(/redis\.url: must be redis:\/\//);
});
