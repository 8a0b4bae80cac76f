/**
 * The chart's listen ports (config.api/http/internal/metrics.listen in
 * deploy/helm/zdmatch) become the container's ports, the Services' ports and
 * the ports the kubelet checks, which Kubernetes takes from 1 to 65535 only.
 * values.schema.json admits any five digits, so the chart itself refuses a
 * port outside that range, naming the key: one over 65535 the node refuses
 * at startup too, and 0 it would bind to a random free port that no
 * container port, Service or health check points at. Ports at both ends of
 * the range render, reach every object that names them, and boot.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ConfigError, loadConfig } from '../../src/config';
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const POD_ENV = { ZD_CLUSTER_NODE_ID: 'zdmatch-0', ZD_INTERNAL_ADVERTISE: '10.0.0.7:8803', ZD_REDIS_URL: 'redis://redis:6379' };
const KEYS = ['api', 'http', 'internal', 'metrics'] as const;

const chart = useChart();
let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-helm-ports-'));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

let seq = 0;
function write(data: unknown): string {
  const file = path.join(dir, `f-${++seq}.yaml`);
  fs.writeFileSync(file, YAML.stringify(data));
  return file;
}

const configYaml = (objs: K8sObject[]) => objs.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'])!.data['config.yaml'] as string;

/** The key the node names when it refuses the config file (null: it loads). */
function nodeRefuses(config: unknown): string | null {
  try {
    loadConfig({ file: write(config), env: POD_ENV, args: [] });
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.key;
    throw err;
  }
}

function renderListen(key: string, listen: string) {
  return chart.render([...BASE, '--set', `config.${key}.listen=${listen}`]);
}

describe.each(KEYS)('config.%s.listen', (key) => {
  it('is refused over 65535, as the node refuses it at startup', () => {
    const defaults = chart.render(BASE);
    expect(defaults.ok).toBe(true);
    const config = YAML.parse(configYaml(defaults.objs));
    config[key].listen = '0.0.0.0:65536';
    expect(nodeRefuses(config)).toBe(`${key}.listen`);
    const r = renderListen(key, '0.0.0.0:65536');
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(`config.${key}.listen (0.0.0.0:65536): the port must be from 1 to 65535`);
  });

  it('is refused at port 0, which Kubernetes refuses as a container or Service port', () => {
    const r = renderListen(key, '0.0.0.0:0');
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(`config.${key}.listen (0.0.0.0:0): the port must be from 1 to 65535`);
  });

  it.each([1, 65535])('renders port %d into the container, its Service and the config the node boots', (port) => {
    // the other listeners keep their default ports, none of which is 1 or 65535
    const r = renderListen(key, `0.0.0.0:${port}`);
    expect(r.stderr).toBe('');
    expect(r.ok).toBe(true);
    const c = r.objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0];
    const name = key === 'api' ? 'grpc' : key;
    expect(c.ports).toContainEqual({ name, containerPort: port, protocol: 'TCP' });
    const servicePorts = r.objs.filter((o) => o.kind === 'Service').flatMap((s) => s.spec.ports as { port: number; targetPort: string }[]);
    expect(servicePorts).toContainEqual(expect.objectContaining({ port, targetPort: name }));
    expect(nodeRefuses(YAML.parse(configYaml(r.objs)))).toBeNull();
  });
});

describe('two listeners on one port', () => {
  it.each([['api', 'http'], ['internal', 'metrics'], ['api', 'metrics']])('refuses config.%s.listen and config.%s.listen on one port, naming both', (a, b) => {
    const r = chart.render([...BASE, '--set', `config.${a}.listen=0.0.0.0:9000`, '--set', `config.${b}.listen=0.0.0.0:9000`]);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain(`config.${a}.listen`);
    expect(r.stderr).toContain(`config.${b}.listen`);
  });
});

it('advertises the pod IP at the internal port it listens on, sleeps preStop.sleepSeconds before SIGTERM, and passes extraEnv', () => {
  const r = chart.render([...BASE, '--set', 'config.internal.listen=0.0.0.0:9903', '--set', 'preStop.sleepSeconds=7',
    '--set', 'terminationGracePeriodSeconds=60', '--set', 'extraEnv[0].name=ZD_LOG_LEVEL', '--set', 'extraEnv[0].value=debug']);
  expect(r.stderr).toBe('');
  const container = r.objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0];
  const env = Object.fromEntries((container.env as { name: string; value?: string }[]).map((e) => [e.name, e.value]));
  expect(env.ZD_INTERNAL_ADVERTISE).toBe('$(POD_IP):9903');
  expect(env.ZD_LOG_LEVEL).toBe('debug');
  expect(container.lifecycle.preStop.exec.command).toEqual(['sleep', '7']);
});
