/**
 * Declines (DESIGN §4): a type a worker declined as unknown is not offered to
 * that worker again. The LRU is bounded by matching.unsupportedTypeCacheEntries;
 * a decline it pushes out still holds until the worker completes a Step, and
 * every decline of a worker drops when all its streams are gone. Workers of two
 * tenants may share an app worker id: one's declines are never the other's.
 */
import { Declines } from '../../../src/gateway/declines';
import { IdleSlots } from '../../../src/gateway/idle-slots';
import { Slot, type SlotRegistration } from '../../../src/gateway/slot';

const reg = (tenant: string, appWorkerId: string, kind: SlotRegistration['kind'] = 'STEP_AND_RPC'): SlotRegistration => ({
  tenant, appWorkerId, flowTypes: ['order'], kind, taskLimit: 4, sdk: 'test',
  acceptsTaskAfterAck: true, acceptsTaskInAck: false,
});

describe('Declines', () => {
  test('a decline the cache pushed out still holds until the worker completes a Step', () => {
    const d = new Declines(1);
    d.add('acme', 'order', 'ship', 'w1');
    d.add('acme', 'order', 'bill', 'w1'); // evicts ship
    expect(d.has('acme', 'order', 'ship', 'w1')).toBe(true);
    expect(d.has('acme', 'order', 'bill', 'w1')).toBe(true);
    expect(d.keys()).toEqual(new Set(['acme\0order\0ship\0w1', 'acme\0order\0bill\0w1']));

    expect(d.liftEvicted('acme', 'w1')).toBe(true);
    expect(d.has('acme', 'order', 'ship', 'w1')).toBe(false);
    expect(d.has('acme', 'order', 'bill', 'w1')).toBe(true);
    expect(d.liftEvicted('acme', 'w1')).toBe(false);
  });

  test('pushed-out declines kept per worker are bounded like the cache: past it the oldest is offered again', () => {
    const d = new Declines(2);
    for (const t of ['a', 'b', 'c', 'd', 'e']) d.add('acme', 'order', t, 'w1');
    // The cache holds d and e; of the pushed-out a, b and c the oldest, a, went.
    expect(['a', 'b', 'c', 'd', 'e'].filter((t) => d.has('acme', 'order', t, 'w1'))).toEqual(['b', 'c', 'd', 'e']);
  });

  test('a completed Step lifts only the pushed-out declines of that worker', () => {
    const d = new Declines(1);
    d.add('acme', 'order', 'ship', 'w1');
    d.add('acme', 'order', 'ship', 'w2'); // evicts w1's
    d.add('acme', 'order', 'bill', 'w3'); // evicts w2's
    expect(d.liftEvicted('acme', 'w1')).toBe(true);
    expect(d.has('acme', 'order', 'ship', 'w1')).toBe(false);
    expect(d.has('acme', 'order', 'ship', 'w2')).toBe(true);
  });

  test('forgetting a worker drops its declines, pushed-out ones too, and none of another tenant\'s worker of the same id', () => {
    const d = new Declines(2);
    d.add('acme', 'order', 'ship', 'w1');
    d.add('globex', 'order', 'ship', 'w1');
    d.add('acme', 'order', 'bill', 'w1'); // evicts acme's ship
    d.forget(reg('acme', 'w1'));
    expect(d.has('acme', 'order', 'ship', 'w1')).toBe(false);
    expect(d.has('acme', 'order', 'bill', 'w1')).toBe(false);
    expect(d.has('globex', 'order', 'ship', 'w1')).toBe(true);
    expect(d.keys()).toEqual(new Set(['globex\0order\0ship\0w1']));
  });

  test('a decline is of one tenant, flow type, type and worker', () => {
    const d = new Declines(8);
    d.add('acme', 'order', 'ship', 'w1');
    expect(d.has('acme', 'order', 'ship', 'w1')).toBe(true);
    expect(d.has('globex', 'order', 'ship', 'w1')).toBe(false);
    expect(d.has('acme', 'refund', 'ship', 'w1')).toBe(false);
    expect(d.has('acme', 'order', 'bill', 'w1')).toBe(false);
    expect(d.has('acme', 'order', 'ship', 'w2')).toBe(false);
  });
});

describe('IdleSlots.pick', () => {
  test('skips the slots of a worker that declined the Step type and keeps to the sticky worker when one is named', () => {
    const d = new Declines(8);
    const idle = new IdleSlots(d);
    const a = new Slot('a', reg('acme', 'w1'));
    const b = new Slot('b', reg('acme', 'w2'));
    idle.add(a);
    idle.add(b);
    expect(idle.pick('acme', 'order', 'ship', 'w2')).toBe(b);
    d.add('acme', 'order', 'ship', 'w1');
    expect(idle.pick('acme', 'order', 'ship')).toBe(b);
    expect(idle.pick('acme', 'order', 'ship', 'w1')).toBeUndefined();
    expect(idle.pick('acme', 'order', 'bill', 'w1')).toBe(a);
    expect(idle.pick('globex', 'order', 'ship')).toBeUndefined();
  });

  test('RPC-only slots are never picked for a Step, and a slot leaves the index when it is taken', () => {
    const idle = new IdleSlots(new Declines(8));
    const r = new Slot('r', reg('acme', 'w1', 'RPC_ONLY'));
    const s = new Slot('s', reg('acme', 'w1'));
    idle.add(r);
    idle.add(s);
    expect(idle.pick('acme', 'order', 'ship')).toBe(s);
    idle.remove(s);
    expect(idle.pick('acme', 'order', 'ship')).toBeUndefined();
    expect(idle.step.size).toBe(0);
    expect(idle.rpc.get('acme\0order')).toEqual(new Set([r]));
  });
});

describe('Declines, once the cache is empty', () => {
  test('a pushed-out decline still holds after every cached decline went with its worker', () => {
    const d = new Declines(1);
    d.add('acme', 'order', 'ship', 'w1');
    d.add('acme', 'order', 'ship', 'w2'); // evicts w1's
    d.forget(reg('acme', 'w2')); // the cache is empty now; w1's pushed-out decline is not
    expect(d.has('acme', 'order', 'ship', 'w1')).toBe(true);
  });
});

describe('IdleSlots.remove', () => {
  test('a slot taken leaves the other idle slots of its flow type in the index', () => {
    const idle = new IdleSlots(new Declines(8));
    const a = new Slot('a', reg('acme', 'w1'));
    const b = new Slot('b', reg('acme', 'w2'));
    idle.add(a);
    idle.add(b);
    idle.remove(a);
    expect(idle.pick('acme', 'order', 'ship')).toBe(b);
    expect(idle.step.get('acme\0order')).toEqual(new Set([b]));
  });
});
