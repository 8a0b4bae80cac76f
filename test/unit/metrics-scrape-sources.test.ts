/**
 * Values read at scrape time: the process metrics under the names the alert
 * rules select, each direction of the peer links on its own series, and the
 * queue gauges holding only the queues that have a backlog now.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createMetrics, type BacklogRow } from '../../src/metrics/registry';
import { exposedSeries as series } from '../helpers/exposition';

it('exports the process metrics under the dexzd_process_ names the alert rules read', async () => {
  const rules = fs.readFileSync(path.resolve(__dirname, '..', '..', 'deploy', 'prometheus', 'zdmatch-rules.yaml'), 'utf8');
  const wanted = [...new Set([...rules.matchAll(/\bdexzd_process_[a-z0-9_]+/g)].map((m) => m[0]))];
  expect(wanted).toEqual(expect.arrayContaining(['dexzd_process_nodejs_eventloop_lag_p99_seconds', 'dexzd_process_process_start_time_seconds']));
  const { registry } = createMetrics({ defaultMetrics: true });
  const names = new Set([...(await registry.metrics()).matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]));
  expect(wanted.filter((n) => !names.has(n))).toEqual([]);
});

it('counts outbound and inbound peer links each on its own series', async () => {
  const { registry } = createMetrics({ peerLinks: () => ({ outbound: 2, inbound: 5 }) });
  const got = series(await registry.metrics());
  expect([got.get('dexzd_mesh_peer_links{direction="outbound"}'), got.get('dexzd_mesh_peer_links{direction="inbound"}')]).toEqual([2, 5]);
});

it('drops the entries and oldest-age series of a queue whose backlog is gone at the next scrape', async () => {
  let queues: BacklogRow[] = [
    { tenant: 'acme', flowType: 'order', stepType: 'charge', entries: 3, oldestAgeSeconds: 42 },
    { tenant: 'acme', flowType: 'order', stepType: 'ship', entries: 1, oldestAgeSeconds: 7 },
  ];
  const { registry } = createMetrics({ backlog: () => ({ queues, unserved: { no_worker: 0, no_supporting_worker: 0 } }) });
  const charge = '{tenant="acme",flow_type="order",step_type="charge"}';
  const ship = '{tenant="acme",flow_type="order",step_type="ship"}';
  let got = series(await registry.metrics());
  expect([got.get(`dexzd_step_task_queue_entries${charge}`), got.get(`dexzd_step_task_queue_oldest_age_seconds${charge}`)]).toEqual([3, 42]);
  queues = [queues[1]!];
  got = series(await registry.metrics());
  expect([got.has(`dexzd_step_task_queue_entries${charge}`), got.has(`dexzd_step_task_queue_oldest_age_seconds${charge}`)]).toEqual([false, false]);
  expect([got.get(`dexzd_step_task_queue_entries${ship}`), got.get(`dexzd_step_task_queue_oldest_age_seconds${ship}`)]).toEqual([1, 7]);
});
