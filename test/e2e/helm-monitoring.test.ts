/**
 * Chart values that render objects the cluster would take but that fail an
 * operator later, refused at render time by the pinned helm:
 * - a ServiceMonitor whose scrapeTimeout exceeds its interval, which
 *   prometheus-operator skips ("scrapeTimeout greater than scrapeInterval"),
 *   leaving the nodes unscraped and every zdmatch alert silent;
 * - a PodDisruptionBudget with maxUnavailable 0, which no eviction can ever
 *   satisfy, so every node drain and node upgrade hangs.
 * And what an operator reads after an install: the budget lets drains evict
 * pods that serve nothing, and NOTES name the API's real scheme.
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

describe('ServiceMonitor targets', () => {
  const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
    Object.entries(selector).every(([k, v]) => labels[k] === v);

  // A selector that misses the metrics Service, or an endpoint on a port it lacks, leaves
  // prometheus-operator with no target: nothing is scraped and no zdmatch alert can fire.
  // Two releases in one namespace (a new cluster beside the old) each scrape their own nodes.
  it('scrapes /metrics on its release\'s metrics Service alone, which picks the nodes\' metrics port', () => {
    const releases = ['zdmatch', 'edge'].map((release) => {
      const r = chart.render([...BASE, ...MONITORING], { release });
      expect(r.stderr).toBe('');
      return r.objs;
    });
    const services = releases.flat().filter((o) => o.kind === 'Service');
    for (const objs of releases) {
      const sm = serviceMonitor(objs)!;
      const metrics = objs.find((o) => o.kind === 'Service' && o.metadata.name.endsWith('-metrics'))!;
      const selected = services.filter((s) => matches(sm.spec.selector.matchLabels, (s.metadata as { labels?: Record<string, string> }).labels));
      expect(selected.map((s) => s.metadata.name)).toEqual([metrics.metadata.name]);
      const [endpoint, ...more] = sm.spec.endpoints as { port: string; path: string }[];
      expect(more).toEqual([]);
      expect(endpoint!.path).toBe('/metrics'); // src/node/http-server.ts
      const port = (metrics.spec.ports as { name: string; targetPort: string }[]).find((p) => p.name === endpoint!.port);
      expect(port?.targetPort).toBe('metrics');
      const dep = objs.find((o) => o.kind === 'Deployment')!;
      expect(matches(metrics.spec.selector, dep.spec.template.metadata.labels)).toBe(true);
      expect(dep.spec.template.spec.containers[0].ports).toContainEqual(expect.objectContaining({ name: 'metrics' }));
    }
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

describe('PodDisruptionBudget unhealthy pods', () => {
  it('lets a drain evict a pod that is not ready (AlwaysAllow) by default', () => {
    const r = chart.render(BASE);
    expect(r.stderr).toBe('');
    expect(pdb(r.objs)!.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  it('takes IfHealthyBudget, and leaves the field to the cluster when empty', () => {
    expect(pdb(chart.render([...BASE, '--set', 'podDisruptionBudget.unhealthyPodEvictionPolicy=IfHealthyBudget']).objs)!.spec.unhealthyPodEvictionPolicy).toBe('IfHealthyBudget');
    const empty = pdb(chart.render([...BASE, '--set', 'podDisruptionBudget.unhealthyPodEvictionPolicy=']).objs)!;
    expect(empty.spec).not.toHaveProperty('unhealthyPodEvictionPolicy');
    expect(empty.spec.maxUnavailable).toBe(1);
  });

  it('refuses a policy Kubernetes does not know, naming the key', () => {
    const r = chart.render([...BASE, '--set', 'podDisruptionBudget.unhealthyPodEvictionPolicy=Always']);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('unhealthyPodEvictionPolicy');
  });
});

describe('install NOTES', () => {
  const TLS = ['--set', 'tls.enabled=true', '--set', 'tls.existingSecret=zd-tls'];

  it('names the API h2c (cleartext) and the fetch surface http without TLS', () => {
    const notes = chart.notes(BASE);
    expect(notes).toMatch(/gRPC API \(h2c\): +zdmatch\.zd\.svc:8801/);
    expect(notes).toContain('http://zdmatch.zd.svc:8802');
    expect(notes).not.toMatch(/TLS/);
  });

  it('names TLS, https and the certificate to check when tls.enabled', () => {
    const notes = chart.notes([...BASE, ...TLS]);
    expect(notes).toMatch(/gRPC API \(TLS\): +zdmatch\.zd\.svc:8801/);
    expect(notes).not.toContain('h2c');
    expect(notes).toContain('https://zdmatch.zd.svc:8802');
    expect(notes).toContain('Secret zd-tls');
  });

  // NOTES is what an operator reads after install to wire clients and the load balancer.
  it('names the ports as configured, the certificate name to check, and the ping interval to outlast', () => {
    const notes = chart.notes([...BASE, ...TLS,
      '--set', 'config.api.listen=0.0.0.0:9001', '--set', 'config.http.listen=0.0.0.0:9002',
      '--set', 'config.metrics.listen=0.0.0.0:9003', '--set', 'config.matching.pingInterval=45s']);
    expect(notes).toMatch(/gRPC API \(TLS\): +zdmatch\.zd\.svc:9001\n/);
    expect(notes).toContain('https://zdmatch.zd.svc:9002\n');
    expect(notes).toContain('zdmatch-metrics.zd.svc:9003/metrics');
    expect(notes).toMatch(/against the name zdmatch\.zd\.svc\./);
    expect(notes).toContain('matching.pingInterval (45s)');
  });

  it('counts the gateway nodes: replicaCount, or the autoscaler\'s range', () => {
    expect(chart.notes([...BASE, '--set', 'replicaCount=5'])).toMatch(/: 5 gateway node\(s\)/);
    const scaled = chart.notes([...BASE, '--set', 'replicaCount=5', '--set', 'autoscaling.enabled=true',
      '--set', 'autoscaling.minReplicas=2', '--set', 'autoscaling.maxReplicas=7', '--set', 'resources.requests.cpu=100m']);
    expect(scaled).toMatch(/: 2-7 gateway node\(s\)/);
  });

  it('warns when auth is off, and leaves out the fetch line when its Service port is', () => {
    expect(chart.notes(BASE)).toContain('auth.enabled=false');
    const notes = chart.notes([...BASE, '--set', 'service.http=false']);
    expect(notes).not.toContain(':8802');
    const withAuth = chart.notes(['--set', 'redis.url=redis://redis:6379', '--set', 'auth.existingSecret=zd-tokens']);
    expect(withAuth).not.toContain('auth.enabled=false');
  });
});
