/**
 * The capacity a node advertises to its peers (DESIGN §4): idle Step and RPC
 * slots per flow type, each app worker's slots and whether it is stopping, and
 * every decline in force. Peers send Steps and RPCs by it, so a slot that
 * cannot take one must not read as one that can.
 */
import { capacitySnapshot } from '../../../src/gateway/capacity-snapshot';
import { Declines } from '../../../src/gateway/declines';
import { IdleSlots } from '../../../src/gateway/idle-slots';
import { Slot, type SlotRegistration, type SlotState } from '../../../src/gateway/slot';
import { addTo, flowKey, workerKey } from '../../../src/gateway/slot-maps';

function slot(id: string, appWorkerId: string, flowTypes: string[], kind: SlotRegistration['kind'], state: SlotState): Slot {
  const s = new Slot(id, {
    tenant: 'acme', appWorkerId, flowTypes, kind, taskLimit: 4, sdk: 'test', acceptsTaskAfterAck: true, acceptsTaskInAck: false,
  });
  s.state = state;
  return s;
}

it('counts idle slots by kind per flow type and per worker, and tells which flow types each worker runs Steps of', () => {
  const declines = new Declines(1);
  const idle = new IdleSlots(declines);
  const slots = [
    slot('a', 'w1', ['order'], 'STEP_AND_RPC', 'idle'),
    slot('b', 'w1', ['order', 'refund'], 'RPC_ONLY', 'idle'),
    slot('c', 'w1', ['invoice'], 'STEP_AND_RPC', 'busy'),
    slot('d', 'w1', ['audit'], 'STEP_AND_RPC', 'draining'),
    slot('e', 'w2', ['order'], 'RPC_ONLY', 'busy'),
  ];
  const connected = new Map<string, Set<Slot>>();
  const byWorker = new Map<string, Set<Slot>>();
  for (const s of slots) {
    for (const ft of s.reg.flowTypes) addTo(connected, flowKey('acme', ft), s);
    addTo(byWorker, workerKey('acme', s.reg.appWorkerId), s);
    if (s.state === 'idle') idle.add(s);
  }
  connected.set(flowKey('acme', 'gone'), new Set());
  declines.add('acme', 'order', 'ship', 'w1');
  declines.add('acme', 'order', 'bill', 'w2'); // pushes w1's out of the cache: still in force

  const snap = capacitySnapshot(connected, byWorker, new Set([workerKey('acme', 'w2')]), idle, declines);

  const byFlow = Object.fromEntries(snap.entries.map((e) => [e.flow_type, [e.idle_step_slots, e.idle_rpc_slots]]));
  expect(byFlow).toEqual({ order: [1, 1], refund: [0, 1], invoice: [0, 0], audit: [0, 0] });
  expect(snap.entries.every((e) => e.tenant === 'acme')).toBe(true);

  const w1 = snap.workers.find((w) => w.app_worker_id === 'w1')!;
  expect(w1).toMatchObject({ tenant: 'acme', idle_step_slots: 1, idle_rpc_slots: 1, busy_slots: 1, draining: false });
  expect(new Set(w1.flow_types)).toEqual(new Set(['order', 'refund', 'invoice', 'audit']));
  // An RPC-only slot and one finishing its task before it reconnects run no new Step.
  expect(new Set(w1.step_flow_types)).toEqual(new Set(['order', 'invoice']));
  const w2 = snap.workers.find((w) => w.app_worker_id === 'w2')!;
  expect(w2).toMatchObject({ idle_step_slots: 0, idle_rpc_slots: 0, busy_slots: 1, draining: true, step_flow_types: [] });

  expect(new Set(snap.declined.map((d) => `${d.tenant}/${d.flow_type}/${d.type}/${d.app_worker_id}`)))
    .toEqual(new Set(['acme/order/ship/w1', 'acme/order/bill/w2']));
});

it('passes over an app worker whose streams have all gone from its set', () => {
  const declines = new Declines(1);
  const byWorker = new Map<string, Set<Slot>>([[workerKey('acme', 'gone'), new Set()]]);
  const snap = capacitySnapshot(new Map(), byWorker, new Set(), new IdleSlots(declines), declines);
  expect(snap).toEqual({ entries: [], workers: [], declined: [] });
});
