/**
 * A real Prometheus (Debian's package) scrapes a running node every second
 * and evaluates deploy/prometheus/zdmatch-rules.yaml, with the `for:` and the
 * oldest-age threshold shortened: a queue with backlog and no worker fires
 * ZdmatchUnservedTaskQueues and ZdmatchQueueOldestAgeHigh, seen through the
 * Prometheus HTTP API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { Client } from '../../src';
import { REPO_ROOT, startNodeProcess, type NodeProcess } from '../helpers/node-process';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { requireCommand } from '../helpers/tools';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

interface PromAlert { labels: Record<string, string>; state: string; value: string }

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** The shipped rules with every `for:` at 0s and the oldest-age threshold at 1 s. */
function testRules(): string {
  const doc = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'prometheus', 'zdmatch-rules.yaml'), 'utf8'));
  for (const g of doc.groups) {
    g.interval = '1s';
    for (const r of g.rules) {
      if (r.for) r.for = '0s';
      if (r.alert === 'ZdmatchQueueOldestAgeHigh') {
        expect(r.expr).toContain('> 300');
        r.expr = r.expr.replace('> 300', '> 1');
      }
    }
  }
  return YAML.stringify(doc);
}

let node: NodeProcess | undefined;
let prom: ChildProcess | undefined;
let dir: string | undefined;
let promLog = '';

afterAll(async () => {
  if (prom && prom.exitCode === null) {
    const exited = new Promise((r) => prom!.once('exit', r));
    prom.kill('SIGTERM');
    const t = setTimeout(() => prom!.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  await node?.kill('SIGKILL');
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it('fires the unserved-queue and backlog alerts for a queue with backlog and no worker', async () => {
  const prometheus = requireCommand('prometheus', 'prometheus');
  node = await startNodeProcess({
    redisUrl: redis.url, keyPrefix: uniquePrefix('prom'),
    config: { cluster: { partitions: 4 }, matching: { syncMatchWait: '50ms', stickyWait: '100ms' }, log: { level: 'warn' } },
  });

  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-prom-'));
  fs.writeFileSync(path.join(dir, 'rules.yaml'), testRules());
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), YAML.stringify({
    global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '900ms' },
    rule_files: [path.join(dir, 'rules.yaml')],
    scrape_configs: [{ job_name: 'zdmatch', static_configs: [{ targets: [node.metricsAddress], labels: { namespace: 'e2e' } }] }],
  }));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  prom = spawn(prometheus, [
    `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  prom.stdout!.on('data', (c: Buffer) => (promLog += c.toString()));
  prom.stderr!.on('data', (c: Buffer) => (promLog += c.toString()));
  await waitFor(async () => (await fetch(`${base}/-/ready`, { signal: AbortSignal.timeout(1000) })).ok, {
    timeoutMs: 20_000, intervalMs: 200, description: `prometheus ready\n${promLog.slice(-2000)}`,
  });

  // Backlog with no worker: a Step enqueued for a flow type nobody serves.
  const client = new Client({ address: node.apiAddress, defaultTimeoutMs: 5000 });
  try {
    await client.enqueueStep({ tenant: 'acme', flowId: 'f-1', flowType: 'order', stepType: 'charge', stepExecutionId: 'charge-1', input: '{}' });
  } finally {
    client.close();
  }

  // The target is up and its rules load.
  await waitFor(async () => {
    const r = await getJson<{ data: { activeTargets: { health: string }[] } }>(`${base}/api/v1/targets`);
    return r.data.activeTargets.some((t) => t.health === 'up');
  }, { timeoutMs: 15_000, intervalMs: 250, description: 'prometheus scrapes the node' });
  const rules = await getJson<{ data: { groups: { rules: unknown[] }[] } }>(`${base}/api/v1/rules`);
  expect(rules.data.groups.flatMap((g) => g.rules).length).toBeGreaterThan(5);

  const firing = async (name: string) => {
    const r = await getJson<{ data: { alerts: PromAlert[] } }>(`${base}/api/v1/alerts`);
    return r.data.alerts.find((a) => a.labels.alertname === name && a.state === 'firing');
  };
  const describeSeries = async (metric: string) => {
    const r = await getJson<{ data: { result: { metric: Record<string, string>; value: [number, string] }[] } }>(
      `${base}/api/v1/query?query=${encodeURIComponent(metric)}`).catch((e: Error) => ({ data: { result: [] }, error: e.message }));
    return JSON.stringify(r.data.result.map((s) => ({ ...s.metric, value: s.value[1] })));
  };
  let unserved: PromAlert | undefined;
  try {
    unserved = await waitFor(() => firing('ZdmatchUnservedTaskQueues'), { timeoutMs: 25_000, intervalMs: 500, description: 'ZdmatchUnservedTaskQueues firing' });
  } catch (err) {
    throw new Error(`${(err as Error).message}; dexzd_matching_unserved_task_queues as scraped: ${await describeSeries('dexzd_matching_unserved_task_queues')}`);
  }
  expect(unserved.labels).toMatchObject({ reason: 'no_worker', namespace: 'e2e', severity: 'warning' });

  let old: PromAlert | undefined;
  try {
    old = await waitFor(() => firing('ZdmatchQueueOldestAgeHigh'), { timeoutMs: 15_000, intervalMs: 500, description: 'ZdmatchQueueOldestAgeHigh firing' });
  } catch (err) {
    throw new Error(`${(err as Error).message}; dexzd_step_task_queue_oldest_age_seconds as scraped: ${await describeSeries('dexzd_step_task_queue_oldest_age_seconds')}`);
  }
  expect(old.labels).toMatchObject({ tenant: 'acme', flow_type: 'order', step_type: 'charge' });
  const entries = await describeSeries('sum(dexzd_step_task_queue_entries{tenant="acme",flow_type="order",step_type="charge"})');
  expect(JSON.parse(entries)[0]?.value).toBe('1');
}, 90_000);
