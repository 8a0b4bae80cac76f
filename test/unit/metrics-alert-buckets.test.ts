/**
 * The numbers the alert rules and the dashboard take from the node's metrics:
 * the histogram bounds they select with `le` (ZdmatchRedisSlow: 100 ms,
 * ZdmatchRedisVerySlow: 500 ms, ZdmatchDispatchLatencyHigh: 1 s) must be
 * buckets the node exports, since a bound it lacks selects nothing and the
 * alert never fires; ZdmatchDispatchLatencyHigh counts the Steps' dispatch
 * paths (sticky, sync, queued), all of them and no RPC's; and the event-loop
 * alerts subtract the lag sampling interval the node runs with
 * (docs/operations.md "Alert").
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { Histogram } from 'prom-client';
import { createMetrics, EVENT_LOOP_SAMPLE_MS } from '../../src/metrics/registry';
import type { DispatchPath } from '../../src/owner/dispatcher';

const ROOT = path.resolve(__dirname, '..', '..');

type Equal<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The paths a Step is dispatched by; a path added to DispatchPath without them fails to compile here. */
const STEP_PATHS = ['sticky', 'sync', 'queued'] as const;
const stepPathsAreDispatchPaths: Equal<(typeof STEP_PATHS)[number], DispatchPath> = true;

function expressions(): { title: string; expr: string }[] {
  const rules = YAML.parse(fs.readFileSync(path.join(ROOT, 'deploy', 'prometheus', 'zdmatch-rules.yaml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  const out = rules.groups.flatMap((g) => g.rules.map((r) => ({ title: r.alert, expr: r.expr })));
  const dashboard = fs.readFileSync(path.join(ROOT, 'deploy', 'grafana', 'zdmatch.json'), 'utf8');
  for (const m of dashboard.matchAll(/"expr": "((?:[^"\\]|\\.)*)"/g)) out.push({ title: 'dashboard', expr: JSON.parse(`"${m[1]}"`) as string });
  return out;
}

it('selects with le only bounds that are buckets of the node\'s histograms', async () => {
  const { registry } = createMetrics();
  // Observe each histogram once so its buckets are exposed.
  for (const m of registry.getMetricsAsArray()) {
    if (!(m instanceof Histogram)) continue;
    const labelNames = (m as unknown as { labelNames: string[] }).labelNames;
    m.observe(Object.fromEntries(labelNames.map((l) => [l, 'x'])), 0);
  }
  const text = await registry.metrics();
  const exported = new Set<string>();
  for (const m of text.matchAll(/^(dexzd_[a-z0-9_]+_bucket)\{[^}]*\ble="([^"]+)"/gm)) exported.add(`${m[1]}{le="${m[2]}"}`);

  const selected: string[] = [];
  for (const { title, expr } of expressions()) {
    for (const m of expr.matchAll(/\b(dexzd_[a-z0-9_]+_bucket)\{([^}]*)\}/g)) {
      const le = /\ble="([^"]+)"/.exec(m[2]!);
      if (le) selected.push(`${title}: ${m[1]}{le="${le[1]}"}`);
    }
  }
  expect(selected).toEqual(expect.arrayContaining([
    'ZdmatchRedisSlow: dexzd_redis_command_seconds_bucket{le="0.1"}',
    'ZdmatchRedisVerySlow: dexzd_redis_command_seconds_bucket{le="0.5"}',
    'ZdmatchDispatchLatencyHigh: dexzd_matching_dispatch_latency_seconds_bucket{le="1"}',
  ]));
  expect(selected.filter((s) => !exported.has(s.slice(s.indexOf(': ') + 2)))).toEqual([]);
});

it('subtracts the event-loop sampling interval the node runs with from the lag it alerts on', () => {
  const lagRules = expressions().filter(({ expr }) => /dexzd_process_nodejs_eventloop_lag_/.test(expr));
  expect(lagRules.map((r) => r.title)).toEqual(expect.arrayContaining(['ZdmatchEventLoopLagHigh', 'ZdmatchEventLoopStall']));
  const subtracted = lagRules.map(({ title, expr }) => `${title}: ${/\)\s*-\s*([0-9.]+)\s*(?:>|$)/.exec(expr)?.[1]}`);
  expect(subtracted).toEqual(lagRules.map(({ title }) => `${title}: ${EVENT_LOOP_SAMPLE_MS / 1000}`));
});

it('judges Step dispatch latency over every Step path and no other', () => {
  expect(stepPathsAreDispatchPaths).toBe(true);
  const rule = expressions().find((r) => r.title === 'ZdmatchDispatchLatencyHigh')!;
  const selectors = [...rule.expr.matchAll(/\bpath=~"([^"]*)"/g)].map((m) => [...m[1]!.split('|')].sort());
  expect(selectors.length).toBeGreaterThan(0);
  for (const paths of selectors) expect(paths).toEqual([...STEP_PATHS].sort());
  // every dispatch latency series of the rule selects by path (an unselected one would count RPCs)
  expect([...rule.expr.matchAll(/dexzd_matching_dispatch_latency_seconds_\w+\{([^}]*)\}/g)].filter((m) => !/\bpath=~/.test(m[1]!))).toEqual([]);
});
