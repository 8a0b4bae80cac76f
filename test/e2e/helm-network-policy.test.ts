/**
 * The peer mesh (config.internal.listen) takes calls without credentials unless
 * tls.ca makes it mutual TLS: whoever reaches its port can run RPCs and cancel
 * attempts of any tenant, bearer-token auth or not. The chart's NetworkPolicy
 * (on by default) lets only the release's own pods reach that port, by its
 * container port's name, while the API, HTTP and metrics ports stay open (or
 * open to `networkPolicy.clientsFrom`).
 */
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const { render } = useChart();

function rendered(args: string[] = []): K8sObject[] {
  const r = render([...BASE, ...args]);
  expect(r.stderr).toBe('');
  expect(r.ok).toBe(true);
  return r.objs;
}

const policies = (objs: K8sObject[]) => objs.filter((o) => o.kind === 'NetworkPolicy');

it('lets only the release\'s pods reach the peer mesh port, and anyone the API, HTTP and metrics ports', () => {
  const objs = rendered();
  const [np, ...more] = policies(objs);
  expect(more).toEqual([]);
  const dep = objs.find((o) => o.kind === 'Deployment')!;
  const podLabels = dep.spec.template.metadata.labels as Record<string, string>;
  const ports = new Map((dep.spec.template.spec.containers[0].ports as { name: string }[]).map((p) => [p.name, p]));
  // the policy applies to the nodes, and its selector picks exactly what the Deployment's pods carry
  for (const [k, v] of Object.entries(np!.spec.podSelector.matchLabels as Record<string, string>)) expect(podLabels[k]).toBe(v);
  expect(np!.spec.policyTypes).toEqual(['Ingress']);
  const rules = np!.spec.ingress as { ports: { port: string }[]; from?: unknown[] }[];
  const byPort = new Map(rules.flatMap((r) => r.ports.map((p) => [p.port, r] as const)));
  // every container port is named by a rule, so none is shut by the policy by mistake
  expect([...byPort.keys()].sort()).toEqual([...ports.keys()].sort());
  const mesh = byPort.get('internal')!;
  expect(mesh.from).toEqual([{ podSelector: { matchLabels: np!.spec.podSelector.matchLabels } }]);
  for (const name of ['grpc', 'http', 'metrics']) expect(byPort.get(name)!.from).toBeUndefined();
});

it('takes clientsFrom for the API, HTTP and metrics ports, and renders no policy when turned off', () => {
  const np = policies(rendered(['--set', 'networkPolicy.clientsFrom[0].namespaceSelector.matchLabels.team=payments']))[0]!;
  const api = (np.spec.ingress as { ports: { port: string }[]; from?: unknown[] }[]).find((r) => r.ports.some((p) => p.port === 'grpc'))!;
  expect(api.from).toEqual([{ namespaceSelector: { matchLabels: { team: 'payments' } } }]);
  expect(policies(rendered(['--set', 'networkPolicy.enabled=false']))).toEqual([]);
});

it('refuses a clientsFrom that is no list', () => {
  const r = render([...BASE, '--set', 'networkPolicy.clientsFrom=everyone']);
  expect(r.ok).toBe(false);
  expect(r.stderr).toMatch(/networkPolicy\/clientsFrom.*want array/);
});
