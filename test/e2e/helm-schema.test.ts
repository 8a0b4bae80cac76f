/**
 * values.schema.json refuses at install what would otherwise fail later: a
 * key the chart does not know in any of its sections (a typo that would be
 * dropped silently), and for every node config key a value the node itself
 * refuses at startup (pods crash-looping instead of a failed install). helm
 * reports every schema error at once, so one render checks them all.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ConfigError, loadConfig } from '../../src/config';
import { schema } from '../../src/config/schema';
import { useChart } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const chart = useChart();

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-helm-schema-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function valuesFile(values: unknown): string {
  const f = path.join(tmp, `v${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(f, YAML.stringify(values));
  return f;
}

/** The chart's value sections with a fixed set of keys (free-form maps such as podAnnotations take any). */
const CHART_SECTIONS = [
  'image', 'serviceAccount', 'config', 'redis', 'auth', 'tls', 'preStop', 'service', 'metricsService', 'probes',
  'podDisruptionBudget', 'networkPolicy', 'autoscaling', 'serviceMonitor', 'prometheusRule', 'grafanaDashboard',
];
/** The node's sections that the chart takes under `config` (redis, auth and tls have their own top-level sections). */
const CONFIG_SECTIONS = Object.keys(schema).filter((s) => !['redis', 'auth', 'tls'].includes(s));
/** Set per pod from env by the chart, never from values. */
const CHART_OWNED = new Set(['internal.advertise', 'cluster.nodeId']);

it('refuses an unknown key at the top and in every section, naming where', () => {
  const values: Record<string, any> = { zdUnknown: 1 };
  for (const s of CHART_SECTIONS) values[s] = { zdUnknown: 1 };
  values.config = { zdUnknown: 1, ...Object.fromEntries(CONFIG_SECTIONS.map((s) => [s, { zdUnknown: 1 }])) };
  const r = chart.render([...BASE, '-f', valuesFile(values)]);
  expect(r.ok).toBe(false);
  const where = [
    '', ...CHART_SECTIONS.map((s) => `/${s}`), ...CONFIG_SECTIONS.map((s) => `/config/${s}`),
  ].filter((at) => !r.stderr.includes(`at '${at}': additional properties 'zdUnknown' not allowed`));
  expect(where).toEqual([]);
});

/** For each node config key the chart takes, values of the right YAML kind that the node refuses. */
function refusedValues(format: unknown): unknown[] {
  if (Array.isArray(format)) return ['loud'];
  switch (format) {
    case 'duration': return ['soon', -1];
    case 'positive-int': return [0, 1.5];
    case 'listen-address': return ['nowhere'];
    case 'number': case Number: return ['two'];
    default: throw new Error(`no refused value for format ${String(format)}`);
  }
}

const keys = CONFIG_SECTIONS.flatMap((s) => Object.entries(schema[s as keyof typeof schema])
  .filter(([k]) => !CHART_OWNED.has(`${s}.${k}`))
  .map(([k, d]) => ({ section: s, key: k, values: refusedValues((d as { format: unknown }).format) })));

it('the node refuses each of those values at startup (so the chart refusing them loses nothing)', () => {
  const accepted: string[] = [];
  for (const { section, key, values } of keys) {
    for (const v of values) {
      const file = path.join(tmp, 'node.yaml');
      fs.writeFileSync(file, YAML.stringify({ [section]: { [key]: v } }));
      try {
        loadConfig({ file, env: {}, args: [] });
        accepted.push(`${section}.${key}=${JSON.stringify(v)}`);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
      }
    }
  }
  expect(accepted).toEqual([]);
});

it.each([0, 1])('refuses at install, naming each key, every node config key set to a value the node refuses (#%i)', (i) => {
  const config: Record<string, Record<string, unknown>> = {};
  const set = keys.filter((k) => k.values.length > i);
  for (const { section, key, values } of set) (config[section] ??= {})[key] = values[i];
  const r = chart.render([...BASE, '-f', valuesFile({ config })]);
  expect(r.ok).toBe(false);
  const unnamed = set.map(({ section, key }) => `/config/${section}/${key}`).filter((at) => !r.stderr.includes(`at '${at}'`));
  expect(unnamed).toEqual([]);
});
