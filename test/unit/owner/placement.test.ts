/**
 * The sync-match phase of the owner's placement (DESIGN §4): new Steps that
 * found no idle slot wait in memory, a line per Step type, and each freed
 * slot takes the oldest waiter it can run. Pure logic: a dispatcher with
 * slots counted per Step type stands in for the gateways.
 */
import { Placement } from '../../../src/owner/placement';
import { QueueHeads } from '../../../src/owner/heads';
import { Timers } from '../../../src/owner/timers';
import type { Dispatcher, OfferRef } from '../../../src/owner/dispatcher';

const clock = { now: () => Date.now() };
const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never;

function setup(syncMatchWaitMs = 60_000) {
  const free = new Map<string, number>();
  const offered: string[] = [];
  const reserveCalls: string[] = [];
  const toHeads: string[] = [];
  const dispatcher: Dispatcher = {
    reserveSlot: (_t, _f, stepType) => {
      reserveCalls.push(stepType);
      // A slot of a worker that runs this Step type only, or one that runs any ('*').
      for (const kind of [stepType, '*']) {
        const n = free.get(kind) ?? 0;
        if (n <= 0) continue;
        free.set(kind, n - 1);
        return 'node-1';
      }
      return undefined;
    },
    presence: () => 'busy',
    canServe: () => true,
    hasWorker: () => true,
    offer: (_node: string, ref: OfferRef) => {
      offered.push(ref.taskId);
      return Promise.resolve('taken');
    },
  };
  const timers = new Timers(clock);
  const placement = new Placement({
    dispatcher: () => dispatcher, epochOf: () => 1, backlogged: () => false,
    headsAvailable: (q) => toHeads.push(q.peek()?.taskId ?? '(none)'),
  }, timers, 60_000, syncMatchWaitMs, clock, log);
  const queues = new Map<string, QueueHeads>();
  const q = (stepType: string, partition = 0) => {
    const key = `${partition}:${stepType}`;
    if (!queues.has(key)) {
      const heads = new QueueHeads(partition, `acme:order:${stepType}`, 'acme', 'order', stepType);
      heads.more = false; // loaded: the whole queue is in the window
      queues.set(key, heads);
    }
    return queues.get(key)!;
  };
  let readyAt = 0;
  const park = (taskId: string, stepType: string, partition = 0) => placement.place(q(stepType, partition), { taskId, readyAt: readyAt++ }, '');
  /** A slot frees for `stepType` ('*': any type) and the placement hears of it. */
  const freeSlot = (stepType: string) => {
    free.set(stepType, (free.get(stepType) ?? 0) + 1);
    placement.capacity('acme', 'order', 'app');
  };
  return { placement, timers, park, freeSlot, offered, reserveCalls, toHeads };
}

let stop: (() => void) | undefined;
afterEach(() => stop?.());

it('gives each freed slot the oldest waiter, across Step types', () => {
  const s = setup();
  stop = () => s.timers.stop();
  s.park('a1', 'charge');
  s.park('b1', 'ship');
  s.park('a2', 'charge');
  expect(s.placement.size).toBe(3);
  expect(s.placement.hasWaiters('acme', 'order')).toBe(true);
  for (let i = 0; i < 3; i++) s.freeSlot('*');
  expect(s.offered).toEqual(['a1', 'b1', 'a2']);
  expect(s.placement.size).toBe(0);
  expect(s.placement.hasWaiters('acme', 'order')).toBe(false);
});

it('skips a Step type no freed slot can run with one reservation attempt, however many of it wait', () => {
  const s = setup();
  stop = () => s.timers.stop();
  for (let i = 0; i < 500; i++) s.park(`c${i}`, 'charge');
  s.park('s1', 'ship');
  s.reserveCalls.length = 0;
  // The slot that frees belongs to a worker that runs ship only.
  s.freeSlot('ship');
  expect(s.offered).toEqual(['s1']);
  expect(s.reserveCalls).toEqual(['charge', 'ship']);
  // The charge waiters still wait, oldest first.
  s.freeSlot('charge');
  expect(s.offered).toEqual(['s1', 'c0']);
  expect(s.placement.size).toBe(499);
});

it('serves as many waiters as slots are free in one call, then stops', () => {
  const s = setup();
  stop = () => s.timers.stop();
  for (let i = 0; i < 5; i++) s.park(`t${i}`, 'charge');
  s.freeSlot('charge');
  s.freeSlot('charge');
  expect(s.offered).toEqual(['t0', 't1']);
  expect(s.placement.size).toBe(3);
});

it('moves a waiter to the durable queue when its sync-match wait ends, and never offers it from memory after', async () => {
  const s = setup(30);
  stop = () => s.timers.stop();
  s.park('late', 'charge');
  await new Promise((r) => setTimeout(r, 80));
  expect(s.toHeads).toEqual(['late']);
  expect(s.placement.size).toBe(0);
  s.freeSlot('charge');
  expect(s.offered).toEqual([]);
});

it('drops the waiters of a partition that left this node, and only those', () => {
  const s = setup();
  stop = () => s.timers.stop();
  s.park('p0', 'charge', 0);
  s.park('p1', 'charge', 1);
  s.park('p1b', 'ship', 1);
  s.placement.dropPartition(1);
  expect(s.placement.size).toBe(1);
  s.freeSlot('ship');
  s.freeSlot('charge');
  expect(s.offered).toEqual(['p0']);
});
