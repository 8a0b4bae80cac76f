/**
 * With autoscaling.enabled the chart (deploy/helm/zdmatch) renders a
 * HorizontalPodAutoscaler that scales the gateway Deployment on CPU
 * utilization. Two value sets would leave a release that does not scale:
 * autoscaling.minReplicas over maxReplicas, which Kubernetes refuses (the
 * install fails at the API server, after the other objects were sent), and no
 * CPU request on the container (utilization is usage over that request, so
 * the autoscaler reads none and never scales, reporting only
 * FailedGetResourceMetric). The chart refuses both at render time, naming the
 * values; a CPU limit alone is enough, as Kubernetes takes it as the request.
 */
import { useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false', '--set', 'autoscaling.enabled=true'];

const { render } = useChart();

function rendered(args: string[]): K8sObject[] {
  const r = render([...BASE, ...args]);
  expect(r.stderr).toBe('');
  expect(r.ok).toBe(true);
  return r.objs;
}

describe('autoscaling replicas', () => {
  it('refuses minReplicas over maxReplicas, which Kubernetes refuses', () => {
    const r = render([...BASE, '--set', 'autoscaling.minReplicas=5', '--set', 'autoscaling.maxReplicas=4']);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('autoscaling.minReplicas (5) must not exceed autoscaling.maxReplicas (4)');
  });

  it('takes minReplicas equal to maxReplicas, and scales the Deployment it renders', () => {
    const objs = rendered(['--set', 'autoscaling.minReplicas=4', '--set', 'autoscaling.maxReplicas=4', '--set', 'fullnameOverride=edge']);
    const hpa = objs.find((o) => o.kind === 'HorizontalPodAutoscaler')!;
    expect(hpa.spec).toMatchObject({ minReplicas: 4, maxReplicas: 4 });
    const dep = objs.find((o) => o.kind === 'Deployment')!;
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: dep.metadata.name });
    expect(dep.spec.replicas).toBeUndefined(); // the autoscaler owns them
  });
});

describe('autoscaling on CPU', () => {
  // Each pod removed is a drain that moves its partitions and worker streams: the
  // autoscaler must remove them one at a time, minutes apart, not all at once.
  it('targets autoscaling.targetCPUUtilizationPercentage and scales down one pod per 5 minutes', () => {
    const hpa = (args: string[]) => rendered(args).find((o) => o.kind === 'HorizontalPodAutoscaler')!.spec;
    expect(hpa([]).metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
    const spec = hpa(['--set', 'autoscaling.targetCPUUtilizationPercentage=55']);
    expect(spec.metrics[0].resource.target.averageUtilization).toBe(55);
    expect(spec.behavior.scaleDown.policies).toEqual([{ type: 'Pods', value: 1, periodSeconds: 300 }]);
    expect(spec.behavior.scaleDown.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
  });

  it('refuses a container without a CPU request, on which the autoscaler never scales', () => {
    const r = render([...BASE, '--set', 'resources.requests.cpu=null']);
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('autoscaling.enabled: set resources.requests.cpu');
  });

  it('takes a CPU request, or a CPU limit alone (Kubernetes then requests the limit)', () => {
    const cpu = (objs: K8sObject[]) => objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0].resources;
    expect(cpu(rendered([])).requests.cpu).toBe('250m'); // the default
    expect(cpu(rendered(['--set', 'resources.requests.cpu=null', '--set', 'resources.limits.cpu=1'])).limits.cpu).toBe(1);
  });

  it('does not ask for a CPU request without autoscaling', () => {
    const r = render(['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false', '--set', 'resources.requests.cpu=null']);
    expect(r.ok).toBe(true);
    expect(r.objs.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(false);
  });
});
