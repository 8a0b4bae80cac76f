/**
 * The chart's defaults and refusals (deploy/helm/zdmatch), rendered by the
 * pinned helm: auth on unless turned off explicitly, Redis in exactly one
 * mode, a grace period that outlasts the node's forced exit, and the README's
 * install commands render as written. Each rendered pod's env (Secrets
 * resolved from the render) and config.yaml are loaded by zdmatch's own
 * config loader, so a value set that renders also boots. With TLS on, the
 * nodes verify peers (dialled at pod IPs) against a DNS name.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../src/config';
import { schema } from '../../src/config/schema';
import { CHART, useChart, type K8sObject } from '../helpers/helm';

const REDIS = ['--set', 'redis.url=redis://redis:6379'];
const NO_AUTH = ['--set', 'auth.enabled=false'];
const TOKENS = ['--set', 'auth.existingSecret=zdmatch-tokens'];

const { render } = useChart();

function rendered(args: string[]): K8sObject[] {
  const r = render(args);
  if (!r.ok) throw new Error(`helm template ${args.join(' ')} failed: ${r.stderr}`);
  return r.objs;
}

/** The container's env as the kubelet would set it: literals, and keys of the Secrets the chart rendered. */
function podEnv(objs: K8sObject[]): Record<string, string> {
  const c = objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0];
  const env: Record<string, string> = { ZD_CLUSTER_NODE_ID: 'zdmatch-0', ZD_INTERNAL_ADVERTISE: '10.0.0.7:8803' };
  for (const e of c.env as { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[]) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = objs.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
      const v = secret?.stringData?.[ref.key];
      if (v !== undefined) env[e.name] = v;
    } else if (e.value !== undefined && !e.value.includes('$(')) {
      env[e.name] = e.value;
    }
  }
  return env;
}

/** Loads the rendered config.yaml with the pod's env, as `zdmatch serve` would. */
function boot(objs: K8sObject[], extraEnv: Record<string, string> = {}) {
  const cm = objs.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'])!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-helm-guards-'));
  try {
    const file = path.join(dir, 'config.yaml');
    fs.writeFileSync(file, cm.data['config.yaml']);
    return loadConfig({ file, env: { ...podEnv(objs), ...extraEnv }, args: [] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The `helm install` commands of the chart README, as argument lists for `helm template`. */
function readmeInstalls(): string[][] {
  const text = fs.readFileSync(path.join(CHART, 'README.md'), 'utf8');
  const out: string[][] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block[1]!.split('\n').map((l) => l.replace(/\s+#.*$/, '')).join('\n').replace(/\\\n/g, ' ').split('\n');
    for (const line of lines) {
      const m = /^\s*helm install \S+ deploy\/helm\/zdmatch\b(.*)$/.exec(line);
      if (!m) continue;
      const words = m[1]!.trim().split(/\s+/).filter(Boolean);
      const args: string[] = [];
      for (let i = 0; i < words.length; i++) {
        if (words[i] === '-n' || words[i] === '--namespace') i++;
        else if (words[i] !== '--create-namespace') args.push(words[i]!);
      }
      out.push(args);
    }
  }
  return out;
}

describe('auth', () => {
  it('is on by default, as in the node (src/config/schema.ts) and docs/security.md', () => {
    const values = YAML.parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8'));
    expect(values.auth.enabled).toBe(true);
  });

  it('refuses to render with auth on and no tokens, naming the values to set', () => {
    const r = render(REDIS);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('auth.existingSecret');
    expect(r.stderr).toContain('auth.enabled=false');
  });

  it('mounts the tokens Secret and points both token files at it', () => {
    const objs = rendered([...REDIS, ...TOKENS]);
    const config = boot(objs);
    expect(config.auth.enabled).toBe(true);
    expect(config.auth.workerTokensFile).toBe('/etc/zdmatch/auth/worker-tokens.yaml');
    expect(config.auth.clientTokensFile).toBe('/etc/zdmatch/auth/client-tokens.yaml');
    const pod = objs.find((o) => o.kind === 'Deployment')!.spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'auth', secret: { secretName: 'zdmatch-tokens' } });
  });

  it('turns off only when set to false explicitly', () => {
    expect(boot(rendered([...REDIS, ...NO_AUTH])).auth.enabled).toBe(false);
  });
});

describe('redis', () => {
  it('has no URL by default, so the README\'s clusterNodes and sentinels values boot', () => {
    const values = YAML.parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8'));
    expect(values.redis.url).toBe('');
    const cluster = rendered([...NO_AUTH, '--set', 'redis.clusterNodes={r-0:6379,r-1:6379}', '--set', 'redis.password=pw']);
    expect(podEnv(cluster).ZD_REDIS_URL).toBeUndefined();
    expect(boot(cluster).redis.clusterNodes).toHaveLength(2);
    const sentinel = rendered([...NO_AUTH, '--set', 'redis.sentinels={s-0:26379}']);
    expect(boot(sentinel).redis.sentinels).toHaveLength(1);
  });

  it('does not pass a URL from redis.existingSecret in Cluster or Sentinel mode (the Secret then holds the password)', () => {
    const objs = rendered([...NO_AUTH, '--set', 'redis.clusterNodes={r-0:6379}', '--set', 'redis.existingSecret=redis-cluster']);
    const c = objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0];
    const names = (c.env as { name: string }[]).map((e) => e.name);
    expect(names).not.toContain('ZD_REDIS_URL');
    expect(names).toContain('ZD_REDIS_PASSWORD');
  });

  it('reads each key of redis.existingSecret as optional (it may hold the URL, the password or both); its own Secret\'s keys are required', () => {
    type EnvRef = { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } };
    const refs = (args: string[]) => {
      const c = rendered([...NO_AUTH, ...args]).find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0];
      return Object.fromEntries((c.env as EnvRef[]).filter((e) => e.valueFrom?.secretKeyRef).map((e) => [e.name, e.valueFrom!.secretKeyRef!]));
    };
    // A Secret with only the URL must not keep the pod from starting for want of the password key, nor the reverse.
    expect(refs(['--set', 'redis.existingSecret=redis-creds'])).toEqual({
      ZD_REDIS_URL: { name: 'redis-creds', key: 'redis-url', optional: true },
      ZD_REDIS_PASSWORD: { name: 'redis-creds', key: 'redis-password', optional: true },
    });
    const url = refs(REDIS).ZD_REDIS_URL;
    expect(url).toEqual({ name: expect.any(String), key: 'redis-url' });
    expect(refs(['--set', 'redis.clusterNodes={r-0:6379}', '--set', 'redis.password=pw']).ZD_REDIS_PASSWORD)
      .toEqual({ name: url!.name, key: 'redis-password' });
  });

  // Each is refused by the node at startup (src/config/load.ts): rendered, every pod would crash-loop.
  it.each<[string, string, string, string]>([
    ['a Cluster seed without its port', 'clusterNodes', 'redis-0', '/redis/clusterNodes/0'],
    ['a Cluster seed on port 0', 'clusterNodes', 'redis-0:0', '/redis/clusterNodes/0'],
    ['a Cluster seed past port 65535', 'clusterNodes', 'redis-0:6379,redis-1:70000', '/redis/clusterNodes/1'],
    ['a Sentinel past port 65535', 'sentinels', 's-0:99999', '/redis/sentinels/0'],
    ['a Sentinel as a URL', 'sentinels', 'redis://s-0:26379', '/redis/sentinels/0'],
    ['a URL without a host', 'url', 'redis://', '/redis/url'],
    ['a URL with a database that is not a number', 'url', 'redis://redis:6379/zd', '/redis/url'],
  ])('refuses %s, as the node does', (_label, key, value, at) => {
    const list = key !== 'url';
    expect(() => loadConfig({ env: {}, args: [], overrides: { [`redis.${key}`]: list ? value.split(',') : value } })).toThrow(`config redis.${key}:`);
    const r = render([...NO_AUTH, '--set', `redis.${key}=${list ? `{${value}}` : value}`]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(at);
  });

  it.each<[string, string]>([
    ['clusterNodes', '[fd00::1]:6379,redis-1.redis.zd.svc:06379'],
    ['sentinels', 's-0:26379,10.0.0.9:65535'],
    ['url', 'rediss://zd:pw@redis.zd.svc:6380/2?family=6'],
  ])('takes every %s the node takes', (key, value) => {
    const list = key !== 'url';
    const cfg = boot(rendered([...NO_AUTH, '--set', `redis.${key}=${list ? `{${value}}` : value}`]));
    expect(cfg.redis[key as 'url']).toEqual(list ? value.split(',') : value);
  });

  it.each([
    ['url and clusterNodes', [...REDIS, '--set', 'redis.clusterNodes={r-0:6379}']],
    ['url and sentinels', [...REDIS, '--set', 'redis.sentinels={s-0:26379}']],
    ['clusterNodes and sentinels', ['--set', 'redis.clusterNodes={r-0:6379}', '--set', 'redis.sentinels={s-0:26379}']],
  ])('refuses %s together', (_label, args) => {
    const r = render([...NO_AUTH, ...args]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('set only one of redis.url, redis.clusterNodes, redis.sentinels');
  });
});

describe('redis.natMap', () => {
  const CLUSTER = ['--set', 'redis.clusterNodes={r-0:6379}'];
  const pairs = (v: string[]) => ['--set-json', `redis.natMap=${JSON.stringify(v)}`];

  it('passes the pairs to the node with a Cluster or Sentinels, and none by default', () => {
    // A Cluster in Kubernetes announces its pods' hostnames (cluster-announce-hostname), all on one port.
    const map = ['10.0.1.5:6379=redis-0.example.com:30001', '[fd00::2]:6379 = 127.0.0.1:30002',
      'redis-1.redis.zd.svc.cluster.local:6379=10.0.0.7:30003', 'redis-2.redis.zd.svc.cluster.local:6379=10.0.0.7:30004'];
    expect(boot(rendered([...NO_AUTH, ...CLUSTER, ...pairs(map)])).redis.natMap).toEqual(map);
    expect(boot(rendered([...NO_AUTH, '--set', 'redis.sentinels={s-0:26379}', ...pairs(map.slice(0, 1))])).redis.natMap).toEqual(map.slice(0, 1));
    expect(boot(rendered([...NO_AUTH, ...CLUSTER])).redis.natMap).toEqual([]);
  });

  // Each is refused by the node at startup: rendered, every pod would crash-loop.
  it.each<[string, string[], string, string]>([
    ['a pair without =', [...CLUSTER, ...pairs(['10.0.1.5:6379'])], '/redis/natMap/0', 'redis.natMap'],
    ['a pair past port 65535', [...CLUSTER, ...pairs(['10.0.1.5:6379=r:6379', '10.0.1.6:6379=r:70000'])], '/redis/natMap/1', 'redis.natMap'],
    ['an announced address mapped twice', [...CLUSTER, ...pairs(['10.0.1.5:6379=r:1', '10.0.1.5:6379 =r:2'])], 'redis.natMap: 10.0.1.5:6379 is mapped twice', 'redis.natMap'],
    ['a natMap beside redis.url', [...REDIS, ...pairs(['10.0.1.5:6379=r:1'])], 'redis.natMap: set it with redis.clusterNodes or redis.sentinels only', 'redis.natMap'],
  ])('refuses %s, as the node does', (_label, args, stderr, key) => {
    const r = render([...NO_AUTH, ...args]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(stderr);
    const overrides: Record<string, unknown> = {};
    for (let i = 0; i < args.length; i += 2) {
      const [k, v] = args[i + 1]!.split(/=(.*)/s) as [string, string];
      overrides[k] = args[i] === '--set-json' ? JSON.parse(v) : v.startsWith('{') ? v.slice(1, -1).split(',') : v;
    }
    expect(() => loadConfig({ env: {}, args: [], overrides })).toThrow(`config ${key}:`);
  });
});

describe('drain timing', () => {
  // The node force-exits drain.timeout + 10 s after SIGTERM (src/cli/serve.ts FORCE_GRACE_MS), which
  // comes after the preStop sleep: the kubelet's SIGKILL must not come first.
  it('requires terminationGracePeriodSeconds >= preStop + drain.timeout + 10', () => {
    const base = [...REDIS, ...NO_AUTH, '--set', 'preStop.sleepSeconds=5', '--set', 'config.drain.timeout=30s'];
    const short = render([...base, '--set', 'terminationGracePeriodSeconds=44']);
    expect(short.ok).toBe(false);
    expect(short.stderr).toContain('must be at least preStop.sleepSeconds + config.drain.timeout + 10');
    const enough = rendered([...base, '--set', 'terminationGracePeriodSeconds=45']);
    expect(enough.find((o) => o.kind === 'Deployment')!.spec.template.spec.terminationGracePeriodSeconds).toBe(45);
  });
});

describe('probes', () => {
  // The kubelet's gRPC probes speak cleartext only: with TLS the chart probes /readyz, as the README says.
  it('use gRPC health on the API port, or /readyz on the metrics port with TLS', () => {
    const container = (args: string[]) => rendered([...REDIS, ...NO_AUTH, ...args]).find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0];
    const plain = container([]);
    expect(plain.readinessProbe.grpc.port).toBe(8801);
    const tls = container(['--set', 'tls.enabled=true', '--set', 'tls.existingSecret=zdmatch-tls']);
    for (const probe of [tls.readinessProbe, tls.startupProbe]) expect(probe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(tls.readinessProbe.grpc).toBeUndefined();
    const readme = fs.readFileSync(path.join(CHART, 'README.md'), 'utf8');
    expect(readme).toMatch(/`tls\.enabled`[^|]*`\/readyz`/);
  });
});

describe('Service protocols', () => {
  // appProtocol tells gateways and meshes how to speak to a port: h2c (cleartext HTTP/2) to a
  // port that serves TLS, or http to one that serves https, breaks every call through them.
  const appProtocols = (args: string[]) => Object.fromEntries(rendered([...REDIS, ...NO_AUTH, ...args])
    .filter((o) => o.kind === 'Service')
    .flatMap((s) => (s.spec.ports as { name: string; appProtocol?: string }[]).map((p) => [`${s.metadata.name}/${p.name}`, p.appProtocol ?? null])));

  it('names cleartext HTTP/2 and http without TLS, and no h2c but https with it', () => {
    expect(appProtocols([])).toEqual({
      'zdmatch/grpc': 'kubernetes.io/h2c', 'zdmatch/http': 'http', 'zdmatch-metrics/metrics': 'http', 'zdmatch-peers/internal': 'kubernetes.io/h2c',
    });
    expect(appProtocols(['--set', 'tls.enabled=true', '--set', 'tls.existingSecret=zdmatch-tls'])).toEqual({
      'zdmatch/grpc': null, 'zdmatch/http': 'https', 'zdmatch-metrics/metrics': 'http', 'zdmatch-peers/internal': null,
    });
  });
});

describe('mesh TLS', () => {
  const TLS = ['--set', 'tls.enabled=true', '--set', 'tls.existingSecret=zdmatch-tls', '--set', 'tls.ca=true'];
  const rawTls = (objs: K8sObject[]) =>
    YAML.parse(objs.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'])!.data['config.yaml']).tls as Record<string, unknown>;

  // Peers dial each other at their pod IPs (ZD_INTERNAL_ADVERTISE), which the one certificate
  // in tls.existingSecret cannot name: the nodes must verify peers as a DNS name instead.
  it('has the nodes verify their peers as the API Service name when TLS is on', () => {
    const objs = rendered([...REDIS, ...NO_AUTH, ...TLS]);
    const env = objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    expect(env.find((e) => e.name === 'ZD_INTERNAL_ADVERTISE')!.value).toBe('$(POD_IP):8803');
    expect(rawTls(objs)).toMatchObject({ enabled: true, ca: '/etc/zdmatch/tls/ca.crt', peerServerName: 'zdmatch.zd.svc' });
    // the node accepts the rendered name (the TLS files exist only in the pod, so TLS itself stays off here)
    expect(boot(objs, { ZD_TLS_ENABLED: 'false', ZD_TLS_CERT: '', ZD_TLS_KEY: '' }).tls.peerServerName).toBe('zdmatch.zd.svc');
    expect(objs.some((o) => o.kind === 'Service' && o.metadata.name === 'zdmatch')).toBe(true); // the Service of that name
  });

  it('derives the name from the release and namespace, and takes tls.peerServerName as given', () => {
    const r = render([...REDIS, ...NO_AUTH, ...TLS], { release: 'edge', namespace: 'prod' });
    expect([r.ok, r.stderr]).toEqual([true, '']);
    const objs = r.objs;
    expect(rawTls(objs).peerServerName).toBe('edge-zdmatch.prod.svc');
    expect(objs.some((o) => o.kind === 'Service' && o.metadata.name === 'edge-zdmatch')).toBe(true);
    const custom = rendered([...REDIS, ...NO_AUTH, ...TLS, '--set', 'tls.peerServerName=peer.zdmatch-peers.zd.svc']);
    expect(rawTls(custom).peerServerName).toBe('peer.zdmatch-peers.zd.svc');
  });

  it('leaves it empty without TLS, and refuses a name with a port', () => {
    const plain = rendered([...REDIS, ...NO_AUTH]);
    expect(rawTls(plain)).toMatchObject({ enabled: false, peerServerName: '' });
    expect(boot(plain).tls.peerServerName).toBe('');
    const bad = render([...REDIS, ...NO_AUTH, ...TLS, '--set', 'tls.peerServerName=zdmatch.zd.svc:8803']);
    expect(bad.ok).toBe(false);
    expect(bad.stderr).toContain('peerServerName');
  });

  // Names the node refuses at startup (src/config/formats.ts host-name): rendered, every pod would crash-loop.
  it.each([
    ['a label that starts with a hyphen', '-peer.zd.svc'],
    ['a label that ends with a hyphen', 'peer-.zd.svc'],
    ['an empty label', 'peer..zd.svc'],
    ['a label of 64 characters', `${'p'.repeat(64)}.zd.svc`],
    ['a name of 254 characters', `${'p'.repeat(63)}.${'q'.repeat(63)}.${'r'.repeat(63)}.${'s'.repeat(62)}`],
  ])('refuses a name with %s, as the node does', (_label, name) => {
    expect(() => loadConfig({ env: {}, args: [], overrides: { 'tls.peerServerName': name } })).toThrow('config tls.peerServerName:');
    const r = render([...REDIS, ...NO_AUTH, ...TLS, '--set', `tls.peerServerName=${name}`]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('peerServerName');
  });

  it('takes a name the node takes: 63-character labels, 253 characters, a final dot', () => {
    const name = `${'p'.repeat(63)}.${'q'.repeat(63)}.${'r'.repeat(63)}.${'s'.repeat(61)}`;
    for (const n of [name, 'peer.zdmatch-peers.zd.svc.']) {
      const objs = rendered([...REDIS, ...NO_AUTH, ...TLS, '--set', `tls.peerServerName=${n}`]);
      expect(rawTls(objs).peerServerName).toBe(n);
      expect(boot(objs, { ZD_TLS_ENABLED: 'false', ZD_TLS_CERT: '', ZD_TLS_KEY: '' }).tls.peerServerName).toBe(n);
    }
  });

  it('is documented in the chart README', () => {
    expect(fs.readFileSync(path.join(CHART, 'README.md'), 'utf8')).toContain('tls.peerServerName');
  });
});

describe('Redis TLS', () => {
  const rawRedis = (objs: K8sObject[]) =>
    YAML.parse(objs.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'])!.data['config.yaml']).redis as Record<string, unknown>;
  const CLUSTER = ['--set', 'redis.clusterNodes={redis-0:6379,redis-1:6379}', ...NO_AUTH];

  it('turns redis.tls on and mounts the CA bundle of redis.tls.caSecret as redis.tlsCa', () => {
    const objs = rendered([...CLUSTER, '--set', 'redis.tls.enabled=true', '--set', 'redis.tls.caSecret=redis-ca', '--set', 'redis.tls.caKey=bundle.pem']);
    expect(rawRedis(objs)).toMatchObject({ tls: true, tlsCa: '/etc/zdmatch/redis-tls/bundle.pem' });
    const pod = objs.find((o) => o.kind === 'Deployment')!.spec.template.spec;
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'redis-tls', mountPath: '/etc/zdmatch/redis-tls', readOnly: true });
    expect(pod.volumes).toContainEqual({ name: 'redis-tls', secret: { secretName: 'redis-ca', items: [{ key: 'bundle.pem', path: 'bundle.pem' }] } });
    // The node takes it as far as the file, which exists only in the pod.
    expect(() => boot(objs)).toThrow(/^config redis\.tlsCa: cannot read \/etc\/zdmatch\/redis-tls\/bundle\.pem/);
  });

  it('uses the system CAs without a caSecret, and is off by default', () => {
    const sys = rendered([...CLUSTER, '--set', 'redis.tls.enabled=true']);
    expect(rawRedis(sys)).toMatchObject({ tls: true, tlsCa: '' });
    expect(boot(sys).redis).toMatchObject({ tls: true, tlsCa: '', clusterNodes: ['redis-0:6379', 'redis-1:6379'] });
    expect(sys.find((o) => o.kind === 'Deployment')!.spec.template.spec.volumes.map((v: { name: string }) => v.name)).not.toContain('redis-tls');
    expect(boot(rendered(CLUSTER)).redis).toMatchObject({ tls: false, tlsCa: '' });
  });

  it('refuses a caSecret without redis.tls.enabled, as the node refuses a CA bundle without TLS', () => {
    const r = render([...CLUSTER, '--set', 'redis.tls.caSecret=redis-ca']);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('redis.tls.caSecret: set redis.tls.enabled as well');
  });

  it('is documented in the chart README', () => {
    expect(fs.readFileSync(path.join(CHART, 'README.md'), 'utf8')).toContain('redis.tls.caSecret');
  });

  it('passes redis.username to a Cluster, and refuses it beside redis.url, which carries its own user', () => {
    expect(boot(rendered([...CLUSTER, '--set', 'redis.username=zd'])).redis).toMatchObject({ username: 'zd', clusterNodes: ['redis-0:6379', 'redis-1:6379'] });
    const r = render([...REDIS, ...NO_AUTH, '--set', 'redis.username=zd']);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('not in redis.username');
  });
});

describe('the chart README', () => {
  it('has an install with the tokens Secret and a trial install with auth off, both of which render and boot', () => {
    const installs = readmeInstalls();
    const withAuth = installs.filter((a) => !a.includes('auth.enabled=false'));
    const trial = installs.filter((a) => a.includes('auth.enabled=false'));
    expect(withAuth.length).toBeGreaterThan(0);
    expect(trial.length).toBeGreaterThan(0);
    for (const args of withAuth) {
      expect(args.join(' ')).toMatch(/auth\.existingSecret=/);
      const objs = rendered(args);
      // redis.existingSecret is created beforehand (the README's kubectl line): give its URL as the kubelet would
      const config = boot(objs, { ZD_REDIS_URL: 'redis://redis:6379' });
      expect(config.auth.enabled).toBe(true);
      expect(config.auth.clientTokensFile).not.toBe('');
    }
    for (const args of trial) expect(boot(rendered(args), { ZD_REDIS_URL: 'redis://redis:6379' }).auth.enabled).toBe(false);
  });

  // An operator sets what the README names: a value renamed in values.yaml but not in the
  // README (or misspelt in it) is refused by the schema, or worse, never looked at.
  it('names only values the chart has, or keys of the node\'s config', () => {
    const values = YAML.parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const prose = fs.readFileSync(path.join(CHART, 'README.md'), 'utf8').replace(/```[\s\S]*?```/g, '');
    const has = (obj: unknown, keys: string[]): boolean => keys.length === 0 ||
      (obj !== null && typeof obj === 'object' && Object.hasOwn(obj, keys[0]!) && has((obj as Record<string, unknown>)[keys[0]!], keys.slice(1)));
    const names = [...prose.matchAll(/`([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)+)(?:=[^`]*)?`/g)]
      .map((m) => m[1]!.replace(/^zdmatch\./, '')) // a value of the chart as an umbrella chart's dependency
      .filter((n) => !/\.(yaml|json|tpl|crt|key)$/.test(n) && n !== 'checkDurations');
    expect(names.length).toBeGreaterThan(30);
    const unknown = names.filter((n) => !has(values, n.split('.')) && !has(schema, n.split('.')));
    expect(unknown).toEqual([]);
  });
});
