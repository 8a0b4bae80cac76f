import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ConfigError, loadConfig, parseDuration, type LoadOptions } from '../../src/config';

const noEnv: NodeJS.ProcessEnv = {};
const load = (opts: LoadOptions = {}) => loadConfig({ env: noEnv, ...opts });

/** The ConfigError of a config that must not boot. */
function failure(opts: LoadOptions): ConfigError {
  try {
    load(opts);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(opts)}`);
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-config-test-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
function yamlFile(text: string): string {
  const f = path.join(tmp, `c${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(f, text);
  return f;
}

describe('defaults', () => {
  it('has the published keys and defaults (DESIGN §9)', () => {
    const c = load();
    expect(c.api.listen).toBe('0.0.0.0:8801');
    expect(c.http.listen).toBe('0.0.0.0:8802');
    expect(c.metrics.listen).toBe('0.0.0.0:9464');
    expect(c.matching).toEqual({
      dispatchWait: 10000, stickyWait: 5000, syncMatchWait: 200, headsResyncInterval: 300000,
      maxConcurrentTasksCap: 256, maxStreams: 100000, unsupportedTypeCacheEntries: 10000,
      maxQueueLength: 256, maxFlowTypes: 256, maxFlowTypeLength: 256, pingInterval: 20000, busyStreamSilence: 60000,
    });
    expect(c.cluster).toMatchObject({ partitions: 64, heartbeat: 2000, nodeTtl: 10000, leaseTtl: 10000 });
    expect(c.redis.keyPrefix).toBe('zd');
  });

  it('has the fetch bounds, lock expiries and outcome retention docs/fetch.md and docs/operations.md give', () => {
    const c = load();
    expect(c.fetch).toEqual({
      lockDuration: 30_000, maxLockDuration: 600_000, wait: 20_000, maxWait: 60_000, maxTasks: 10, maxMaxTasks: 100, maxLockExpiries: 5,
    });
    expect(c.outcomes.retention).toBe(86_400_000);
  });

  it('has the auth defaults of docs/security.md', () => {
    // Auth is on unless set off, and a rotated tokens file is seen within 2 s without fs.watch.
    expect(load().auth).toMatchObject({ enabled: true, reloadInterval: 2000 });
  });
});

describe('durations', () => {
  it.each([
    ['200ms', 200],
    ['10s', 10000],
    ['1.5s', 1500],
    ['5m', 300000],
    ['2h', 7200000],
    ['1d', 86400000],
    ['24h', 86400000],
    ['1500', 1500],
    ['0', 0],
    [' 3s ', 3000],
    ['2 minutes', 120000],
    [750, 750],
    // decimals the floating-point product of ms() missed by a hair (2009.9999999999998)
    ['2.01s', 2010],
    ['4.35h', 15660000],
    ['0.7s', 700],
    ['.5s', 500],
    ['1.0005m', 60030],
  ])('parses %p as %p ms', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([['abc'], [''], ['-1s'], ['1.5ms'], ['0.5ms'], ['1.0005s'], ['1.5'], ['10 parsecs'], ['1e3ms'], ['5 s s'], ['100000000000000000000'], [-5], [1.5], [null], [true]])('rejects %p', (input) => {
    expect(parseDuration(input)).toBeNaN();
  });

  it.each([
    ['200ms', 200],
    ['10s', 10000],
    ['1m', 60000],
    ['250', 250],
  ])('reads %p from a flag, the env and a file alike', (text, ms) => {
    expect(load({ args: [`--matching.syncMatchWait=${text}`] }).matching.syncMatchWait).toBe(ms);
    expect(load({ env: { ZD_MATCHING_SYNC_MATCH_WAIT: text } }).matching.syncMatchWait).toBe(ms);
    expect(load({ file: yamlFile(`matching:\n  syncMatchWait: ${JSON.stringify(text)}\n`) }).matching.syncMatchWait).toBe(ms);
  });

  it('takes a bare YAML number as milliseconds', () => {
    expect(load({ file: yamlFile('matching:\n  syncMatchWait: 350\n') }).matching.syncMatchWait).toBe(350);
  });

  it('fails on a node id with a space or a control character, naming the key', () => {
    for (const id of ['node 1', 'node\x1e1', 'node\x7f1', 'x'.repeat(129)]) {
      const err = failure({ args: [`--cluster.nodeId=${id}`] });
      expect(err.key).toBe('cluster.nodeId');
      expect(err.message).toMatch(/^config cluster\.nodeId: must be at most 128 characters without spaces or control characters/);
    }
    expect(load({ args: ['--cluster.nodeId=gw-0.zdmatch:7'] }).cluster.nodeId).toBe('gw-0.zdmatch:7');
  });

  it('fails on an unparsable duration, naming the key', () => {
    const err = failure({ args: ['--matching.dispatchWait=soon'] });
    expect(err.key).toBe('matching.dispatchWait');
    expect(err.message).toMatch(/^config matching\.dispatchWait: must be a duration/);
  });
});

describe('sources', () => {
  it('reads --a.b=c flags', () => {
    const c = load({ args: ['--matching.stickyWait=2s', '--redis.keyPrefix=zz', '--cluster.partitions=16'] });
    expect(c.matching.stickyWait).toBe(2000);
    expect(c.redis.keyPrefix).toBe('zz');
    expect(c.cluster.partitions).toBe(16);
  });

  it('reads --a.b c flags (value as the next argument)', () => {
    expect(load({ args: ['--matching.stickyWait', '3s'] }).matching.stickyWait).toBe(3000);
  });

  // `zdmatch serve --redis.tls --log.level=debug`: a switch written alone is on, and the flag after it is no value of it.
  it('reads a flag written alone as true, not taking the next flag as its value', () => {
    const c = load({ args: ['--redis.tls', '--log.level=debug'] });
    expect([c.redis.tls, c.log.level]).toEqual([true, 'debug']);
    expect(load({ args: ['--log.level', 'warn', '--redis.tls'] })).toMatchObject({ redis: { tls: true }, log: { level: 'warn' } });
  });

  // A list variable that templating leaves empty or ends with a comma names no extra entry (which would fail as no host:port).
  it('reads an empty list variable as no entries, and skips empty entries', () => {
    expect(load({ env: { ZD_REDIS_CLUSTER_NODES: '' } }).redis.clusterNodes).toEqual([]);
    expect(load({ env: { ZD_REDIS_SENTINELS: 's1:26379,, s2:26379,' } }).redis.sentinels).toEqual(['s1:26379', 's2:26379']);
  });

  it('reads ZD_* env', () => {
    const c = load({ env: { ZD_MATCHING_STICKY_WAIT: '1s', ZD_API_LISTEN: '127.0.0.1:9000', ZD_REDIS_CLUSTER_NODES: 'a:1, b:2' } });
    expect(c.matching.stickyWait).toBe(1000);
    expect(c.api.listen).toBe('127.0.0.1:9000');
    expect(c.redis.clusterNodes).toEqual(['a:1', 'b:2']);
  });

  it('reads a YAML file', () => {
    const file = yamlFile(
      ['api: { listen: 127.0.0.1:7001 }', 'matching:', '  dispatchWait: 20s', '  stickyWait: 15s', 'redis:', '  clusterNodes: [h1:7000, h2:7000]', ''].join('\n'),
    );
    const c = load({ file });
    expect(c.api.listen).toBe('127.0.0.1:7001');
    expect(c.matching.dispatchWait).toBe(20000);
    expect(c.matching.stickyWait).toBe(15000);
    expect(c.redis.clusterNodes).toEqual(['h1:7000', 'h2:7000']);
  });

  it('accepts an empty file', () => {
    expect(load({ file: yamlFile('') }).matching.stickyWait).toBe(5000);
  });

  it('ranks flags over env over file over defaults', () => {
    const file = yamlFile('matching:\n  stickyWait: 3s\n  syncMatchWait: 300ms\n  pingInterval: 7s\n');
    const env = { ZD_MATCHING_STICKY_WAIT: '2s', ZD_MATCHING_SYNC_MATCH_WAIT: '250ms' };
    const c = load({ file, env, args: ['--matching.stickyWait=1s'] });
    expect(c.matching.stickyWait).toBe(1000); // flag
    expect(c.matching.syncMatchWait).toBe(250); // env
    expect(c.matching.pingInterval).toBe(7000); // file
    expect(c.matching.dispatchWait).toBe(10000); // default
  });

  it('lets overrides win over everything', () => {
    const c = load({ args: ['--redis.url=redis://a:1'], overrides: { 'redis.url': 'redis://b:2' } });
    expect(c.redis.url).toBe('redis://b:2');
  });
});

describe('contradictory or invalid configs fail with one line naming the key', () => {
  const cases: [string, LoadOptions, string][] = [
    ['stickyWait > dispatchWait', { args: ['--matching.stickyWait=11s'] }, 'matching.stickyWait'],
    ['stickyWait > a lowered dispatchWait', { args: ['--matching.dispatchWait=1s'] }, 'matching.stickyWait'],
    ['syncMatchWait 0', { args: ['--matching.syncMatchWait=0'] }, 'matching.syncMatchWait'],
    ['syncMatchWait 0ms', { env: { ZD_MATCHING_SYNC_MATCH_WAIT: '0ms' } }, 'matching.syncMatchWait'],
    ['fetch.lockDuration above its ceiling', { args: ['--fetch.lockDuration=11m'] }, 'fetch.lockDuration'],
    ['fetch.wait above its ceiling', { args: ['--fetch.wait=2m'] }, 'fetch.wait'],
    ['fetch.maxTasks above its ceiling', { args: ['--fetch.maxTasks=101'] }, 'fetch.maxTasks'],
    ['a lowered ceiling under the default', { args: ['--fetch.maxLockDuration=10s'] }, 'fetch.lockDuration'],
    ['fetch.lockDuration zero', { args: ['--fetch.lockDuration=0'] }, 'fetch.lockDuration'],
    ['fetch.wait zero', { args: ['--fetch.wait=0'] }, 'fetch.wait'],
    ['fetch.maxTasks zero', { args: ['--fetch.maxTasks=0'] }, 'fetch.maxTasks'],
    ['fetch.maxLockDuration zero', { args: ['--fetch.maxLockDuration=0', '--fetch.lockDuration=0'] }, 'fetch.lockDuration'],
    ['fetch.maxWait zero', { args: ['--fetch.maxWait=0', '--fetch.wait=0'] }, 'fetch.wait'],
    ['fetch.maxWait zero under the default wait (the ceiling is named, not the default)', { args: ['--fetch.maxWait=0'] }, 'fetch.maxWait'],
    ['a lowered fetch.maxWait under the default wait', { args: ['--fetch.maxWait=5s'] }, 'fetch.wait'],
    ['a lowered fetch.maxMaxTasks under the default maxTasks', { args: ['--fetch.maxMaxTasks=5'] }, 'fetch.maxTasks'],
    ['fetch.maxMaxTasks zero', { args: ['--fetch.maxMaxTasks=0'] }, 'fetch.maxMaxTasks'],
    ['fetch.maxLockExpiries zero', { args: ['--fetch.maxLockExpiries=0'] }, 'fetch.maxLockExpiries'],
    ['unknown key in a file', { file: '<bogus>' }, 'matching.bogus'],
    ['unknown section in a file', { file: '<section>' }, 'nosuch.x'],
    ['unknown flag', { args: ['--matching.stickyWiat=2s'] }, 'matching.stickyWiat'],
    ['bad listen address', { args: ['--api.listen=8801'] }, 'api.listen'],
    ['port out of range', { args: ['--metrics.listen=0.0.0.0:70000'] }, 'metrics.listen'],
    ['negative int', { args: ['--matching.maxStreams=-1'] }, 'matching.maxStreams'],
    ['bad log level', { args: ['--log.level=loud'] }, 'log.level'],
    ['two redis modes', { args: ['--redis.url=redis://x:1', '--redis.clusterNodes=a:1'] }, 'redis.url'],
    ['nodeTtl not above heartbeat', { args: ['--cluster.nodeTtl=2s'] }, 'cluster.nodeTtl'],
    ['tls without files', { args: ['--tls.enabled=true'] }, 'tls.enabled'],
    ['a tls.cert with TLS off', { args: ['--tls.cert=/etc/zdmatch/tls/tls.crt'] }, 'tls.cert'],
    ['a tls.key with TLS off', { env: { ZD_TLS_KEY: '/etc/zdmatch/tls/tls.key' } }, 'tls.key'],
    ['tls with an unreadable cert', { args: ['--tls.enabled=true', '--tls.cert=/nonexistent/cert.pem', '--tls.key=/nonexistent/key.pem'] }, 'tls.cert'],
    ['an HTTP request timeout within fetch.maxWait', { args: ['--limits.httpRequestTimeout=60s'] }, 'limits.httpRequestTimeout'],
    ['an HTTP headers timeout over the request timeout', { args: ['--limits.httpHeadersTimeout=100s'] }, 'limits.httpHeadersTimeout'],
    ['an HTTP keep-alive timeout of zero', { args: ['--limits.httpKeepAliveTimeout=0'] }, 'limits.httpKeepAliveTimeout'],
    ['auth.reloadInterval zero', { args: ['--auth.reloadInterval=0'] }, 'auth.reloadInterval'],
    ['outcomes.retention zero', { args: ['--outcomes.retention=0'] }, 'outcomes.retention'],
    ['outcomes.retention under a second', { args: ['--outcomes.retention=500ms'] }, 'outcomes.retention'],
    ['outcomes.redeliverAfter zero', { args: ['--outcomes.redeliverAfter=0'] }, 'outcomes.redeliverAfter'],
    ['steps.initialInterval zero', { args: ['--steps.initialInterval=0'] }, 'steps.initialInterval'],
    ['an advertised address without a port', { args: ['--internal.advertise=node-a'] }, 'internal.advertise'],
    ['an advertised address with a port past 65535', { args: ['--internal.advertise=node-a:70000'] }, 'internal.advertise'],
    ['steps.maxInterval under steps.initialInterval', { args: ['--steps.maxInterval=500ms'] }, 'steps.maxInterval'],
    // Zero or too little where the node arms a loop or a timer with it: each would spin, never dispatch, or never time out.
    ['matching.dispatchWait zero (stickyWait with it)', { args: ['--matching.dispatchWait=0', '--matching.stickyWait=0'] }, 'matching.dispatchWait'],
    ['matching.pingInterval zero', { args: ['--matching.pingInterval=0'] }, 'matching.pingInterval'],
    ['cluster.heartbeat zero', { args: ['--cluster.heartbeat=0'] }, 'cluster.heartbeat'],
    ['cluster.leaseTtl under 3ms (renewed every third of it)', { args: ['--cluster.leaseTtl=2ms'] }, 'cluster.leaseTtl'],
    ['steps.backoffCoefficient under 1 (backoffs would shrink)', { args: ['--steps.backoffCoefficient=0.5'] }, 'steps.backoffCoefficient'],
    ['an HTTP headers timeout of zero (no timeout at all)', { args: ['--limits.httpHeadersTimeout=0'] }, 'limits.httpHeadersTimeout'],
    // Addresses that only fail when dialled or bound, with an error naming no key.
    ['a listen port one past 65535', { args: ['--api.listen=0.0.0.0:65536'] }, 'api.listen'],
    ['an IPv6 listen host without brackets', { args: ['--http.listen=::1:8802'] }, 'http.listen'],
    ['an advertised address without a host', { args: ['--internal.advertise=:8803'] }, 'internal.advertise'],
    ['a Redis Cluster seed on port 0', { env: { ZD_REDIS_CLUSTER_NODES: 'a:0' } }, 'redis.clusterNodes'],
    ['a Redis Cluster seed on port 65536', { env: { ZD_REDIS_CLUSTER_NODES: 'a:65535,b:65536' } }, 'redis.clusterNodes'],
    ['a listen host with a space in it', { args: ['--metrics.listen=my host:9464'] }, 'metrics.listen'],
    ['tls on with a cert but no key', { args: ['--tls.enabled=true', `--tls.cert=${__filename}`] }, 'tls.enabled'],
    // One millisecond past each bound.
    ['stickyWait 1ms over dispatchWait', { args: ['--matching.stickyWait=10001ms'] }, 'matching.stickyWait'],
    ['steps.maxInterval 1ms under steps.initialInterval', { args: ['--steps.maxInterval=999ms'] }, 'steps.maxInterval'],
    ['outcomes.retention 1ms under a second', { args: ['--outcomes.retention=999ms'] }, 'outcomes.retention'],
  ];

  it.each(cases)('%s', (_name, opts, key) => {
    const resolved = { ...opts };
    if (opts.file === '<bogus>') resolved.file = yamlFile('matching:\n  bogus: 1\n');
    if (opts.file === '<section>') resolved.file = yamlFile('nosuch:\n  x: 1\n');
    const err = failure(resolved);
    expect(err.key).toBe(key);
    expect(err.message.startsWith(`config ${key}: `)).toBe(true);
    expect(err.message).not.toContain('\n');
  });

  it.each([
    ['fd00::1:8803', '[fd00::1]:8803'], ['::1:8803', '[::1]:8803'], ['[fd00::1]:8803', '[fd00::1]:8803'],
    ['10.0.0.7:8803', '10.0.0.7:8803'], ['node-a.peers:8803', 'node-a.peers:8803'], ['', ''],
  ])('advertises %j as peers dial it: %j', (given, dialled) => {
    expect(load({ env: { ZD_INTERNAL_ADVERTISE: given } }).internal.advertise).toBe(dialled);
  });

  it('a missing file fails naming the file', () => {
    const err = failure({ file: path.join(tmp, 'nope.yaml') });
    expect(err.message).toMatch(/^config file: cannot read .*nope\.yaml: ENOENT$/);
  });

  it('a YAML syntax error fails in one line naming the file and the line', () => {
    const file = yamlFile('matching: [unclosed\n');
    const err = failure({ file });
    expect(err.message.startsWith(`config file: ${file}: `)).toBe(true);
    expect(err.message).toMatch(/line 2/);
    expect(err.message).not.toContain('\n');
  });

  it.each([['a list', '- a\n- b\n', 'list'], ['a bare word', 'hello\n', 'string']])('a file of %s fails naming the file', (_name, text, what) => {
    const file = yamlFile(text);
    expect(failure({ file }).message).toBe(`config file: ${file}: must be a mapping of sections (such as matching:), not a ${what}`);
  });

  it('auth is on unless set off explicitly; a default (as `zdmatch dev` sets) loses to the file, env and flags', () => {
    expect(load({}).auth.enabled).toBe(true);
    expect(load({ defaults: { 'auth.enabled': false } }).auth.enabled).toBe(false);
    expect(load({ defaults: { 'auth.enabled': false }, args: ['--auth.enabled=true'] }).auth.enabled).toBe(true);
    expect(load({ defaults: { 'auth.enabled': false }, env: { ZD_AUTH_ENABLED: 'true' } }).auth.enabled).toBe(true);
    expect(load({ defaults: { 'auth.enabled': false }, file: yamlFile('auth:\n  enabled: true\n') }).auth.enabled).toBe(true);
  });

  it('stickyWait equal to dispatchWait is fine', () => {
    expect(load({ args: ['--matching.stickyWait=10s'] }).matching.stickyWait).toBe(10000);
  });

  it('an HTTP headers timeout equal to the request timeout is fine', () => {
    expect(load({ args: ['--limits.httpHeadersTimeout=90s'] }).limits.httpHeadersTimeout).toBe(90_000);
  });
});

it('takes a ZD_TLS_CA with TLS off: the CLI reads the same variable, and a shell may export it for both', () => {
  expect(loadConfig({ env: { ZD_TLS_CA: '/nonexistent/ca.pem' } }).tls).toMatchObject({ enabled: false, ca: '/nonexistent/ca.pem' });
});

describe('deploy/config/zdmatch.yaml', () => {
  it('is a valid config file that keeps the documented defaults', () => {
    const c = loadConfig({ file: path.join(__dirname, '..', '..', 'deploy', 'config', 'zdmatch.yaml'), env: {} });
    expect(c.redis.url).toBe('redis://127.0.0.1:6379');
    expect(c.matching).toMatchObject({ dispatchWait: 10_000, stickyWait: 5_000, syncMatchWait: 200, pingInterval: 20_000 });
    expect(c.cluster.partitions).toBe(64);
  });

  // The file is copied as a starting point: a value that drifts from the node's default
  // (a shorter heartbeat, another key prefix, auth off) changes a node nobody meant to change.
  it('gives every key its default, except the Redis URL and the token files it names', () => {
    const file = path.join(__dirname, '..', '..', 'deploy', 'config', 'zdmatch.yaml');
    const raw = YAML.parse(fs.readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
    const fromFile = load({ file }) as unknown as Record<string, Record<string, unknown>>;
    const defaults = load() as unknown as Record<string, Record<string, unknown>>;
    const named = new Set(['redis.url', 'auth.workerTokensFile', 'auth.clientTokensFile']);
    const keys = Object.entries(raw).flatMap(([section, values]) => Object.keys(values).map((key) => [section, key] as const));
    expect(keys.length).toBeGreaterThan(20);
    const drifted = keys
      .filter(([section, key]) => !named.has(`${section}.${key}`) && fromFile[section]![key] !== defaults[section]![key])
      .map(([section, key]) => `${section}.${key}: ${String(fromFile[section]![key])}, default ${String(defaults[section]![key])}`);
    expect(drifted).toEqual([]);
    expect(fromFile.auth).toMatchObject({ enabled: true, workerTokensFile: '/etc/zdmatch/tokens/workers.yaml', clientTokensFile: '/etc/zdmatch/tokens/clients.yaml' });
  });
});

describe('what the file and the bounds leave no room for', () => {
  // convict's strict check flattens a file's keys, so `matching.stickyWait:` at the top level
  // passed as declared while the value was read from the nested key: the line did nothing.
  it('refuses a dotted key at the top of a file, naming it and how to write it', () => {
    const err = failure({ file: yamlFile('matching.stickyWait: 20s\nlog:\n  level: debug\n') });
    expect(err.key).toBe('matching.stickyWait');
    expect(err.message).toMatch(/a dotted key is not read in a file; nest it \(matching: with stickyWait: under it\)/);
  });

  // `matching: 5` failed as "configuration param 'matching.dispatchWait' missing from config".
  it.each([['matching: 5\n', 'number'], ['fetch: [1, 2]\n', 'list'], ['log: debug\n', 'string']])('refuses a section that is no mapping: %j', (text, kind) => {
    const err = failure({ file: yamlFile(text) });
    expect(err.key).toBe(text.split(':')[0]);
    expect(err.message).toMatch(new RegExp(`must be a mapping of its keys, not a ${kind}`));
  });

  // Node's HTTP/2 threw on the first connection past 2^32 - 1, and the node died; the decline
  // LRU allocates its whole size at start (1e8 took 1.8 GB and 52 s; 2^32 crashed).
  it.each([
    ['limits.maxStreamsPerConnection', '4294967296', /more than 4294967295/],
    ['matching.unsupportedTypeCacheEntries', '1000001', /more than 1000000/],
  ])('refuses %s = %s', (key, value, message) => {
    const err = failure({ args: [`--${key}=${value}`] });
    expect(err.key).toBe(key);
    expect(err.message).toMatch(message);
  });

  // A number in a file skips the parsing a string gets: stickyWait: -1 and drain.timeout: -1 booted
  // (a drain that force-exits at once), while the chart's schema refused them.
  it.each(['-1', '1.5'])('refuses a duration that is %s milliseconds in a file, naming the key', (ms) => {
    for (const key of ['stickyWait', 'headsResyncInterval', 'busyStreamSilence']) {
      const err = failure({ file: yamlFile(`matching:\n  ${key}: ${ms}\n`) });
      expect(err.key).toBe(`matching.${key}`);
    }
    expect(failure({ file: yamlFile(`drain:\n  timeout: ${ms}\n`) }).key).toBe('drain.timeout');
  });

  it('takes a whole number of milliseconds in a file', () => {
    expect(load({ file: yamlFile('matching:\n  stickyWait: 0\n  busyStreamSilence: 1500\n') }).matching).toMatchObject({ stickyWait: 0, busyStreamSilence: 1500 });
  });

  it('takes the largest of each', () => {
    const c = load({ args: ['--limits.maxStreamsPerConnection=4294967295', '--matching.unsupportedTypeCacheEntries=1000000'] });
    expect([c.limits.maxStreamsPerConnection, c.matching.unsupportedTypeCacheEntries]).toEqual([4294967295, 1000000]);
  });
});
