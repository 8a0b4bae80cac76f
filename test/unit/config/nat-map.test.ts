/**
 * redis.natMap is checked at boot, naming the key: a pair ioredis cannot read
 * would never match an announced address, and the node would dial the
 * unreachable one with no word of why.
 */
import { loadConfig } from '../../../src/config';
import { parseNatMap } from '../../../src/config/nat-map';
import { configRefusal as refusal } from '../../helpers/config-refusal';

const CLUSTER = { ZD_REDIS_CLUSTER_NODES: '127.0.0.1:17000' };

it.each([
  ['no =', '10.0.0.1:6379'],
  ['two =', '10.0.0.1:6379=127.0.0.1:7000=x'],
  ['an empty reachable side', '10.0.0.1:6379='],
  ['an empty announced side', '=127.0.0.1:7000'],
  ['an announced address without its port', '10.0.0.1=127.0.0.1:7000'],
  ['a reachable address without its port', '10.0.0.1:6379=127.0.0.1'],
  ['a port that is no number', '10.0.0.1:6379=127.0.0.1:http'],
  ['port 0', '10.0.0.1:0=127.0.0.1:7000'],
  ['port 65536', '10.0.0.1:6379=127.0.0.1:65536'],
  ['an announced address mapped twice', '10.0.0.1:6379=127.0.0.1:7000,10.0.0.1:6379=127.0.0.1:7001'],
  ['an IPv6 announced address mapped twice', '[::1]:6379=127.0.0.1:7000,[::1]:6379 = 127.0.0.1:7001'],
])('an entry with %s is refused naming redis.natMap', (_what, value) => {
  expect(refusal({ ...CLUSTER, ZD_REDIS_NAT_MAP: value })).toMatch(/^config redis\.natMap: /);
});

it('is refused with a single Redis (redis.url): nothing announces an address there', () => {
  expect(refusal({ ZD_REDIS_URL: 'redis://127.0.0.1:6379', ZD_REDIS_NAT_MAP: '10.0.0.1:6379=127.0.0.1:7000' }))
    .toMatch(/^config redis\.natMap: is set, but .*neither is set/);
  expect(refusal({ ZD_REDIS_NAT_MAP: '10.0.0.1:6379=127.0.0.1:7000' })).toMatch(/^config redis\.natMap: /);
});

it('takes pairs with a Cluster or with Sentinels, from env or flags', () => {
  const env = { ...CLUSTER, ZD_REDIS_NAT_MAP: '10.0.0.1:6379=127.0.0.1:7000, redis-1.internal:6379 = proxy.example.com:7001,[fd00::2]:6379=[::1]:7002' };
  const c = loadConfig({ env });
  expect(c.redis.natMap).toEqual(['10.0.0.1:6379=127.0.0.1:7000', 'redis-1.internal:6379 = proxy.example.com:7001', '[fd00::2]:6379=[::1]:7002']);
  // Keyed as ioredis looks an announced address up: "host:port", an IPv6 host without its brackets.
  expect(parseNatMap(c.redis.natMap)).toEqual({
    '10.0.0.1:6379': { host: '127.0.0.1', port: 7000 },
    'redis-1.internal:6379': { host: 'proxy.example.com', port: 7001 },
    'fd00::2:6379': { host: '::1', port: 7002 },
  });
  expect(loadConfig({ env: { ZD_REDIS_SENTINELS: '127.0.0.1:26379' }, args: ['--redis.natMap=10.0.0.5:6379=127.0.0.1:7005'] }).redis.natMap)
    .toEqual(['10.0.0.5:6379=127.0.0.1:7005']);
  expect(loadConfig({ env: {} }).redis.natMap).toEqual([]);
});

it('takes the hostnames a Cluster in Kubernetes announces, each on the same port, as distinct servers', () => {
  const map = ['redis-0.redis.zd.svc.cluster.local:6379=10.0.0.7:30001', 'redis-1.redis.zd.svc.cluster.local:6379=10.0.0.7:30002'];
  expect(loadConfig({ env: { ...CLUSTER, ZD_REDIS_NAT_MAP: map.join(',') } }).redis.natMap).toEqual(map);
  expect(parseNatMap(map)).toEqual({
    'redis-0.redis.zd.svc.cluster.local:6379': { host: '10.0.0.7', port: 30001 },
    'redis-1.redis.zd.svc.cluster.local:6379': { host: '10.0.0.7', port: 30002 },
  });
});
