/**
 * A `--section.key=value` flag hands the node the value as written, as the
 * same value in its `ZD_*` variable does (README "Running a node": flags only
 * rank above env). A text that reads as a number stays that text: a Redis
 * password, a key prefix or a node id is no number.
 */
import { loadConfig, type Config } from '../../../src/config';

const cases: [string, string, string, (c: Config) => string][] = [
  ['redis.password', '1e3', 'ZD_REDIS_PASSWORD', (c) => c.redis.password],
  ['redis.password', '0x1f', 'ZD_REDIS_PASSWORD', (c) => c.redis.password],
  ['redis.password', '.5', 'ZD_REDIS_PASSWORD', (c) => c.redis.password],
  ['redis.password', '--looks-like-a-flag', 'ZD_REDIS_PASSWORD', (c) => c.redis.password],
  ['redis.keyPrefix', '2.0', 'ZD_REDIS_KEY_PREFIX', (c) => c.redis.keyPrefix],
  ['cluster.nodeId', '1e2', 'ZD_CLUSTER_NODE_ID', (c) => c.cluster.nodeId],
];

it.each(cases)('--%s=%s keeps the value as written, as its env variable does', (key, value, env, read) => {
  expect(read(loadConfig({ env: { [env]: value } }))).toBe(value);
  expect(read(loadConfig({ env: {}, args: [`--${key}=${value}`] }))).toBe(value);
});

it.each(cases.filter(([, v]) => !v.startsWith('--')))('--%s %s (the value as the next word) keeps it as written', (key, value, _env, read) => {
  expect(read(loadConfig({ env: {}, args: [`--${key}`, value] }))).toBe(value);
});
