/**
 * The metrics DESIGN §10 publishes keep their kind and their labels, as a
 * scrape shows them (`# TYPE` and the label names of each series): the alert
 * rules take increase() of the counters and compare the gauges as they are,
 * and a counter turned gauge (or a label added or renamed) breaks them without
 * a name changing.
 */
import { createMetrics, type BacklogRow } from '../../src/metrics/registry';

/** Name → [kind, label names] as DESIGN §10 (and the rules reading the queue gauges) name them. */
const PUBLISHED: Record<string, [string, string[]]> = {
  dexzd_step_task_queue_entries: ['gauge', ['tenant', 'flow_type', 'step_type']],
  dexzd_step_task_queue_oldest_age_seconds: ['gauge', ['tenant', 'flow_type', 'step_type']],
  dexzd_matching_queued_tasks: ['gauge', []],
  dexzd_matching_unserved_task_queues: ['gauge', ['reason']],
  dexzd_matching_heads_restored_refs_total: ['counter', []],
  dexzd_matching_heads_incomplete_scans_total: ['counter', []],
  dexzd_step_task_queue_incomplete_seeks_total: ['counter', []],
  dexzd_matching_returned_attempts_total: ['counter', ['reason']],
  dexzd_matching_reserve_declined_tasks_total: ['counter', []],
};

async function scrape(): Promise<string> {
  const queues: BacklogRow[] = [{ tenant: 'acme', flowType: 'order', stepType: 'charge', entries: 2, oldestAgeSeconds: 5 }];
  const m = createMetrics({ queuedInMemory: () => 1, backlog: () => ({ queues, unserved: { no_worker: 1, no_supporting_worker: 0 } }) });
  // A series of every unlabelled counter, so that each shows its label names (none) in the scrape.
  m.headsRestored.inc(0);
  m.headsIncompleteScans.inc(0);
  m.incompleteSeeks.inc(0);
  m.reserveDeclines.inc(0);
  return m.registry.metrics();
}

it('exports each published metric with its published kind', async () => {
  const text = await scrape();
  const kinds = Object.fromEntries([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => [x[1]!, x[2]!]));
  const got = Object.fromEntries(Object.keys(PUBLISHED).map((name) => [name, kinds[name]]));
  expect(got).toEqual(Object.fromEntries(Object.entries(PUBLISHED).map(([name, [kind]]) => [name, kind])));
});

it('declares and labels each series of a published metric with its published label names, and no others', async () => {
  const want = Object.fromEntries(Object.entries(PUBLISHED).map(([name, [, l]]) => [name, [...l].sort().join(',')]));
  // What the code may ever set: the label names each metric is declared with.
  const declared = new Map(createMetrics().registry.getMetricsAsArray()
    .map((m) => [m.name, [...((m as unknown as { labelNames?: string[] }).labelNames ?? [])].sort().join(',')] as const));
  expect(Object.fromEntries(Object.keys(PUBLISHED).map((name) => [name, declared.get(name)]))).toEqual(want);
  // What a scrape shows: every series of each metric carries exactly those names; a metric with no series fails too.
  const text = await scrape();
  const seen: Record<string, Set<string>> = {};
  for (const x of text.matchAll(/^([a-z_]+)(?:\{([^}]*)\})? \S+$/gm)) {
    if (!(x[1]! in PUBLISHED)) continue;
    (seen[x[1]!] ??= new Set()).add([...(x[2] ?? '').matchAll(/(\w+)="/g)].map((l) => l[1]!).sort().join(','));
  }
  expect(Object.fromEntries(Object.keys(PUBLISHED).map((name) => [name, [...(seen[name] ?? [])]])))
    .toEqual(Object.fromEntries(Object.entries(want).map(([name, l]) => [name, [l]])));
});

it('gives the reason label of unserved queues and returned attempts exactly the published values', async () => {
  const text = await scrape();
  const reasons = (name: string) => [...text.matchAll(new RegExp(`^${name}\\{reason="([^"]+)"\\}`, 'gm'))].map((x) => x[1]!).sort();
  expect(reasons('dexzd_matching_unserved_task_queues')).toEqual(['no_supporting_worker', 'no_worker']);
  expect(reasons('dexzd_matching_returned_attempts_total')).toEqual(['drain_no_output', 'legacy_no_capacity', 'unknown_type', 'write_failed']);
});
