/**
 * The dispatcher of a clustered node (src/cluster/cluster-dispatcher.ts): this
 * node's own slots first, then what the peers advertised in their capacity
 * snapshots, and offers to this node's gateway or over the mesh. A real
 * CapacityView stands in for the peers; the local gateway is a stand-in that
 * answers as told.
 */
import { CapacityView } from '../../../src/cluster/capacity-view';
import { ClusterDispatcher } from '../../../src/cluster/cluster-dispatcher';
import { createMetrics } from '../../../src/metrics/registry';
import type { Presence } from '../../../src/owner/dispatcher';

const ref = { partition: 0, taskId: 't1', attempt: 0, tenant: 'acme', flowType: 'order', stepType: 'charge', readyAt: 0, path: 'sync' as const };

function setup() {
  const local = { idle: false, presence: 'absent' as Presence, canServe: false, available: false, fetched: false };
  const sent: string[] = [];
  const gateway = {
    hasIdleStepSlot: () => local.idle,
    presence: () => local.presence,
    canServe: () => local.canServe,
    hasAvailable: () => local.available,
    offer: () => { sent.push('me'); return Promise.resolve('taken'); },
  };
  const mesh = {
    offer: (node: string) => { sent.push(node); return node === 'down' ? Promise.reject(new Error('peer gone')) : Promise.resolve('no-slot'); },
  };
  const fetchBell = { fetchedLately: () => local.fetched };
  const view = new CapacityView();
  const metrics = createMetrics();
  const d = new ClusterDispatcher('me', gateway as never, view, mesh as never, fetchBell as never, metrics);
  return { d, view, local, sent, metrics };
}

const peer = (over: Record<string, unknown> = {}) => ({
  node_id: 'peer', seq: 1, entries: [{ tenant: 'acme', flow_type: 'order', idle_step_slots: 1 }],
  workers: [{ tenant: 'acme', app_worker_id: 'w', flow_types: ['order'], step_flow_types: ['order'], idle_step_slots: 1, busy_slots: 0 }],
  declined: [], step_flow_types_advertised: true, fetched_topics: ['acme:order:charge'], ...over,
});

it('reserves a slot of this node before a peer\'s, and a peer\'s when this node has none', () => {
  const s = setup();
  s.view.apply(peer());
  s.local.idle = true;
  expect(s.d.reserveSlot('acme', 'order', 'charge')).toBe('me');
  s.local.idle = false;
  expect(s.d.reserveSlot('acme', 'order', 'charge')).toBe('peer');
  expect(s.d.reserveSlot('acme', 'order', 'charge')).toBeUndefined();
});

it('takes a worker as idle or busy wherever it is, here or at a peer', () => {
  const s = setup();
  expect(s.d.presence('acme', 'w', 'order', 'charge')).toBe('absent');
  s.local.presence = 'busy'; // busy here, unknown to every peer
  expect(s.d.presence('acme', 'w', 'order', 'charge')).toBe('busy');
  s.local.presence = 'absent';
  s.view.apply(peer());
  expect(s.d.presence('acme', 'w', 'order', 'charge')).toBe('idle');
  s.view.apply(peer({ seq: 2, workers: [{ tenant: 'acme', app_worker_id: 'w', flow_types: ['order'], step_flow_types: ['order'], idle_step_slots: 0, busy_slots: 1 }] }));
  expect(s.d.presence('acme', 'w', 'order', 'charge')).toBe('busy');
  s.local.presence = 'idle';
  expect(s.d.presence('acme', 'w', 'order', 'charge')).toBe('idle');
});

it('counts a Step type served, fetched and its flow type worked where any node says so', () => {
  const s = setup();
  expect([s.d.canServe('acme', 'order', 'charge'), s.d.fetchServes('acme', 'order', 'charge'), s.d.hasWorker('acme', 'order')]).toEqual([false, false, false]);
  s.view.apply(peer());
  expect([s.d.canServe('acme', 'order', 'charge'), s.d.fetchServes('acme', 'order', 'charge'), s.d.hasWorker('acme', 'order')]).toEqual([true, true, true]);
  const here = setup();
  Object.assign(here.local, { canServe: true, fetched: true, available: true });
  expect([here.d.canServe('acme', 'order', 'charge'), here.d.fetchServes('acme', 'order', 'charge'), here.d.hasWorker('acme', 'order')]).toEqual([true, true, true]);
});

it('offers to this node\'s gateway or over the mesh, counting each answer, and an offer that threw as an error', async () => {
  const s = setup();
  expect(await s.d.offer('me', ref, 1)).toBe('taken');
  expect(await s.d.offer('peer', ref, 1)).toBe('no-slot');
  await expect(s.d.offer('down', ref, 1)).rejects.toThrow('peer gone');
  expect(s.sent).toEqual(['me', 'peer', 'down']);
  const counts = Object.fromEntries((await s.metrics.offers.get()).values.map((v) => [v.labels.result, v.value]));
  expect(counts).toEqual({ taken: 1, 'no-slot': 1, gone: 0, error: 1 });
});
