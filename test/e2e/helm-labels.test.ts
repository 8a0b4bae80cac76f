/**
 * Every object of the chart (deploy/helm/zdmatch) carries the label
 * app.kubernetes.io/version, taken from image.tag. Kubernetes refuses an
 * object whose label value is over 63 characters or holds anything but
 * letters, digits, "-", "_" and "." (beginning and ending with a letter or
 * digit), so the whole release would fail to install. An image pinned to a
 * digest (`image.tag=1.4.0@sha256:…`, which the kubelet pulls as written) and
 * a long tag (an image tag may have 128 characters) keep the image as given
 * and label every object with a valid value: the tag without the digest.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { CHART, useChart, type K8sObject } from '../helpers/helm';

const BASE = ['--set', 'redis.url=redis://redis:6379', '--set', 'auth.enabled=false'];
const MONITORING = ['--api-versions', 'monitoring.coreos.com/v1'];
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

const { render } = useChart();

/** Kubernetes' rule for a label value (apimachinery validation.IsValidLabelValue). */
const validLabelValue = (v: string) => v.length <= 63 && /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(v);

/** [where, key, value] of every label the render sets: on objects and on the pod template. */
function labels(objs: K8sObject[]): [string, string, string][] {
  const out: [string, string, string][] = [];
  for (const o of objs) {
    const where = `${o.kind} ${o.metadata.name}`;
    for (const [k, v] of Object.entries((o.metadata as { labels?: Record<string, string> }).labels ?? {})) out.push([where, k, v]);
    for (const [k, v] of Object.entries(o.spec?.template?.metadata?.labels ?? {})) out.push([`${where} pod template`, k, v as string]);
  }
  return out;
}

function renderTag(tag: string) {
  const r = render([...BASE, ...MONITORING, '--set-string', `image.tag=${tag}`]);
  expect(r.stderr).toBe('');
  expect(r.ok).toBe(true);
  return r.objs;
}

const image = (objs: K8sObject[]) => objs.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0].image as string;
const versions = (objs: K8sObject[]) => new Set(labels(objs).filter(([, k]) => k === 'app.kubernetes.io/version').map(([, , v]) => v));

it('labels every object with a valid version when the image is pinned to a digest', () => {
  const objs = renderTag(`1.4.0@${DIGEST}`);
  expect(image(objs)).toBe(`ghcr.io/zdmatch/zdmatch:1.4.0@${DIGEST}`);
  expect(labels(objs).filter(([, , v]) => !validLabelValue(v))).toEqual([]);
  expect(versions(objs)).toEqual(new Set(['1.4.0']));
});

it('labels every object with a valid version for a tag longer than a label value', () => {
  const tag = `1.4.0-${'build.'.repeat(20)}7`; // 127 characters, a valid image tag
  const objs = renderTag(tag);
  expect(image(objs)).toBe(`ghcr.io/zdmatch/zdmatch:${tag}`);
  expect(labels(objs).filter(([, , v]) => !validLabelValue(v))).toEqual([]);
  const [version] = [...versions(objs)];
  expect(tag.startsWith(version!)).toBe(true);
});

it('labels with the tag as given when it is a plain one, and with appVersion by default', () => {
  expect(versions(renderTag('1.4.0-rc.1'))).toEqual(new Set(['1.4.0-rc.1']));
  const r = render(BASE);
  expect(r.ok).toBe(true);
  const { appVersion } = YAML.parse(fs.readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
  expect(versions(r.objs)).toEqual(new Set([appVersion]));
  expect(image(r.objs)).toBe(`ghcr.io/zdmatch/zdmatch:${appVersion}`); // the image too (values.yaml image.tag: "")
});

describe('selectors', () => {
  const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
    Object.entries(selector).every(([k, v]) => labels[k] === v);

  // A Service that selects no pod has no endpoints (the API, metrics or peer mesh unreachable);
  // a budget that selects none guards nothing. Two releases in one namespace (a new cluster
  // beside the old) must each pick only their own nodes.
  it('has every Service and the disruption budget pick the release\'s own nodes, and no other release\'s', () => {
    const releases = ['zdmatch', 'edge'].map((release) => {
      const r = render([...BASE, '--set', 'podLabels.team=payments'], { release });
      expect(r.stderr).toBe('');
      const dep = r.objs.find((o) => o.kind === 'Deployment')!;
      return { objs: r.objs, podLabels: dep.spec.template.metadata.labels as Record<string, string>, selector: dep.spec.selector.matchLabels };
    });
    for (const [i, { objs, podLabels, selector }] of releases.entries()) {
      const other = releases[1 - i]!.podLabels;
      expect(matches(selector, podLabels)).toBe(true);
      const selectors: [string, Record<string, string>][] = [
        ...objs.filter((o) => o.kind === 'Service').map((s): [string, Record<string, string>] => [s.metadata.name, s.spec.selector]),
        ...objs.filter((o) => o.kind === 'PodDisruptionBudget').map((p): [string, Record<string, string>] => [p.metadata.name, p.spec.selector.matchLabels]),
      ];
      const full = i === 0 ? 'zdmatch' : 'edge-zdmatch'; // the API Service and the budget share the release's full name
      expect(selectors.map(([name]) => name).sort()).toEqual([full, full, `${full}-metrics`, `${full}-peers`]);
      for (const [name, sel] of selectors) expect([name, matches(sel, podLabels), matches(sel, other)]).toEqual([name, true, false]);
    }
  });
});

describe('service account', () => {
  /** The ServiceAccounts the render creates, and the one the pods run as (with its token mount). */
  function accounts(args: string[]) {
    const r = render([...BASE, ...args]);
    expect(r.stderr).toBe('');
    const pod = r.objs.find((o) => o.kind === 'Deployment')!.spec.template.spec;
    const created = r.objs.filter((o) => o.kind === 'ServiceAccount');
    return { created: created.map((o) => o.metadata.name), podRunsAs: pod.serviceAccountName, podMounts: pod.automountServiceAccountToken, saMounts: created.map((o) => o.automountServiceAccountToken) };
  }

  it('runs the pods as the account it creates, named after the release unless serviceAccount.name says, with no token mounted', () => {
    expect(accounts([])).toEqual({ created: ['zdmatch'], podRunsAs: 'zdmatch', podMounts: false, saMounts: [false] });
    expect(accounts(['--set', 'serviceAccount.name=zd-nodes'])).toMatchObject({ created: ['zd-nodes'], podRunsAs: 'zd-nodes' });
    expect(accounts(['--set', 'serviceAccount.automount=true'])).toMatchObject({ podMounts: true, saMounts: [true] });
  });

  it('with serviceAccount.create=false creates none and runs the pods as the named account, else the namespace\'s default', () => {
    expect(accounts(['--set', 'serviceAccount.create=false'])).toMatchObject({ created: [], podRunsAs: 'default' });
    expect(accounts(['--set', 'serviceAccount.create=false', '--set', 'serviceAccount.name=platform-sa'])).toMatchObject({ created: [], podRunsAs: 'platform-sa' });
  });
});
