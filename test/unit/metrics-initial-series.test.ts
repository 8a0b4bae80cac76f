/**
 * A fresh registry exports every labelled counter the alerts and the dashboard
 * read at 0, one series per label value: a series that first appears at 1
 * shows no increase, so `increase(...[10m]) > 0` (ZdmatchLeaseLost) and the
 * rate() panels would miss the first event. The label lists in
 * src/metrics/registry.ts are held equal to the types of the code that counts
 * (compile time: `npx tsc -p tsconfig.test.json`).
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { UnloadCause } from '../../src/cluster/leases';
import type { RpcSettlement } from '../../src/gateway/slot';
import {
  createMetrics, doorbellKindLabel, ENQUEUE_RESULTS, LEASE_CHANGE_EVENTS, OFFER_RESULTS, RPC_RESULTS,
} from '../../src/metrics/registry';
import type { OfferResult } from '../../src/owner/dispatcher';
import type { EnqueueResult, OutcomeStatusName } from '../../src/store/task-store';
import { pb } from '../../src/wire';
import { exposedSeries as series } from '../helpers/exposition';

type Equal<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Values<T extends readonly string[]> = T[number];

// A value added to one of these types without its label (or the reverse) fails to compile here.
const labelsMatchTheirTypes: [
  Equal<Values<typeof LEASE_CHANGE_EVENTS>, 'acquired' | UnloadCause>,
  Equal<Values<typeof RPC_RESULTS>, RpcSettlement['kind']>,
  Equal<Values<typeof OFFER_RESULTS>, OfferResult | 'error'>,
  Equal<Values<typeof ENQUEUE_RESULTS>, EnqueueResult>,
  // OUTCOME_STATUSES comes from the wire enum at run time: the enum names the statuses the store writes.
  Equal<Exclude<keyof typeof pb.OutcomeStatus, 'OUTCOME_STATUS_UNSPECIFIED'>, OutcomeStatusName>,
] = [true, true, true, true, true];

/** The series a node must export before any event (DESIGN §10 and the operator metrics). */
const STARTS_AT_ZERO: Record<string, Record<string, string[]>> = {
  dexzd_cluster_lease_changes_total: { event: ['acquired', 'lease-lost', 'membership', 'shutdown'] },
  dexzd_matching_rpcs_total: { result: ['result', 'unavailable', 'not-found'] },
  dexzd_matching_returned_attempts_total: { reason: ['unknown_type', 'drain_no_output', 'write_failed', 'legacy_no_capacity'] },
  dexzd_outcomes_total: { status: ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] },
  dexzd_matching_offers_total: { result: ['taken', 'no-slot', 'gone', 'error'] },
  dexzd_step_tasks_enqueued_total: { result: ['created', 'exists', 'ended'] },
  dexzd_mesh_messages_total: { message: ['offer', 'offer_batch', 'invoke_rpc', 'cancel_attempts', 'held_attempts', 'capacity', 'doorbell'] },
  dexzd_mesh_doorbell_events_total: { kind: ['ready', 'outcome', 'attempt', 'flow_deadline', 'fetch'] },
};

async function exposition(): Promise<string> {
  return createMetrics().registry.metrics();
}

it('keeps the label lists equal to the types of the code that counts', () => {
  expect(labelsMatchTheirTypes.every(Boolean)).toBe(true);
});

it('exports every label value of the alerted and dashboarded counters at 0 from the start', async () => {
  const got = series(await exposition());
  const missing: string[] = [];
  for (const [name, labels] of Object.entries(STARTS_AT_ZERO)) {
    for (const [label, values] of Object.entries(labels)) {
      for (const v of values) {
        const key = `${name}{${label}="${v}"}`;
        if (got.get(key) !== 0) missing.push(`${key} = ${got.get(key)}`);
      }
    }
  }
  expect(missing).toEqual([]);
});

it('exports, at 0, every counter series an alert rule or a dashboard panel selects by label value', async () => {
  const root = path.resolve(__dirname, '..', '..');
  const rules = YAML.parse(fs.readFileSync(path.join(root, 'deploy', 'prometheus', 'zdmatch-rules.yaml'), 'utf8')) as { groups: { rules: { expr: string }[] }[] };
  const exprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
  const dashboard = fs.readFileSync(path.join(root, 'deploy', 'grafana', 'zdmatch.json'), 'utf8');
  for (const m of dashboard.matchAll(/"expr": "((?:[^"\\]|\\.)*)"/g)) exprs.push(JSON.parse(`"${m[1]}"`) as string);
  const got = series(await exposition());
  const selected: string[] = [];
  for (const expr of exprs) {
    for (const m of expr.matchAll(/\b(dexzd_[a-z_]+_total)\{([^}]*)\}/g)) {
      for (const [, label, value] of m[2]!.matchAll(/(\w+)="([^"]*)"/g)) {
        if (label !== 'job' && label !== 'namespace') selected.push(`${m[1]}{${label}="${value}"}`);
      }
    }
  }
  expect(selected).toContain('dexzd_cluster_lease_changes_total{event="lease-lost"}');
  expect(selected).toContain('dexzd_matching_rpcs_total{result="unavailable"}');
  expect(selected.filter((s) => got.get(s) !== 0)).toEqual([]);
});

it('names a doorbell kind by its wire name, as the initial series do', () => {
  expect(doorbellKindLabel(pb.DoorbellEvent.Kind.FLOW_DEADLINE)).toBe('flow_deadline');
  expect(doorbellKindLabel(pb.DoorbellEvent.Kind.FETCH)).toBe('fetch');
  expect(doorbellKindLabel(pb.DoorbellEvent.Kind.KIND_UNSPECIFIED)).toBe('unknown');
  expect(doorbellKindLabel(99)).toBe('unknown');
});

it('counts on from 0: the first event makes the series read 1', async () => {
  const m = createMetrics();
  m.leaseChanges.inc({ event: 'lease-lost' });
  const got = series(await m.registry.metrics());
  expect(got.get('dexzd_cluster_lease_changes_total{event="lease-lost"}')).toBe(1);
  expect(got.get('dexzd_cluster_lease_changes_total{event="shutdown"}')).toBe(0);
});
