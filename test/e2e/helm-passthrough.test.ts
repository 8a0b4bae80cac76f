/**
 * Chart values an operator sets to place, pull, expose or label the nodes,
 * each checked where it must land in the rendered objects: a value the
 * templates drop renders valid objects all the same, so nothing else would
 * notice. Also the roll the Deployment promises (docs/operations.md "Drain"):
 * one pod at a time, and a changed config rolls the pods.
 */
import YAML from 'yaml';
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const MONITORING = ['--api-versions', 'monitoring.coreos.com/v1'];

const chart = useChart();

const one = (objs: K8sObject[], kind: string, name?: string): K8sObject => {
  const found = objs.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found.map((o) => `${o.kind}/${o.metadata.name}`)).toHaveLength(1);
  return found[0]!;
};

const meta = (o: K8sObject) => o.metadata as { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };

function render(args: string[]): K8sObject[] {
  const r = chart.render([...BASE, ...MONITORING, ...args]);
  expect(r.stderr).toBe('');
  return r.objs;
}

it('places, pulls and schedules the pods as the values say', () => {
  const values = {
    image: { repository: 'registry.example/zd/zdmatch', tag: '9.9.9', pullPolicy: 'Always' },
    imagePullSecrets: [{ name: 'regcred' }],
    nodeSelector: { pool: 'zdmatch' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'zdmatch', effect: 'NoSchedule' }],
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } },
    priorityClassName: 'zdmatch-high',
    podSecurityContext: { runAsNonRoot: true, runAsUser: 20002, fsGroup: 20002 },
    serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/zd' } },
  };
  const args = Object.entries(values).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]);
  const objs = render(args);
  const pod = one(objs, 'Deployment').spec.template.spec;
  const [c] = pod.containers;
  expect(c.image).toBe('registry.example/zd/zdmatch:9.9.9');
  expect(c.imagePullPolicy).toBe('Always');
  expect(pod.imagePullSecrets).toEqual(values.imagePullSecrets);
  expect(pod.nodeSelector).toEqual(values.nodeSelector);
  expect(pod.tolerations).toEqual(values.tolerations);
  expect(pod.affinity).toEqual(values.affinity);
  expect(pod.priorityClassName).toBe('zdmatch-high');
  expect(pod.securityContext).toMatchObject(values.podSecurityContext); // merged over the defaults
  expect(meta(one(objs, 'ServiceAccount')).annotations).toEqual(values.serviceAccount.annotations);
});

it('spreads the pods over hosts by default, selecting its own pods', () => {
  const objs = render([]);
  const dep = one(objs, 'Deployment');
  const [spread] = dep.spec.template.spec.topologySpreadConstraints;
  expect(spread).toMatchObject({ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' });
  expect(spread.labelSelector.matchLabels).toEqual(dep.spec.selector.matchLabels);
});

it('exposes the API Service with the type and annotations given', () => {
  const objs = render(['--set', 'service.type=LoadBalancer', '--set-json', 'service.annotations={"service.beta.kubernetes.io/aws-load-balancer-type":"nlb"}']);
  const api = one(objs, 'Service', 'zdmatch');
  expect(api.spec.type).toBe('LoadBalancer');
  expect(meta(api).annotations).toEqual({ 'service.beta.kubernetes.io/aws-load-balancer-type': 'nlb' });
});

it('labels the ServiceMonitor, the PrometheusRule and the dashboard for the selectors that pick them up', () => {
  const objs = render([
    '--set', 'serviceMonitor.labels.release=kube-prom', '--set', 'prometheusRule.labels.release=kube-prom',
    '--set', 'grafanaDashboard.labels.team=ops', '--set', 'grafanaDashboard.annotations.grafana_folder=zdmatch',
  ]);
  expect(meta(one(objs, 'ServiceMonitor')).labels?.release).toBe('kube-prom');
  expect(meta(one(objs, 'PrometheusRule')).labels?.release).toBe('kube-prom');
  const dash = one(objs, 'ConfigMap', 'zdmatch-dashboard');
  expect(meta(dash).labels).toMatchObject({ grafana_dashboard: '1', team: 'ops' });
  expect(meta(dash).annotations).toEqual({ grafana_folder: 'zdmatch' });
});

it.each([
  ['serviceMonitor.enabled', 'ServiceMonitor'],
  ['prometheusRule.enabled', 'PrometheusRule'],
])('%s=false renders no %s', (key, kind) => {
  expect(render([]).filter((o) => o.kind === kind)).toHaveLength(1);
  expect(render(['--set', `${key}=false`]).filter((o) => o.kind === kind)).toEqual([]);
});

it('grafanaDashboard.enabled=false renders no dashboard ConfigMap', () => {
  expect(render([]).filter((o) => o.metadata.name === 'zdmatch-dashboard')).toHaveLength(1);
  expect(render(['--set', 'grafanaDashboard.enabled=false']).filter((o) => o.metadata.name === 'zdmatch-dashboard')).toEqual([]);
});

it('reads the Redis URL and password from the keys of redis.existingSecret the values name', () => {
  const r = chart.render(['--set', 'auth.enabled=false', '--set', 'redis.existingSecret=my-redis',
    '--set', 'redis.existingSecretUrlKey=url', '--set', 'redis.existingSecretPasswordKey=pw']);
  expect(r.stderr).toBe('');
  const env = Object.fromEntries(one(r.objs, 'Deployment').spec.template.spec.containers[0].env.map((e: any) => [e.name, e]));
  expect(env.ZD_REDIS_URL.valueFrom.secretKeyRef).toMatchObject({ name: 'my-redis', key: 'url' });
  expect(env.ZD_REDIS_PASSWORD.valueFrom.secretKeyRef).toMatchObject({ name: 'my-redis', key: 'pw' });
});

it('renders redis.sentinelName, redis.keyPrefix and redis.waitReplicas into config.yaml', () => {
  const r = chart.render(['--set', 'auth.enabled=false', '--set-json', 'redis.sentinels=["s1:26379","s2:26379"]',
    '--set', 'redis.sentinelName=zd-primary', '--set', 'redis.keyPrefix=zd2', '--set', 'redis.waitReplicas=1']);
  expect(r.stderr).toBe('');
  const config = YAML.parse(one(r.objs, 'ConfigMap', 'zdmatch').data['config.yaml']);
  expect(config.redis).toMatchObject({ sentinels: ['s1:26379', 's2:26379'], sentinelName: 'zd-primary', keyPrefix: 'zd2', waitReplicas: 1 });
});

// docs/operations.md "Drain": a 5 s preStop sleep and a 45 s grace period by default, rolling
// updates one pod at a time, and a changed ConfigMap rolls the pods.
it('rolls one pod at a time, and rolls the pods when the config changes', () => {
  const dep = one(render([]), 'Deployment');
  expect(dep.spec.template.spec.containers[0].lifecycle.preStop.exec.command).toEqual(['sleep', '5']);
  expect(dep.spec.template.spec.terminationGracePeriodSeconds).toBe(45);
  expect(dep.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  const checksum = (objs: K8sObject[]) => one(objs, 'Deployment').spec.template.metadata.annotations['checksum/config'];
  expect(checksum([dep])).toMatch(/^[0-9a-f]{64}$/);
  expect(checksum(render(['--set', 'config.matching.stickyWait=2s']))).not.toBe(checksum([dep]));
  expect(checksum(render([]))).toBe(checksum([dep]));
});

// The node re-reads its token files and TLS files when they change (docs/operations.md "Deploy",
// docs/security.md): each file the rendered config names must lie in a mount of the Secret that
// holds it, and a whole-Secret mount, since a subPath mount never sees the Secret's updates.
it('mounts every file the config names from its Secret, whole, where the config looks for it', () => {
  const r = chart.render([
    '--set', 'redis.clusterNodes={r-0:6379}', '--set', 'redis.password=pw',
    '--set', 'redis.tls.enabled=true', '--set', 'redis.tls.caSecret=redis-ca',
    '--set', 'auth.existingSecret=zdmatch-tokens',
    '--set', 'tls.enabled=true', '--set', 'tls.existingSecret=zdmatch-tls', '--set', 'tls.ca=true',
  ]);
  expect(r.stderr).toBe('');
  const config = YAML.parse(one(r.objs, 'ConfigMap', 'zdmatch').data['config.yaml']);
  const files: Record<string, { file: string; secret: string }> = {
    'auth.workerTokensFile': { file: config.auth.workerTokensFile, secret: 'zdmatch-tokens' },
    'auth.clientTokensFile': { file: config.auth.clientTokensFile, secret: 'zdmatch-tokens' },
    'tls.cert': { file: config.tls.cert, secret: 'zdmatch-tls' },
    'tls.key': { file: config.tls.key, secret: 'zdmatch-tls' },
    'tls.ca': { file: config.tls.ca, secret: 'zdmatch-tls' },
    'redis.tlsCa': { file: config.redis.tlsCa, secret: 'redis-ca' },
  };
  const pod = one(r.objs, 'Deployment').spec.template.spec;
  const mounts = pod.containers[0].volumeMounts as { name: string; mountPath: string; subPath?: string }[];
  const volumes = new Map((pod.volumes as { name: string; secret?: { secretName: string } }[]).map((v) => [v.name, v]));
  const where = Object.entries(files).map(([key, { file, secret }]) => {
    const mount = mounts.find((m) => typeof file === 'string' && (file === m.mountPath || file.startsWith(`${m.mountPath}/`)));
    return `${key}: ${mount ? `${volumes.get(mount.name)?.secret?.secretName}${mount.subPath ? ' (subPath)' : ''}` : `no mount for ${file}`}`;
  });
  expect(where).toEqual(Object.entries(files).map(([key, { secret }]) => `${key}: ${secret}`));
});
