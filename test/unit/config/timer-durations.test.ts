/**
 * Durations the node arms a timer with: Node's timers hold at most 2^31-1 ms
 * (about 24.8 days) and fire a longer one after 1 ms, so such a value fails at
 * startup naming the key rather than turning, say, a rare tokens-file check
 * into one every millisecond.
 */
import { ConfigError, loadConfig } from '../../../src/config';

function failure(overrides: Record<string, unknown>): ConfigError {
  try {
    loadConfig({ env: {}, overrides });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

it.each([
  'matching.dispatchWait', 'matching.stickyWait', 'matching.syncMatchWait', 'matching.headsResyncInterval', 'matching.pingInterval',
  'limits.maxWait', 'limits.httpKeepAliveTimeout', 'cluster.heartbeat', 'cluster.nodeTtl', 'cluster.leaseTtl',
  'fetch.wait', 'fetch.maxWait', 'auth.reloadInterval',
  // SIGTERM's forced-exit timer: at 25d it fired after 1 ms and the node exited without draining
  'drain.timeout',
])('%s of 30d fails naming the key', (key) => {
  // Room for every relation the key has, so the only fault is the timer's bound.
  const err = failure({
    'matching.dispatchWait': '24d', 'cluster.nodeTtl': '24d', 'fetch.maxWait': '24d', 'limits.httpRequestTimeout': '31d', [key]: '30d',
  });
  expect(err.key).toBe(key);
  expect(err.message).toBe(`config ${key}: 2592000000ms is longer than a timer holds (at most 2147483647ms, about 24.8 days)`);
});

it('takes the longest duration a timer holds, and longer ones where no timer holds them (outcomes.retention)', () => {
  const c = loadConfig({ env: {}, overrides: { 'auth.reloadInterval': 2 ** 31 - 1, 'outcomes.retention': '90d' } });
  expect(c.auth.reloadInterval).toBe(2 ** 31 - 1);
  expect(c.outcomes.retention).toBe(90 * 86_400_000);
  expect(failure({ 'auth.reloadInterval': 2 ** 31 }).key).toBe('auth.reloadInterval');
});

it('refuses more partitions than a Redis Cluster has hash slots, naming the key', () => {
  // A YAML 1e20 hung the boot; past six digits task and outcome ids no longer parse.
  for (const partitions of [16_385, 1e20]) {
    const err = failure({ 'cluster.partitions': partitions });
    expect(err.key).toBe('cluster.partitions');
    expect(err.message).toMatch(/is more than 16384, the hash slots of a Redis Cluster/);
  }
  expect(loadConfig({ env: {}, overrides: { 'cluster.partitions': 16_384 } }).cluster.partitions).toBe(16_384);
});

it('refuses a payload limit no client could receive, naming the key', () => {
  // At 6 MiB the node took a 5 MiB input that no SDK client could read back: the fetched
  // task stayed locked unseen, each fetch counting a lock expiry until it turned terminal.
  const err = failure({ 'limits.maxPayloadBytes': 6 * 1024 * 1024 });
  expect(err.key).toBe('limits.maxPayloadBytes');
  expect(err.message).toMatch(/is more than 3670016 \(3\.5 MiB\): a client receives at most 4 MiB in one gRPC message/);
  expect(loadConfig({ env: {}, overrides: { 'limits.maxPayloadBytes': 3.5 * 1024 * 1024 } }).limits.maxPayloadBytes).toBe(3_670_016);
  expect(failure({ 'limits.maxPayloadBytes': 3_670_017 }).key).toBe('limits.maxPayloadBytes');
});
