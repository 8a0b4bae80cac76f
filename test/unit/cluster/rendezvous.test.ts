/**
 * Rendezvous (highest-random-weight) assignment of partitions to nodes
 * (DESIGN §3): every node computes the same map from the same member list,
 * whatever its order; a join moves partitions only to the joining node and a
 * leave moves only the leaver's; the shares come out roughly even. A plain
 * `p % n` over the member list breaks the join, leave and order properties.
 * Pure functions: no Redis, no clock.
 */
import { createHash } from 'node:crypto';
import { ownerOf, targetPartitions } from '../../../src/cluster/rendezvous';

const PARTITIONS = 64;
const NODES = ['n-a', 'n-b', 'n-c', 'n-d', 'n-e'];

/** partition → owner, for every partition. */
const assignment = (ids: readonly string[]): (string | undefined)[] =>
  Array.from({ length: PARTITIONS }, (_, p) => ownerOf(p, ids));

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

it('gives every partition exactly one live owner, and each node targets exactly the partitions it owns', () => {
  // Guards: targetPartitions agreeing with ownerOf, so that the nodes' lease
  // targets neither overlap nor leave a partition unowned.
  for (let n = 1; n <= NODES.length; n++) {
    const ids = NODES.slice(0, n);
    const owners = assignment(ids);
    for (const o of owners) expect(ids).toContain(o);
    const seen = new Map<number, string>();
    for (const id of ids) {
      for (const p of targetPartitions(id, ids, PARTITIONS)) {
        expect(seen.get(p)).toBeUndefined(); // no partition in two target sets
        seen.set(p, id);
        expect(owners[p]).toBe(id);
      }
    }
    expect(seen.size).toBe(PARTITIONS); // none left out
  }
  expect(ownerOf(0, [])).toBeUndefined();
  expect(targetPartitions('n-z', NODES, PARTITIONS).size).toBe(0);
});

it('computes the same assignment from the same members whatever order the list comes in', () => {
  // Guards: every node reaching the same map from its own view of zd:members;
  // an assignment by list position would give two nodes the same partition.
  const ids = NODES.slice(0, 4);
  const expected = assignment([...ids].sort());
  const targets = ids.map((id) => [...targetPartitions(id, [...ids].sort(), PARTITIONS)]);
  for (const order of permutations(ids)) {
    expect(assignment(order)).toEqual(expected);
    expect(ids.map((id) => [...targetPartitions(id, order, PARTITIONS)])).toEqual(targets);
  }
});

it('moves partitions on a join only to the joining node: none changes hands between nodes that were already there', () => {
  // Guards: minimal movement on a join (a `p % n` assignment reshuffles most
  // partitions among the old nodes). Each of five nodes joins each of the
  // others' sets, so the joiner is not always the last id in sort order.
  for (let size = 1; size < NODES.length; size++) {
    for (const joiner of NODES) {
      const before = NODES.filter((id) => id !== joiner).slice(0, size);
      const after = [...before, joiner];
      const was = assignment(before);
      const now = assignment(after);
      const betweenOldNodes = now.flatMap((o, p) => (o !== was[p] && o !== joiner ? [{ p, from: was[p], to: o }] : []));
      expect(betweenOldNodes).toEqual([]);
      // and the joiner does get a share
      expect(now.filter((o) => o === joiner).length).toBeGreaterThan(0);
    }
  }
});

it('moves only the leaving node\'s partitions on a leave; every other partition keeps its owner', () => {
  // Guards: minimal movement on a leave (no partition of a node that stays is
  // handed over, so no heads reload and no lease churn there).
  for (let size = 2; size <= NODES.length; size++) {
    const members = NODES.slice(0, size);
    const was = assignment(members);
    for (const leaver of members) {
      const now = assignment(members.filter((id) => id !== leaver));
      const moved = now.flatMap((o, p) => (o !== was[p] && was[p] !== leaver ? [{ p, from: was[p], to: o }] : []));
      expect(moved).toEqual([]);
      for (const o of now) expect(o).not.toBe(leaver);
    }
  }
});

it('spreads 64 partitions roughly evenly over 3 and 4 nodes', () => {
  // Guards: a hash that ignores the partition (or the node) piling the
  // partitions on a few nodes. The bound is loose: within half and twice the
  // fair share, for two naming schemes.
  for (const names of [NODES, ['zd-0', 'zd-1', 'zd-2', 'zd-3']]) {
    for (const n of [3, 4]) {
      const ids = names.slice(0, n);
      const fair = PARTITIONS / n;
      for (const id of ids) {
        const share = targetPartitions(id, ids, PARTITIONS).size;
        expect(share).toBeGreaterThanOrEqual(Math.floor(fair / 2));
        expect(share).toBeLessThanOrEqual(Math.ceil(fair * 2));
      }
    }
  }
});

it('assigns by the same weights on every build: the first four bytes of sha1("<partition>\\0<node id>"), the highest winning', () => {
  // Nodes of two builds share the cluster during a rolling upgrade: a build that weighed
  // otherwise would target partitions its peers also target, and the two fight over their leases.
  expect(assignment(['n-a', 'n-b', 'n-c']).slice(0, 12))
    .toEqual(['n-c', 'n-c', 'n-c', 'n-b', 'n-b', 'n-b', 'n-a', 'n-a', 'n-b', 'n-a', 'n-a', 'n-a']);
  expect(ownerOf(0, ['n-a'])).toBe('n-a');
  expect(ownerOf(0, [])).toBeUndefined();
});

it('breaks a tie of weights by the lower node id, whatever order the list comes in', () => {
  // These two ids weigh the same for partition 0 (the first four bytes of their sha1 agree).
  const weigh = (id: string) => createHash('sha1').update(`0\0${id}`).digest().readUInt32BE(0);
  expect(weigh('n11713')).toBe(weigh('n40709'));
  expect(ownerOf(0, ['n11713', 'n40709'])).toBe('n11713');
  expect(ownerOf(0, ['n40709', 'n11713'])).toBe('n11713');
});
