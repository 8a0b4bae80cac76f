/**
 * deploy/prometheus and deploy/grafana checked by Debian's promtool: the
 * alert rules load and pass their unit tests, every dashboard expression
 * parses (variables expanded, then loaded as recording rules), both name only
 * published metrics, and a running node's /metrics passes
 * `promtool check metrics`.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { createMetrics } from '../../src/metrics/registry';
import { REPO_ROOT, startNodeProcess } from '../helpers/node-process';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { requireCommand, run, runOk } from '../helpers/tools';

const PROM_DIR = path.join(REPO_ROOT, 'deploy', 'prometheus');
const RULES = path.join(PROM_DIR, 'zdmatch-rules.yaml');
const DASHBOARD = path.join(REPO_ROOT, 'deploy', 'grafana', 'zdmatch.json');
const CHART_FILES = path.join(REPO_ROOT, 'deploy', 'helm', 'zdmatch', 'files');

/** DESIGN §10 and the operator metrics: names are a published interface. */
const PUBLISHED = new Set([
  'dexzd_step_task_queue_entries', 'dexzd_step_task_queue_oldest_age_seconds', 'dexzd_matching_queued_tasks',
  'dexzd_matching_unserved_task_queues', 'dexzd_matching_heads_restored_refs_total', 'dexzd_matching_heads_incomplete_scans_total',
  'dexzd_step_task_queue_incomplete_seeks_total', 'dexzd_matching_returned_attempts_total', 'dexzd_matching_reserve_declined_tasks_total',
  'dexzd_gateway_streams', 'dexzd_gateway_slots', 'dexzd_matching_dispatch_latency_seconds', 'dexzd_matching_rpcs_total',
  'dexzd_matching_offers_total', 'dexzd_cluster_owned_partitions', 'dexzd_cluster_partitions', 'dexzd_cluster_lease_changes_total', 'dexzd_cluster_live_nodes',
  'dexzd_redis_command_seconds', 'dexzd_outcomes_total', 'dexzd_step_tasks_enqueued_total', 'dexzd_outcome_consumer_lag',
  'dexzd_mesh_peer_links', 'dexzd_mesh_messages_total', 'dexzd_mesh_doorbell_events_total', 'dexzd_api_enqueue_streams',
  'dexzd_tls_certificate_expiry_timestamp_seconds',
  // prom-client's default process metrics, under the prefix dexzd_process_ (so process_cpu_seconds_total
  // becomes dexzd_process_process_cpu_seconds_total)
  'dexzd_process_process_cpu_seconds_total', 'dexzd_process_process_resident_memory_bytes', 'dexzd_process_nodejs_eventloop_lag_p99_seconds',
  'dexzd_process_nodejs_eventloop_lag_max_seconds', 'dexzd_process_process_start_time_seconds',
]);
const HISTOGRAMS = ['dexzd_matching_dispatch_latency_seconds', 'dexzd_redis_command_seconds'];

function metricNames(expr: string): string[] {
  const names = expr.match(/\bdexzd_[a-z0-9_]+/g) ?? [];
  return names.map((n) => {
    const h = HISTOGRAMS.find((b) => n === `${b}_bucket` || n === `${b}_count` || n === `${b}_sum`);
    return h ?? n;
  });
}

interface DashboardPanel { title?: string; type?: string; targets?: { expr?: string }[]; panels?: DashboardPanel[] }

function dashboardExpressions(): { title: string; expr: string }[] {
  const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: DashboardPanel[]; templating: { list: { query?: unknown; definition?: string }[] } };
  const out: { title: string; expr: string }[] = [];
  const walk = (ps: DashboardPanel[]) => {
    for (const p of ps) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ title: p.title ?? '?', expr: t.expr });
      walk(p.panels ?? []);
    }
  };
  walk(dash.panels);
  for (const v of dash.templating.list) {
    const q = typeof v.query === 'object' && v.query ? (v.query as { query: string }).query : undefined;
    const m = q && /^label_values\((.*),\s*\w+\)$/.exec(q); // label_values(<selector>, label): the selector must parse
    if (m) out.push({ title: `variable query ${q}`, expr: m[1]! });
  }
  return out;
}

/** Grafana's variables, expanded as Grafana would for "All". */
function expand(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$\{__rate_interval\}|\$__interval|\$\{__interval\}|\$__range|\$\{__range\}/g, '5m')
    .replace(/\$\{(\w+)(:\w+)?\}|\$(\w+)/g, () => '.*');
}

let promtool: string;
beforeAll(() => {
  promtool = requireCommand('promtool', 'prometheus');
});

it('alert rules pass promtool check rules and their unit tests', () => {
  const check = runOk(promtool, ['check', 'rules', RULES]);
  expect(check).toMatch(/SUCCESS: \d+ rules found/);
  const test = runOk(promtool, ['test', 'rules', 'zdmatch-rules.test.yaml'], { cwd: PROM_DIR });
  expect(test).toContain('SUCCESS');
  const alerts = YAML.parse(fs.readFileSync(RULES, 'utf8')).groups.flatMap((g: { rules: { alert: string }[] }) => g.rules.map((r) => r.alert));
  const tested = fs.readFileSync(path.join(PROM_DIR, 'zdmatch-rules.test.yaml'), 'utf8');
  for (const a of alerts) expect(`${a}: ${tested.includes(`alertname: ${a}`)}`).toBe(`${a}: true`); // every alert has a unit test
});

it('every dashboard expression parses (variables expanded, promtool check rules)', () => {
  const exprs = dashboardExpressions();
  expect(exprs.length).toBeGreaterThan(20);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-dash-'));
  try {
    const file = path.join(dir, 'dashboard-exprs.yaml');
    const rules = exprs.map((e, i) => ({ record: `zdmatch_dashboard:expr_${i}`, expr: expand(e.expr) }));
    fs.writeFileSync(file, YAML.stringify({ groups: [{ name: 'dashboard', rules }] }));
    const r = run(promtool, ['check', 'rules', file]);
    expect(`${r.stdout}${r.stderr}`).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.status).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// Two releases in one namespace (a new cluster beside the old) are told apart by the
// metrics Service, as the alerts tell them apart (docs/operations.md "Alert").
it('the dashboard picks one release: every panel selects the namespace, job and service variables', () => {
  const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { templating: { list: { name: string; query?: { query: string } }[] } };
  const service = dash.templating.list.find((v) => v.name === 'service');
  expect(service?.query?.query).toBe('label_values(dexzd_cluster_owned_partitions{namespace=~"$namespace", job=~"$job"}, service)');
  const unscoped = dashboardExpressions().filter(({ title, expr }) => !title.startsWith('variable query ') && metricNames(expr).some((n) => n.startsWith('dexzd_'))
    && !(/namespace=~"\$namespace"/.test(expr) && /job=~"\$job"/.test(expr) && /service=~"\$service"/.test(expr)));
  expect(unscoped.map((e) => e.title)).toEqual([]);
});

it('the dashboard and the rules name only published metrics, and the chart ships identical copies', () => {
  const used = new Set<string>();
  for (const { expr } of dashboardExpressions()) for (const n of metricNames(expr)) used.add(n);
  const rules = YAML.parse(fs.readFileSync(RULES, 'utf8'));
  for (const g of rules.groups) for (const r of g.rules) for (const n of metricNames(r.expr)) used.add(n);
  expect([...used].filter((n) => !PUBLISHED.has(n))).toEqual([]);
  // Every metric a node registers is published (so it cannot miss its panel below).
  const registered = createMetrics().registry.getMetricsAsArray().map((m) => m.name);
  expect(registered.filter((n) => !PUBLISHED.has(n))).toEqual([]);
  // A panel per signal: the dashboard covers every published zdmatch metric.
  expect([...PUBLISHED].filter((n) => !n.startsWith('dexzd_process_') && !used.has(n))).toEqual([]);
  expect(fs.readFileSync(path.join(CHART_FILES, 'prometheus-rules.yaml'), 'utf8')).toBe(fs.readFileSync(RULES, 'utf8'));
  expect(fs.readFileSync(path.join(CHART_FILES, 'grafana-dashboard.json'), 'utf8')).toBe(fs.readFileSync(DASHBOARD, 'utf8'));
});

// A label the metric lacks matches nothing: a `by (type)` for `by (kind)` draws one line, a
// matcher on it an empty panel or an alert that never fires, and promtool parses either.
it('the dashboard and the rules group and select only by labels the node or the scrape sets', () => {
  const labelNames = new Map(createMetrics().registry.getMetricsAsArray()
    .map((m) => [m.name, (m as unknown as { labelNames?: string[] }).labelNames ?? []] as const));
  const TARGET = ['job', 'namespace', 'service', 'instance', 'pod', 'le'];
  const rules = YAML.parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  const exprs = [
    ...dashboardExpressions(),
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ title: r.alert, expr: r.expr }))),
  ];
  expect(exprs.length).toBeGreaterThan(40);
  const unknown: string[] = [];
  for (const { title, expr } of exprs) {
    const names = metricNames(expr).filter((n) => n.startsWith('dexzd_'));
    if (names.length === 0) continue;
    const allowed = new Set([...TARGET, ...names.flatMap((n) => labelNames.get(n) ?? [])]);
    const used = [
      ...[...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((l) => l.trim()).filter(Boolean)),
      ...[...expr.matchAll(/\bdexzd_[a-z0-9_]+\{([^}]*)\}/g)].flatMap((m) => [...m[1]!.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!)),
    ];
    for (const l of used) if (!allowed.has(l)) unknown.push(`${title}: ${l} (${names.join(', ')})`);
  }
  expect(unknown).toEqual([]);
});

describe('a running node', () => {
  const redis = useEmbeddedRedis();

  it('serves /metrics that pass promtool check metrics (default process metrics aside)', async () => {
    const node = await startNodeProcess({ redisUrl: redis.url, keyPrefix: uniquePrefix('promtool'), config: { cluster: { partitions: 8 }, log: { level: 'warn' } } });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        http.get(`http://${node.metricsAddress}/metrics`, (res) => {
          let s = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (s += c));
          res.on('end', () => resolve(s));
        }).on('error', reject);
      });
      const r = run(promtool, ['check', 'metrics'], { input: body });
      // promtool lints names and help texts; prom-client's default process
      // metrics draw warnings of their own (e.g. *_bytes gauges without a unit
      // suffix it likes), which are not ours to change.
      const problems = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() && !/^dexzd_process_/.test(l.trim()));
      expect(problems).toEqual([]);
      const names = new Set([...body.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
      const missing = [...PUBLISHED].filter((n) => !names.has(n));
      // every metric the dashboard and the alerts may name is there from the start
      expect(missing).toEqual([]);
    } finally {
      await node.kill('SIGKILL');
    }
  });
});
