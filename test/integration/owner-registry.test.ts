/**
 * The node-wide owner over a real redis-server (src/owner/registry.ts): which
 * heads it offers, in what order, and what a partition given up leaves behind.
 * The dispatcher is a stand-in that records the offers and answers them when
 * the test says.
 */
import type { Dispatcher, OfferRef, OfferResult } from '../../src/owner/dispatcher';
import { OwnerRegistry, type OwnerHooks } from '../../src/owner/registry';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const s = useTaskStore(redis, 'oreg');
const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never;

interface Sent {
  ref: OfferRef;
  answer: (r: OfferResult) => void;
  fail: (e: Error) => void;
}

let current: OwnerRegistry | undefined;
afterEach(() => current?.stop());

/** A registry whose dispatcher has `slots` idle slots of every type on node n1 and holds each offer until answered. */
function registry(slots = 100, runs: (stepType: string) => boolean = () => true, syncMatchWaitMs = 0) {
  const sent: Sent[] = [];
  let idle = slots;
  const dispatcher = {
    reserveSlot: (_tenant: string, _flowType: string, stepType: string) => (idle > 0 && runs(stepType) ? (idle--, 'n1') : undefined),
    presence: () => 'idle',
    canServe: () => true,
    fetchServes: () => false,
    hasWorker: () => true,
    offer: (_node: string, ref: OfferRef) => new Promise<OfferResult>((answer, fail) => void sent.push({ ref, answer, fail })),
  } satisfies Dispatcher;
  const hooks = {
    isNodeGone: async () => false,
    leaseMoved: () => undefined,
    outcomeWritten: () => undefined,
    headsRestored: () => undefined,
    headsIncompleteScan: () => undefined,
    incompleteSeek: () => undefined,
    backlogChanged: () => undefined,
    peersBacklogged: () => false,
    cancelAttempts: () => undefined,
    heldAttempts: async () => undefined,
    taskFetchable: () => undefined,
  } satisfies OwnerHooks;
  const r = new OwnerRegistry(s.client, s.keys, s.store, hooks, { stickyWaitMs: 0, syncMatchWaitMs, headsResyncIntervalMs: 0, backlogCountIntervalMs: 3_600_000 },
    { now: () => Date.now() }, log);
  r.setDispatcher(dispatcher);
  current = r;
  return { r, sent, addSlots: (n: number) => void (idle += n) };
}

/** Entries in partition `p`'s queue `name`, ready at the given times. */
async function queued(p: number, name: string, entries: [string, number][]): Promise<void> {
  await s.client.sadd(s.keys.queues(p), name);
  for (const [id, at] of entries) await s.client.zadd(s.keys.queue(p, name), at, id);
}

const lease = (partition: number, epoch = 1) => ({ partition, epoch, token: `n0:${epoch}` });

/** A registry that owns partition 0 under `lease(0)` and has offered its one head, c1. */
async function oneHeadOffered() {
  await queued(0, 'acme:order:charge', [['c1', Date.now() - 1000]]);
  const reg = registry();
  const held = lease(0);
  await reg.r.acquired(held);
  await waitFor(() => reg.sent.length === 1, { description: 'the head offered' });
  return { ...reg, held };
}
const flush = () => new Promise((res) => setTimeout(res, 20));


it('offers the heads of every Step type of a flow type oldest first, across partitions', async () => {
  const t0 = Date.now() - 10_000;
  await queued(0, 'acme:order:charge', [['c1', t0 + 1], ['c3', t0 + 3]]);
  await queued(1, 'acme:order:ship', [['s2', t0 + 2], ['s4', t0 + 4]]);
  const { r, sent, addSlots } = registry(0);
  await r.acquired(lease(0));
  await r.acquired(lease(1));
  addSlots(4);
  r.capacityAvailable('acme', 'order', 'w1');
  await waitFor(() => sent.length === 4, { description: 'every head offered' });
  expect(sent.map((o) => o.ref.taskId)).toEqual(['c1', 's2', 'c3', 's4']);
});

it('puts a head whose offer found no slot back, and offers it first once a slot is idle', async () => {
  const t0 = Date.now() - 10_000;
  await queued(0, 'acme:order:charge', [['c1', t0 + 1], ['c2', t0 + 2]]);
  const { r, sent, addSlots } = registry(1);
  await r.acquired(lease(0));
  await waitFor(() => sent.length === 1, { description: 'the first head offered' });
  expect(sent[0]!.ref.taskId).toBe('c1');
  sent[0]!.answer('no-slot');
  await flush();
  expect(sent).toHaveLength(1); // no idle slot left
  addSlots(1);
  r.capacityAvailable('acme', 'order', 'w1');
  await waitFor(() => sent.length === 2, { description: 'the head offered again' });
  expect(sent[1]!.ref.taskId).toBe('c1');
});

it('gives up a partition at once when its lease was lost, and waits for its offers out when it hands it over', async () => {
  const { r, sent, held } = await oneHeadOffered();
  let handedOver = false;
  const handover = r.unload(held, 'membership').then(() => void (handedOver = true));
  await flush();
  expect(handedOver).toBe(false); // its offer is out
  expect(r.get(0)).toBeUndefined();
  await s.client.zrem(s.keys.queue(0, 'acme:order:charge'), 'c1'); // started
  sent[0]!.answer('taken');
  await handover;

  const again = lease(0, 2);
  await queued(0, 'acme:order:charge', [['c2', Date.now() - 1000]]);
  await r.acquired(again);
  await waitFor(() => sent.length === 2, { description: 'the head offered' });
  const started = Date.now();
  await r.unload(again, 'lease-lost');
  expect(Date.now() - started).toBeLessThan(200);
});

it('leaves a partition acquired since alone when an unload names its earlier lease', async () => {
  const { r } = registry();
  const first = lease(0, 1);
  await r.acquired(first);
  await r.acquired(lease(0, 2));
  const owner = r.get(0)!;
  await r.unload(first, 'membership');
  expect(r.get(0)).toBe(owner);
  expect(owner.active).toBe(true);
});

it('offers nothing more of a partition given up, even once it is owned here again', async () => {
  const t0 = Date.now() - 10_000;
  await queued(0, 'acme:order:charge', [['c1', t0 + 1], ['c2', t0 + 2]]);
  const { r, sent, addSlots } = registry(0);
  const held = lease(0);
  await r.acquired(held);
  await flush();
  expect(sent).toEqual([]); // no idle slot: both heads wait in the lines
  await r.unload(held, 'shutdown');
  addSlots(5);
  r.capacityAvailable('acme', 'order', 'w1');
  await flush();
  expect(sent).toEqual([]);

  // Owned again: the new owner's heads are offered, each once.
  await r.acquired(lease(0, 2));
  await waitFor(() => sent.length === 2, { description: 'the heads offered' });
  await flush();
  expect(sent.map((o) => o.ref.taskId)).toEqual(['c1', 'c2']);
});

it('lets no new Step start at enqueue while its queue has a backlog here or a partition loads', async () => {
  await queued(0, 'acme:order:charge', [['c1', Date.now() - 1000]]);
  const { r, sent } = registry(0);
  const loading = r.acquired(lease(0));
  expect(r.mayStartAtEnqueue(1, 'acme:order:charge', 'acme', 'order')).toBe(false); // partition 0 is loading
  expect(r.mayStartAtEnqueue(0, 'acme:order:ship', 'acme', 'order')).toBe(false); // its own partition is loading
  await loading;
  expect(r.mayStartAtEnqueue(0, 'acme:order:charge', 'acme', 'order')).toBe(false); // its backlog
  expect(r.mayStartAtEnqueue(1, 'acme:order:charge', 'acme', 'order')).toBe(false); // a backlog in another partition
  expect(r.mayStartAtEnqueue(0, 'acme:order:ship', 'acme', 'order')).toBe(true);
  expect(sent).toEqual([]);
});

it('offers the heads of a partition owned here again once each, none left over from before it was given up', async () => {
  const t0 = Date.now() - 10_000;
  await queued(0, 'acme:order:charge', [['c1', t0 + 1], ['c2', t0 + 2]]);
  const { r, sent, addSlots } = registry(0);
  const held = lease(0);
  await r.acquired(held);
  await flush(); // no idle slot: both heads wait in the lines
  await r.unload(held, 'shutdown');
  await r.acquired(lease(0, 2));
  addSlots(5);
  r.capacityAvailable('acme', 'order', 'w1');
  await waitFor(() => sent.length >= 2, { description: 'the heads offered' });
  await flush();
  expect(sent.map((o) => o.ref.taskId)).toEqual(['c1', 'c2']);
});

it('does not offer again a head whose offer, out when its partition was given up, found no slot', async () => {
  const { r, sent, held } = await oneHeadOffered();
  await r.unload(held, 'lease-lost');
  await r.acquired(lease(0, 2)); // back here while the first offer is still out
  await waitFor(() => sent.length === 2, { description: 'the new owner\'s head offered' });
  sent[0]!.answer('no-slot'); // the first offer's answer comes back to the queue given up
  await flush();
  expect(sent.map((o) => o.ref.taskId)).toEqual(['c1', 'c1']);
});

it('offers the heads of a Step type some slot runs past older heads of a type none runs', async () => {
  const t0 = Date.now() - 10_000;
  await queued(0, 'acme:order:charge', [['c1', t0 + 1], ['c2', t0 + 2]]);
  await queued(0, 'acme:order:ship', [['s3', t0 + 3]]);
  const { r, sent } = registry(100, (stepType) => stepType === 'ship');
  await r.acquired(lease(0));
  await waitFor(() => sent.length >= 1, { description: 'a head offered' });
  await flush();
  expect(sent.map((o) => o.ref.taskId)).toEqual(['s3']);
});

it('loads a partition again while it is still owned here when its first load failed', async () => {
  // The queue set of the wrong type: SMEMBERS fails, as a Redis out of reach for a moment would.
  await s.client.set(s.keys.queues(0), 'not-a-set');
  const { r, sent } = registry();
  await r.acquired(lease(0));
  expect(r.get(0)?.loaded).toBe(false);
  await s.client.del(s.keys.queues(0));
  await queued(0, 'acme:order:charge', [['c1', Date.now() - 1000]]);
  // Left loading, the partition would offer nothing and hold its peers' starts at enqueue for as long as the lease lasts.
  await waitFor(() => r.get(0)?.loaded === true, { timeoutMs: 3000, description: 'the partition loaded on its retry' });
  await waitFor(() => sent.length === 1, { description: 'its head offered' });
  expect(sent[0]!.ref.taskId).toBe('c1');
});

it('lets go of the Steps of a partition given up that waited here in memory for a slot', async () => {
  const { r, sent } = registry(0, () => true, 60_000);
  const held = lease(0);
  await r.acquired(held);
  expect(r.taskEnqueued(0, 'acme:order:charge', 'c1', Date.now(), '')).toBe(true);
  expect(r.waitingInMemory).toBe(1); // no idle slot: it waits for one (sync match)
  expect(r.mayStartAtEnqueue(1, 'acme:order:ship', 'acme', 'order')).toBe(false);
  await r.unload(held, 'membership');
  // Its new owner reloads it from the queue: held here, it would keep every new Step of the
  // flow type from starting at enqueue for the whole sync-match wait.
  expect(r.waitingInMemory).toBe(0);
  expect(r.mayStartAtEnqueue(1, 'acme:order:ship', 'acme', 'order')).toBe(true);
  expect(sent).toEqual([]);
});
