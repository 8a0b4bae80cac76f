/**
 * Switches and numbers are read strictly, from env, flags and the file alike:
 * convict's own Boolean took any text but "false" as true (ZD_REDIS_TLS=0 or
 * YAML `tls: off` turned TLS on), and its Number read "1.5x" as 1.5 and let
 * "abc" through as NaN, which every check (`< 1`) compares false with. And a
 * limits.maxWait of 0, which ended every RPC without its own timeout at once;
 * and counts, which convict cut to a whole number ("1.5" replicas read as 1).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

it.each([
  ['ZD_REDIS_TLS', '0', 'redis.tls'], ['ZD_REDIS_TLS', 'off', 'redis.tls'], ['ZD_TLS_ENABLED', 'no', 'tls.enabled'],
  ['ZD_AUTH_ENABLED', '1', 'auth.enabled'], ['ZD_AUTH_ENABLED', '', 'auth.enabled'],
])('%s=%j is refused naming %s, not taken as true', (env, value, key) => {
  expect(refusal(() => loadConfig({ env: { [env]: value } }))).toMatch(new RegExp(`${key.replace('.', '\\.')}.*must be true or false`));
});

it('a YAML switch that is no boolean (`tls: off` reads as text) is refused naming the key', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'zd-config-')), 'config.yaml');
  fs.writeFileSync(file, 'redis:\n  tls: off\n');
  expect(refusal(() => loadConfig({ env: {}, file }))).toMatch(/redis\.tls.*must be true or false/);
});

it.each([['true', true], ['false', false], ['TRUE', true], [' false ', false]])('takes %j as %s', (value, want) => {
  expect(loadConfig({ env: { ZD_REDIS_TLS: value } }).redis.tls).toBe(want);
  expect(loadConfig({ env: {}, args: [`--redis.tls=${value}`] }).redis.tls).toBe(want);
});

it.each(['abc', '1.5x', '', 'NaN', 'Infinity', '0x2', '0b10'])('steps.backoffCoefficient %j is refused naming the key', (value) => {
  expect(refusal(() => loadConfig({ env: { ZD_STEPS_BACKOFF_COEFFICIENT: value } }))).toMatch(/steps\.backoffCoefficient.*must be a number/);
});

it.each([['1.5', 1.5], ['2', 2], ['3e0', 3]])('steps.backoffCoefficient %j is %d', (value, want) => {
  expect(loadConfig({ env: { ZD_STEPS_BACKOFF_COEFFICIENT: value } }).steps.backoffCoefficient).toBe(want);
});

it('limits.maxWait of 0 is refused naming the key: every RPC without its own timeout would end at once', () => {
  expect(refusal(() => loadConfig({ env: { ZD_LIMITS_MAX_WAIT: '0' } }))).toMatch(/limits\.maxWait: must be greater than 0/);
});

it.each(['1.5', '-1', 'two', ''])('redis.waitReplicas %j is refused naming the key, not cut to a whole number', (value) => {
  expect(refusal(() => loadConfig({ env: { ZD_REDIS_WAIT_REPLICAS: value } }))).toMatch(/redis\.waitReplicas.*must be a whole number of 0 or more/);
});

it.each(['5x', '0x10', '1e3'])('matching.maxStreams %j is refused naming the key, not read as its leading digits', (value) => {
  expect(refusal(() => loadConfig({ env: { ZD_MATCHING_MAX_STREAMS: value } }))).toMatch(/matching\.maxStreams.*must be a positive integer/);
  expect(refusal(() => loadConfig({ env: {}, args: [`--matching.maxStreams=${value}`] }))).toMatch(/matching\.maxStreams.*must be a positive integer/);
});

it('redis.waitReplicas takes a whole number', () => {
  expect(loadConfig({ env: { ZD_REDIS_WAIT_REPLICAS: '2' } }).redis.waitReplicas).toBe(2);
  expect(loadConfig({ env: {}, args: ['--redis.waitReplicas=1'] }).redis.waitReplicas).toBe(1);
});

it.each(['app{x}', 'zd{', 'a}b'])('refuses a redis.keyPrefix with a brace (%s): it would put every partition in one Redis Cluster slot', (prefix) => {
  expect(refusal(() => loadConfig({ env: { ZD_REDIS_KEY_PREFIX: prefix } }))).toMatch(/redis\.keyPrefix: .*must not contain \{ or \}/);
});

it('takes a redis.keyPrefix without braces', () => {
  expect(loadConfig({ env: { ZD_REDIS_KEY_PREFIX: 'tenant-a:zd' } }).redis.keyPrefix).toBe('tenant-a:zd');
});

it.each([
  ['matching:\n  maxStreams: 1.5\n', /matching\.maxStreams.*must be a positive integer/],
  ['redis:\n  waitReplicas: 1.5\n', /redis\.waitReplicas.*must be a whole number of 0 or more/],
  ['steps:\n  backoffCoefficient: .nan\n', /steps\.backoffCoefficient.*must be a number/],
  ['steps:\n  backoffCoefficient: .inf\n', /steps\.backoffCoefficient.*must be a number/],
  ['redis:\n  clusterNodes: [7000]\n', /redis\.clusterNodes.*must be a list of strings/],
  // The second line would win unsaid, whichever of the two the operator meant.
  ['matching:\n  stickyWait: 1s\n  stickyWait: 2s\n', /^config file: .*unique/],
])('a YAML value the env could not give is refused as strictly: %j', (text, reason) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'zd-config-')), 'config.yaml');
  fs.writeFileSync(file, text);
  expect(refusal(() => loadConfig({ env: {}, file }))).toMatch(reason);
});
