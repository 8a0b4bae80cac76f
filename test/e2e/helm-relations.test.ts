/**
 * Values the node refuses at startup because of a relation between keys
 * (src/config/load.ts checkRelations: a stickyWait over dispatchWait, a zero
 * syncMatchWait, a fetch default over its ceiling, an HTTP request timeout
 * that would cut long polls, ...) are refused by the chart at render time,
 * naming the key, so `helm install` / `helm upgrade` fails instead of leaving
 * every new pod in CrashLoopBackOff. Each value set goes both to the pinned
 * helm and to zdmatch's own config loader, and the two must agree: the
 * values just inside each bound render and boot.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ConfigError, loadConfig, parseDuration } from '../../src/config';
import { schema } from '../../src/config/schema';
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const POD_ENV = { ZD_CLUSTER_NODE_ID: 'zdmatch-0', ZD_INTERNAL_ADVERTISE: '10.0.0.7:8803', ZD_REDIS_URL: 'redis://redis:6379' };

type Values = { config?: Record<string, Record<string, unknown>>; auth?: Record<string, unknown> };

/** [label, values, the key the node names when it refuses them (null: it boots)] */
const CASES: [string, Values, string | null][] = [
  ['stickyWait over dispatchWait', { config: { matching: { stickyWait: '11s' } } }, 'matching.stickyWait'],
  ['stickyWait equal to dispatchWait', { config: { matching: { stickyWait: '10s' } } }, null],
  ['a zero syncMatchWait', { config: { matching: { syncMatchWait: 0 } } }, 'matching.syncMatchWait'],
  ['a zero dispatchWait', { config: { matching: { dispatchWait: '0s', stickyWait: '0s' } } }, 'matching.dispatchWait'],
  ['a zero pingInterval', { config: { matching: { pingInterval: 0 } } }, 'matching.pingInterval'],
  ['a zero headsResyncInterval (disables the resync)', { config: { matching: { headsResyncInterval: 0 } } }, null],
  ['a zero heartbeat', { config: { cluster: { heartbeat: 0 } } }, 'cluster.heartbeat'],
  ['nodeTtl not longer than heartbeat', { config: { cluster: { nodeTtl: '2s' } } }, 'cluster.nodeTtl'],
  ['nodeTtl just longer than heartbeat', { config: { cluster: { nodeTtl: 2001 } } }, null],
  ['a leaseTtl under 3 ms', { config: { cluster: { leaseTtl: 2 } } }, 'cluster.leaseTtl'],
  ['a zero fetch.lockDuration', { config: { fetch: { lockDuration: 0 } } }, 'fetch.lockDuration'],
  ['a zero fetch.maxLockDuration', { config: { fetch: { maxLockDuration: '0s' } } }, 'fetch.maxLockDuration'],
  ['fetch.lockDuration over its ceiling', { config: { fetch: { lockDuration: '11m' } } }, 'fetch.lockDuration'],
  ['fetch.lockDuration at its ceiling', { config: { fetch: { lockDuration: '10m' } } }, null],
  ['a zero fetch.wait', { config: { fetch: { wait: 0 } } }, 'fetch.wait'],
  ['fetch.wait over its ceiling', { config: { fetch: { wait: '61s' } } }, 'fetch.wait'],
  ['fetch.maxTasks over its ceiling', { config: { fetch: { maxTasks: 101 } } }, 'fetch.maxTasks'],
  ['fetch.maxTasks at its ceiling', { config: { fetch: { maxTasks: 100 } } }, null],
  ['a backoffCoefficient under 1', { config: { steps: { backoffCoefficient: 0.5 } } }, 'steps.backoffCoefficient'],
  ['a backoffCoefficient of 1.5', { config: { steps: { backoffCoefficient: 1.5 } } }, null],
  ['a zero initialInterval', { config: { steps: { initialInterval: 0 } } }, 'steps.initialInterval'],
  ['maxInterval under initialInterval', { config: { steps: { maxInterval: '500ms' } } }, 'steps.maxInterval'],
  ['maxInterval equal to initialInterval', { config: { steps: { maxInterval: '1s' } } }, null],
  ['an outcome retention under 1 s', { config: { outcomes: { retention: '999ms' } } }, 'outcomes.retention'],
  ['an outcome retention of 1 s', { config: { outcomes: { retention: '1s' } } }, null],
  ['a zero redeliverAfter', { config: { outcomes: { redeliverAfter: 0 } } }, 'outcomes.redeliverAfter'],
  ['a zero limits.maxWait', { config: { limits: { maxWait: 0 } } }, 'limits.maxWait'],
  ['a limits.maxWait of 1 ms', { config: { limits: { maxWait: 1 } } }, null],
  ['a zero auth.reloadInterval', { auth: { reloadInterval: 0 } }, 'auth.reloadInterval'],
  ['an HTTP request timeout that would cut long polls', { config: { limits: { httpRequestTimeout: '60s' } } }, 'limits.httpRequestTimeout'],
  ['an HTTP request timeout just over fetch.maxWait', { config: { limits: { httpRequestTimeout: '61s' } } }, null],
  ['a zero httpHeadersTimeout', { config: { limits: { httpHeadersTimeout: 0 } } }, 'limits.httpHeadersTimeout'],
  ['httpHeadersTimeout over httpRequestTimeout', { config: { limits: { httpHeadersTimeout: '91s' } } }, 'limits.httpHeadersTimeout'],
  ['httpHeadersTimeout equal to httpRequestTimeout', { config: { limits: { httpHeadersTimeout: '90s' } } }, null],
  ['a zero httpKeepAliveTimeout', { config: { limits: { httpKeepAliveTimeout: 0 } } }, 'limits.httpKeepAliveTimeout'],
];

const chart = useChart();
let dir: string;
let defaults: Record<string, Record<string, unknown>>;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-helm-relations-'));
  const r = chart.render(BASE);
  if (!r.ok) throw new Error(`helm template ${BASE.join(' ')} failed: ${r.stderr}`);
  defaults = YAML.parse(configYaml(r.objs));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function configYaml(objs: K8sObject[]): string {
  return objs.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'])!.data['config.yaml'];
}

let seq = 0;
function write(name: string, data: unknown): string {
  const file = path.join(dir, `${name}-${++seq}.yaml`);
  fs.writeFileSync(file, YAML.stringify(data));
  return file;
}

/** The key the node names when it refuses `file` (null: it loads). */
function nodeRefuses(file: string): string | null {
  try {
    loadConfig({ file, env: POD_ENV, args: [] });
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.key;
    throw err;
  }
}

/** The chart's default config.yaml with `values` applied, as a node config file. */
function nodeConfig(values: Values): string {
  const c = structuredClone(defaults);
  for (const [section, keys] of Object.entries({ ...values.config, ...(values.auth ? { auth: values.auth } : {}) })) {
    Object.assign(c[section]!, keys);
  }
  return write('node', c);
}

/** The chart renders `values` exactly when the node boots on them: a render the node would refuse fails naming `refusedKey`. */
function expectChartAgrees(values: Values, refusedKey: string | null): void {
  const r = chart.render([...BASE, '-f', write('values', values)]);
  if (refusedKey === null) {
    expect(r.stderr).toBe('');
    expect(r.ok).toBe(true);
    expect(nodeRefuses(write('rendered', YAML.parse(configYaml(r.objs))))).toBeNull();
  } else {
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(refusedKey);
  }
}

it.each(CASES)('the chart and the node agree on %s', (_label, values, refusedKey) => {
  expect(nodeRefuses(nodeConfig(values))).toBe(refusedKey); // the case says what the node does
  expectChartAgrees(values, refusedKey);
});

it('refuses a redis.keyPrefix with a brace at render time, as the node refuses it at startup', () => {
  const refused = chart.render([...BASE, '-f', write('values', { redis: { keyPrefix: 'app{x}' } })]);
  expect(refused.ok).toBe(false);
  expect(refused.stderr).toMatch(/redis[./]keyPrefix/);
  const taken = chart.render([...BASE, '-f', write('values', { redis: { keyPrefix: 'tenant-a:zd' } })]);
  expect(taken.stderr).toBe('');
  expect(YAML.parse(configYaml(taken.objs)).redis.keyPrefix).toBe('tenant-a:zd');
});

/** Every key of the node's schema whose format is duration, as "section.name". */
function durationKeys(): string[] {
  const out: string[] = [];
  for (const [section, keys] of Object.entries(schema as Record<string, Record<string, { format?: unknown }>>)) {
    for (const [name, spec] of Object.entries(keys)) if (spec && spec.format === 'duration') out.push(`${section}.${name}`);
  }
  return out;
}

/** Values setting one duration key (config.* or auth.*); drain.timeout gets the grace period it needs. */
function setDuration(key: string, value: string): Values & { terminationGracePeriodSeconds?: number } {
  const [section, name] = key.split('.') as [string, string];
  if (section === 'auth') return { auth: { [name]: value } };
  const grace = section === 'drain' ? { terminationGracePeriodSeconds: Math.ceil((parseDuration(value) || 0) / 1000) + 100 } : {};
  return { config: { [section]: { [name]: value } }, ...grace };
}

describe('durations the node refuses fail the render, naming the key', () => {
  const keys = durationKeys();
  it('knows every duration key of the schema', () => {
    expect(keys).toEqual(expect.arrayContaining(['matching.headsResyncInterval', 'auth.reloadInterval', 'drain.timeout', 'outcomes.retention']));
    expect(keys.length).toBeGreaterThanOrEqual(20);
  });

  // "0.5ms" is no whole number of milliseconds; 25 days is past what a Node timer holds (2^31-1 ms),
  // which the node refuses for the durations it arms a timer with and takes for the rest
  // (outcomes.retention is a Redis TTL); "2.01s" is taken by both (ms() once read it as 2009.9999999999998).
  it.each(durationKeys().flatMap((key) => ['0.5ms', '25d', '2.01s'].map((value) => [key, value] as const)))(
    'the chart and the node agree on %s: %s',
    (key, value) => {
      const values = setDuration(key, value);
      const refusedKey = nodeRefuses(nodeConfig(values));
      if (value === '0.5ms') expect(refusedKey).toBe(key);
      expectChartAgrees(values, refusedKey);
    },
  );
});
