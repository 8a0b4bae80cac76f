/**
 * The slots gauge (dexzd_gateway_slots{kind,state}): a slot counts as idle only
 * while it can take a task; busy and draining slots (a stream told to reconnect,
 * finishing its task) count as busy, so a drain never reads as spare capacity.
 */
import { slotCounts } from '../../../src/gateway/capacity-snapshot';
import { Slot, type SlotState } from '../../../src/gateway/slot';

const reg = (kind: 'STEP_AND_RPC' | 'RPC_ONLY') => ({
  tenant: 'acme', appWorkerId: 'w1', flowTypes: ['order'], kind, taskLimit: 4, sdk: 'test',
  acceptsTaskAfterAck: true, acceptsTaskInAck: false,
});

function slot(id: string, kind: 'STEP_AND_RPC' | 'RPC_ONLY', state: SlotState): Slot {
  const s = new Slot(id, reg(kind));
  s.state = state;
  return s;
}

it('counts idle slots as idle and busy or draining ones as busy, per kind', () => {
  const counts = slotCounts([
    slot('a', 'STEP_AND_RPC', 'idle'), slot('b', 'STEP_AND_RPC', 'busy'), slot('c', 'STEP_AND_RPC', 'draining'),
    slot('d', 'STEP_AND_RPC', 'draining'), slot('e', 'RPC_ONLY', 'idle'), slot('f', 'RPC_ONLY', 'draining'),
  ]);
  const sorted = [...counts].sort((x, y) => `${x.kind}${x.state}`.localeCompare(`${y.kind}${y.state}`));
  expect(sorted).toEqual([
    { kind: 'RPC_ONLY', state: 'busy', count: 1 },
    { kind: 'RPC_ONLY', state: 'idle', count: 1 },
    { kind: 'STEP_AND_RPC', state: 'busy', count: 3 },
    { kind: 'STEP_AND_RPC', state: 'idle', count: 1 },
  ]);
});
