/**
 * Chart values that render objects the cluster would take but that fail an
 * operator later, refused at render time by the pinned helm:
 * - a ServiceMonitor whose scrapeTimeout exceeds its interval, which
 *   prometheus-operator skips ("scrapeTimeout greater than scrapeInterval"),
 *   leaving the nodes unscraped and every zdmatch alert silent;
 * - a PodDisruptionBudget with maxUnavailable 0, which no eviction can ever
 *   satisfy, so every node drain and node upgrade hangs.
 */
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const MONITORING = ['--api-versions', 'monitoring.coreos.com/v1'];

const chart = useChart();

const serviceMonitor = (objs: K8sObject[]) => objs.find((o) => o.kind === 'ServiceMonitor');
const pdb = (objs: K8sObject[]) => objs.find((o) => o.kind === 'PodDisruptionBudget');

describe('ServiceMonitor timing', () => {
  const render = (interval: string, scrapeTimeout: string) =>
    chart.render([...BASE, ...MONITORING, '--set', `serviceMonitor.interval=${interval}`, '--set', `serviceMonitor.scrapeTimeout=${scrapeTimeout}`]);

  it.each([
    ['the defaults', '15s', '10s'],
    ['a timeout equal to the interval', '30s', '30s'],
    ['compound durations', '1m30s', '90s'],
    ['milliseconds', '500ms', '400ms'],
  ])('renders %s (interval %s, scrapeTimeout %s) as given', (_label, interval, scrapeTimeout) => {
    const r = render(interval, scrapeTimeout);
    expect(r.stderr).toBe('');
    expect(serviceMonitor(r.objs)!.spec.endpoints[0]).toMatchObject({ interval, scrapeTimeout });
  });

  it.each([
    ['a shorter interval than the default timeout', '5s', '10s'],
    ['a timeout one second over a minute', '1m', '61s'],
    ['a timeout one millisecond over', '1s', '1001ms'],
  ])('refuses %s (interval %s, scrapeTimeout %s), which prometheus-operator would skip', (_label, interval, scrapeTimeout) => {
    const r = render(interval, scrapeTimeout);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(`serviceMonitor.scrapeTimeout (${scrapeTimeout}) must not exceed serviceMonitor.interval (${interval})`);
  });

  it('refuses a duration Prometheus cannot read, naming the key', () => {
    const r = render('15s', '1.5s');
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('serviceMonitor.scrapeTimeout: cannot read "1.5s" as a Prometheus duration');
  });

  it('checks nothing when the cluster has no prometheus-operator (no ServiceMonitor is rendered)', () => {
    const r = chart.render([...BASE, '--set', 'serviceMonitor.interval=5s']);
    expect(r.stderr).toBe('');
    expect(serviceMonitor(r.objs)).toBeUndefined();
  });
});

describe('PodDisruptionBudget', () => {
  it.each([
    ['the default', [], 1],
    ['a single replica', ['--set', 'replicaCount=1'], 1],
    ['two pods', ['--set', 'podDisruptionBudget.maxUnavailable=2'], 2],
    ['a percentage', ['--set-string', 'podDisruptionBudget.maxUnavailable=25%'], '25%'],
  ])('renders %s with a budget that lets a drain evict', (_label, args, want) => {
    const r = chart.render([...BASE, ...(args as string[])]);
    expect(r.stderr).toBe('');
    expect(pdb(r.objs)!.spec.maxUnavailable).toBe(want);
  });

  it.each([
    ['0', ['--set', 'podDisruptionBudget.maxUnavailable=0']],
    ['"0"', ['--set-string', 'podDisruptionBudget.maxUnavailable=0']],
    ['0%', ['--set-string', 'podDisruptionBudget.maxUnavailable=0%']],
  ])('refuses maxUnavailable %s, which blocks every node drain', (_label, args) => {
    const r = chart.render([...BASE, ...args]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('podDisruptionBudget.maxUnavailable');
    expect(r.stderr).toContain('0 blocks every voluntary eviction');
  });

  it('renders no budget when turned off, whatever maxUnavailable says', () => {
    const r = chart.render([...BASE, '--set', 'podDisruptionBudget.enabled=false', '--set', 'podDisruptionBudget.maxUnavailable=0']);
    expect(r.stderr).toBe('');
    expect(pdb(r.objs)).toBeUndefined();
  });
});
