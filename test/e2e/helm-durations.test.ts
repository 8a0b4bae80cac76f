/**
 * config.drain.timeout in the chart (deploy/helm/zdmatch) takes every
 * duration that values.schema.json and the node take ("1.5m", "45 s", "1d",
 * a number of milliseconds, also one that YAML writes as 1e+06), and the
 * chart's grace-period check reads it as the node does: the render succeeds
 * with terminationGracePeriodSeconds = preStop + drain.timeout (whole seconds,
 * rounded up) + 10 and is refused one second short of it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig, parseDuration } from '../../src/config';
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false', '--set', 'preStop.sleepSeconds=5'];
const SHORT_GRACE = 'must be at least preStop.sleepSeconds + config.drain.timeout + 10';

const chart = useChart();
let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-helm-durations-'));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Renders with drain.timeout set from a values file (so a number stays a number, as users write it). */
function render(timeout: string | number, grace: number) {
  const values = path.join(dir, `values-${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(values, YAML.stringify({ config: { drain: { timeout } }, terminationGracePeriodSeconds: grace }));
  return chart.render([...BASE, '-f', values]);
}

function nodeDrainMs(objs: K8sObject[]): number {
  const cm = objs.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'])!;
  const file = path.join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(file, cm.data['config.yaml']);
  return loadConfig({ file, env: { ZD_CLUSTER_NODE_ID: 'zdmatch-0', ZD_INTERNAL_ADVERTISE: '10.0.0.7:8803' }, args: [] }).drain.timeout;
}

it.each<[string, string | number]>([
  ['whole seconds', '30s'],
  ['milliseconds', '1500ms'],
  ['a decimal of minutes', '1.5m'],
  ['a decimal of seconds', '2.5s'],
  ['a space before the unit', '45 s'],
  ['days', '1d'],
  ['a number of milliseconds', 30000],
  ['a number of milliseconds that YAML writes as 1e+06', 1000000],
])('reads drain.timeout given as %s (%p) as the node does', (_label, timeout) => {
  const ms = parseDuration(timeout);
  expect(Number.isInteger(ms)).toBe(true); // the node takes it
  const need = 5 + Math.ceil(ms / 1000) + 10;
  const enough = render(timeout, need);
  expect(enough.stderr).toBe('');
  expect(enough.ok).toBe(true);
  expect(nodeDrainMs(enough.objs)).toBe(ms);
  expect(enough.objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.terminationGracePeriodSeconds).toBe(need);
  const short = render(timeout, need - 1);
  expect(short.ok).toBe(false);
  expect(short.stderr).toContain(SHORT_GRACE);
});
