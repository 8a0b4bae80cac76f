/**
 * Service names are DNS labels of at most 63 characters, which Kubernetes
 * refuses past that: the release's name (up to 53 characters, or a
 * fullnameOverride of up to 63) is cut to leave room for a Service's suffix
 * (-metrics, -peers), and NOTES name the Services as rendered.
 */
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const chart = useChart();
const serviceNames = (objs: K8sObject[]) => objs.filter((o) => o.kind === 'Service').map((o) => o.metadata.name);

it.each([
  ['a release name of 53 characters', [] as string[], 'r'.repeat(53)],
  ['a fullnameOverride of 63 characters', ['--set', `fullnameOverride=${'f'.repeat(63)}`], 'zdmatch'],
])('names every Service within 63 characters, each its own, for %s', (_label, args, release) => {
  const r = chart.render([...BASE, ...args], { release });
  expect(r.stderr).toBe('');
  const names = serviceNames(r.objs);
  expect(names).toHaveLength(3);
  for (const n of names) expect(n.length).toBeLessThanOrEqual(63);
  expect(new Set(names).size).toBe(3);
  expect(names.filter((n) => n.endsWith('-metrics'))).toHaveLength(1);
  expect(names.filter((n) => n.endsWith('-peers'))).toHaveLength(1);
});

it('keeps the usual names for a short release', () => {
  expect(serviceNames(chart.render(BASE).objs).sort()).toEqual(['zdmatch', 'zdmatch-metrics', 'zdmatch-peers']);
});

it('names the metrics Service in NOTES as it is rendered', () => {
  const fullname = 'f'.repeat(63);
  const metrics = serviceNames(chart.render([...BASE, '--set', `fullnameOverride=${fullname}`]).objs).find((n) => n.endsWith('-metrics'))!;
  expect(chart.notes([...BASE, '--set', `fullnameOverride=${fullname}`])).toContain(`${metrics}.zd.svc:`);
});
