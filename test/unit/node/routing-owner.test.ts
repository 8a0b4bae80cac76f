/**
 * Where a node sends the notices of a partition it does not hold: the
 * rendezvous owner among the other live members, remembered per member list
 * (each answer costs a sha1 per member) and computed again the moment the
 * list changes — a stale answer would ring a node that left, and the Step
 * would wait for the next heads resync.
 */
import { ownerOf } from '../../../src/cluster/rendezvous';
import { Routing } from '../../../src/node/routing';

function routingWith(members: { ids: readonly string[] }, held: Set<number>) {
  const leases = { holds: (p: number) => held.has(p) };
  const membership = { liveIds: () => members.ids };
  const unused = {} as never;
  return new Routing('me', 16, leases as never, membership as never, unused, unused, unused, unused, unused, unused, unused, unused, unused);
}

it('names the rendezvous owner among the other members, and itself for a partition it holds', () => {
  const members = { ids: Object.freeze(['a', 'b', 'me']) as readonly string[] };
  const r = routingWith(members, new Set([3]));
  for (let p = 0; p < 16; p++) {
    expect(r.ownerNodeOf(p)).toBe(p === 3 ? 'me' : ownerOf(p, ['a', 'b']));
  }
});

it('computes owners again once the member list changes', () => {
  const members = { ids: Object.freeze(['a', 'b', 'c', 'me']) as readonly string[] };
  const r = routingWith(members, new Set());
  const before = Array.from({ length: 16 }, (_, p) => r.ownerNodeOf(p));
  expect(before).toContain('b');
  // b leaves: a new list (the membership keeps one array per member list).
  members.ids = Object.freeze(['a', 'c', 'me']);
  for (let p = 0; p < 16; p++) {
    expect(r.ownerNodeOf(p)).toBe(ownerOf(p, ['a', 'c']));
    expect(r.ownerNodeOf(p)).not.toBe('b');
  }
});

it('falls back to itself when it is the only member', () => {
  const r = routingWith({ ids: Object.freeze(['me']) }, new Set());
  expect(r.ownerNodeOf(5)).toBe('me');
});
