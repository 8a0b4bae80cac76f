/**
 * The sync-match phase of the owner's placement (DESIGN §4): new Steps that
 * found no idle slot wait in memory, a line per Step type, and each freed
 * slot takes the oldest waiter it can run. Pure logic: a dispatcher with
 * slots counted per Step type stands in for the gateways.
 */
import { Placement } from '../../../src/owner/placement';
import { QueueHeads } from '../../../src/owner/heads';
import { Timers } from '../../../src/owner/timers';
import type { Dispatcher, OfferRef, Presence } from '../../../src/owner/dispatcher';

const clock = { now: () => Date.now() };
const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never;

function setup(syncMatchWaitMs = 60_000, stickyWaitMs = 60_000) {
  const free = new Map<string, number>();
  const offered: string[] = [];
  const reserveCalls: string[] = [];
  const toHeads: string[] = [];
  /** What each offer answers: taken, unless a test sets another answer. */
  const answer: { result: Promise<'taken' | 'no-slot' | 'gone'> } = { result: Promise.resolve('taken') };
  /** What the dispatcher and host say of the sticky worker, the backlog and the partition. */
  const env: { presence: Presence; backlogged: boolean; canServe: boolean; epoch: number | undefined } = {
    presence: 'busy', backlogged: false, canServe: true, epoch: 1,
  };
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
    presence: () => env.presence,
    canServe: () => env.canServe,
    fetchServes: () => false,
    hasWorker: () => true,
    offer: (_node: string, ref: OfferRef) => {
      offered.push(ref.taskId);
      return answer.result;
    },
  };
  const timers = new Timers(clock);
  /** Offers out by partition, as the host hears of them. */
  const out = new Map<number, number>();
  const placement = new Placement({
    dispatcher: () => dispatcher, epochOf: () => env.epoch, backlogged: () => env.backlogged,
    headsAvailable: (q) => toHeads.push(q.peek()?.taskId ?? '(none)'),
    offerSent: (p) => out.set(p, (out.get(p) ?? 0) + 1),
    offerSettled: (p) => out.set(p, (out.get(p) ?? 0) - 1),
  }, timers, stickyWaitMs, syncMatchWaitMs, clock, log);
  const queues = new Map<string, QueueHeads>();
  const q = (stepType: string, partition = 0, flowType = 'order') => {
    const key = `${partition}:${flowType}:${stepType}`;
    if (!queues.has(key)) {
      const heads = new QueueHeads(partition, `acme:${flowType}:${stepType}`, 'acme', flowType, stepType);
      heads.more = false; // loaded: the whole queue is in the window
      queues.set(key, heads);
    }
    return queues.get(key)!;
  };
  let readyAt = 0;
  const park = (taskId: string, stepType: string, partition = 0) => placement.place(q(stepType, partition), { taskId, readyAt: readyAt++ }, '');
  /** A Step of `flowType` whose flow remembers app worker `sticky` (connected and busy). */
  const parkSticky = (taskId: string, sticky: string, flowType = 'order') =>
    placement.place(q('charge', 0, flowType), { taskId, readyAt: readyAt++ }, sticky);
  /** A slot frees for `stepType` ('*': any type) and the placement hears of it. */
  const freeSlot = (stepType: string, appWorkerId = 'app', flowType = 'order') => {
    free.set(stepType, (free.get(stepType) ?? 0) + 1);
    placement.capacity('acme', flowType, appWorkerId);
  };
  return { placement, timers, q, park, parkSticky, freeSlot, free, offered, reserveCalls, toHeads, out, answer, env };
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

it('tells its host of every offer it sends and of its settling, taken, bounced or failed', async () => {
  const s = setup();
  stop = () => s.timers.stop();
  let answer!: (r: 'taken' | 'no-slot') => void;
  let fail!: (e: Error) => void;
  s.park('a1', 'charge', 3);
  s.park('a2', 'charge', 3);
  s.park('b1', 'charge', 5);
  s.answer.result = new Promise((resolve) => (answer = resolve));
  s.freeSlot('charge');
  s.answer.result = new Promise((_resolve, reject) => (fail = reject));
  s.freeSlot('charge');
  s.answer.result = Promise.resolve('no-slot');
  s.freeSlot('charge');
  expect(s.offered).toEqual(['a1', 'a2', 'b1']);
  expect([s.out.get(3), s.out.get(5)]).toEqual([2, 1]);
  await Promise.resolve();
  expect([s.out.get(3), s.out.get(5)]).toEqual([2, 0]); // the bounce settled
  answer('taken');
  fail(new Error('peer gone'));
  await new Promise((r) => setImmediate(r));
  expect(s.out.get(3)).toBe(0);
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

it('gives a freed slot of the sticky worker its oldest waiter of that flow type, and only that', () => {
  const s = setup();
  stop = () => s.timers.stop();
  s.parkSticky('o1', 'W');
  s.parkSticky('i1', 'W', 'invoice');
  s.parkSticky('o2', 'W');
  s.parkSticky('x1', 'X');
  expect(s.placement.size).toBe(4);
  s.freeSlot('*', 'W'); // a slot of W that runs the order flow type
  s.freeSlot('*', 'W');
  expect(s.offered).toEqual(['o1', 'o2']);
  // W's invoice waiter and X's waiter still wait for their own workers.
  expect(s.placement.size).toBe(2);
  s.freeSlot('*', 'W', 'invoice');
  expect(s.offered).toEqual(['o1', 'o2', 'i1']);
});

it('stops at the first sticky waiter it finds no slot for', () => {
  const s = setup();
  stop = () => s.timers.stop();
  for (let i = 0; i < 300; i++) s.parkSticky(`o${i}`, 'W');
  s.reserveCalls.length = 0;
  s.freeSlot('*', 'W');
  expect(s.offered).toEqual(['o0']);
  // One attempt that found a slot, one that did not, whatever waits behind it.
  expect(s.reserveCalls).toEqual(['charge', 'charge']);
});

it('moves every sticky waiter of a worker that left on to sync-match at once', () => {
  const s = setup();
  stop = () => s.timers.stop();
  s.parkSticky('o1', 'W');
  s.parkSticky('i1', 'W', 'invoice');
  s.placement.workerUnavailable('acme', 'W');
  // Now sync-match waiters: any worker's free slot of the flow type takes them.
  expect(s.placement.size).toBe(2);
  s.freeSlot('*', 'other');
  s.freeSlot('*', 'other', 'invoice');
  expect(s.offered).toEqual(['o1', 'i1']);
});

it('hands a Step made ready again while its offer was out to the heads once the offer is taken', async () => {
  // Guards the answer of a placement offer keeping a ready notice that came meanwhile (the
  // worker released it at once): the id was forgotten and the Step waited for the backlog count.
  const s = setup();
  stop = () => s.timers.stop();
  let answer!: (r: 'taken') => void;
  s.park('a1', 'charge');
  s.answer.result = new Promise((resolve) => (answer = resolve));
  s.freeSlot('charge');
  expect(s.offered).toEqual(['a1']);
  s.q('charge').add({ taskId: 'a1', readyAt: 7 }); // released while the offer's answer is on its way
  expect(s.toHeads).toEqual([]);
  answer('taken');
  await new Promise((r) => setImmediate(r));
  expect(s.toHeads).toEqual(['a1']);
});

it('keeps a sticky Step whose offer bounced waiting for its busy worker', async () => {
  // Guards DESIGN §4's sticky phase across a bounce (the worker's slot was taken before the
  // offer reached it): the Step went to the general heads, and any worker could take it.
  const s = setup();
  stop = () => s.timers.stop();
  s.parkSticky('o1', 'W');
  s.answer.result = Promise.resolve('no-slot');
  s.freeSlot('*', 'W');
  expect(s.offered).toEqual(['o1']);
  await new Promise((r) => setImmediate(r));
  expect(s.toHeads).toEqual([]);
  expect(s.placement.size).toBe(1); // waits for W again
  s.freeSlot('*', 'other'); // a slot of another worker does not take it
  expect(s.offered).toEqual(['o1']);
  s.answer.result = Promise.resolve('taken');
  s.freeSlot('*', 'W');
  expect(s.offered).toEqual(['o1', 'o1']);
});

it('gives a sticky Step whose offer bounced the rest of its sticky wait, not a new one', async () => {
  jest.useFakeTimers({ now: 10_000 });
  try {
    const s = setup(60_000, 1_000);
    stop = () => s.timers.stop();
    s.parkSticky('o1', 'W');
    await jest.advanceTimersByTimeAsync(800);
    s.answer.result = Promise.resolve('no-slot');
    s.freeSlot('*', 'W');
    await jest.advanceTimersByTimeAsync(0);
    expect(s.placement.size).toBe(1);
    await jest.advanceTimersByTimeAsync(250); // 1 050 ms after it was placed: its sticky phase is over
    s.answer.result = Promise.resolve('taken');
    s.freeSlot('*', 'other'); // now a sync-match waiter: any worker's slot takes it
    expect(s.offered).toEqual(['o1', 'o1']);
  } finally {
    jest.useRealTimers();
  }
});

describe('where a new Step goes first', () => {
  it('offers a Step at once to its idle sticky worker, and lets it wait for that worker when the offer bounces', async () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.env.presence = 'idle';
    s.answer.result = Promise.resolve('no-slot');
    s.freeSlot('*', 'W');
    s.parkSticky('o1', 'W');
    expect(s.offered).toEqual(['o1']);
    await new Promise((r) => setImmediate(r));
    expect(s.placement.size).toBe(1); // its sticky phase goes on
    s.answer.result = Promise.resolve('taken');
    s.freeSlot('*', 'other');
    expect(s.offered).toEqual(['o1']);
    s.freeSlot('*', 'W');
    expect(s.offered).toEqual(['o1', 'o1']);
  });

  it('keeps a Step for its sticky worker while that worker shows idle but no slot is left', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.env.presence = 'idle';
    s.parkSticky('o1', 'W');
    expect(s.offered).toEqual([]);
    s.freeSlot('*', 'other');
    expect(s.offered).toEqual([]);
    s.freeSlot('*', 'W');
    expect(s.offered).toEqual(['o1']);
  });

  it('skips the sticky phase of a Step whose worker is not there', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.env.presence = 'absent';
    s.parkSticky('o1', 'W');
    s.freeSlot('*', 'other');
    expect(s.offered).toEqual(['o1']);
  });

  it('sends a new Step behind a backlog a worker can run to the heads, and lets it wait in memory when none can', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.env.backlogged = true;
    s.park('a1', 'charge');
    expect(s.placement.size).toBe(0);
    expect(s.toHeads).toEqual(['a1']);
    s.env.canServe = false;
    s.park('a2', 'charge');
    expect(s.placement.size).toBe(1);
    expect(s.placement.hasWaiters('acme', 'order')).toBe(true);
    expect(s.placement.hasWaiters('acme', 'invoice')).toBe(false);
  });

  it('hands a Step whose offer failed to the heads', async () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.park('a1', 'charge');
    s.answer.result = Promise.reject(new Error('peer gone'));
    s.freeSlot('charge');
    await new Promise((r) => setImmediate(r));
    expect(s.toHeads).toEqual(['a1']);
    expect(s.out.get(0)).toBe(0);
  });

  it('keeps nothing of a sticky Step whose offer bounced after its partition left this node', async () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.parkSticky('o1', 'W');
    let answer!: (r: 'no-slot') => void;
    s.answer.result = new Promise((resolve) => (answer = resolve));
    s.freeSlot('*', 'W');
    s.env.epoch = undefined;
    answer('no-slot');
    await new Promise((r) => setImmediate(r));
    expect(s.placement.size).toBe(0);
    expect(s.toHeads).toEqual([]);
  });
});

describe('a sticky worker that declined a Step type', () => {
  it('moves its waiting Steps of that type on to sync-match when a slot of it frees, and those behind still get the slot', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.parkSticky('o1', 'W');
    s.env.presence = 'absent'; // W declined charge
    s.freeSlot('pack', 'W');
    s.freeSlot('charge', 'other');
    expect(s.offered).toEqual(['o1']);
  });

  it('moves on only the Steps of the declined type, and only once the worker runs it nowhere', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.parkSticky('o1', 'W');
    s.placement.place(s.q('pack'), { taskId: 'p1', readyAt: 99 }, 'W');
    s.placement.typeDeclined('acme', 'order', 'charge', 'W'); // W still runs it at another node
    s.freeSlot('*', 'other');
    expect(s.offered).toEqual([]);
    s.env.presence = 'absent';
    s.placement.typeDeclined('acme', 'order', 'charge', 'W');
    s.freeSlot('*', 'other');
    expect(s.offered).toEqual(['o1']);
    s.env.presence = 'busy';
    s.freeSlot('*', 'W');
    expect(s.offered).toEqual(['o1', 'p1']);
  });
});

describe('what a served or moved waiter leaves behind', () => {
  it('leaves no timer and no entry by task once its offer went out', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.park('a1', 'charge');
    s.parkSticky('o1', 'W');
    /** Timer entries not cancelled (cancelled ones may stay in the heap until their time). */
    const armed = () => (s.timers as unknown as { heap: { cancelled: boolean }[] }).heap.filter((e) => !e.cancelled).length;
    expect(armed()).toBe(2);
    s.freeSlot('charge');
    s.freeSlot('*', 'W');
    expect(s.offered).toEqual(['a1', 'o1']);
    expect(armed()).toBe(0);
    const inner = s.placement as unknown as Record<'byTask' | 'stickyWaiters' | 'syncWaiters', Map<string, unknown>>;
    expect([inner.byTask.size, inner.stickyWaiters.size, inner.syncWaiters.size]).toEqual([0, 0, 0]);
  });

  it('stops naming a flow type as waiting once its last waiter left, whatever waits in others', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.park('a1', 'charge');
    s.parkSticky('i1', 'W', 'invoice');
    s.freeSlot('charge');
    expect(s.placement.hasWaiters('acme', 'order')).toBe(false);
    expect(s.placement.hasWaiters('acme', 'invoice')).toBe(true);
    expect(s.placement.waitingFlows()).toEqual([['acme', 'invoice']]);
  });
});

it('serves as many sync-match waiters as one worker frees slots at once', () => {
  const s = setup();
  stop = () => s.timers.stop();
  for (let i = 0; i < 4; i++) s.park(`t${i}`, 'charge');
  s.free.set('charge', 3);
  s.placement.capacity('acme', 'order', 'app');
  expect(s.offered).toEqual(['t0', 't1', 't2']);
  expect(s.placement.size).toBe(1);
});

it('sends no offer for a partition that left this node', () => {
  const s = setup();
  stop = () => s.timers.stop();
  s.park('a1', 'charge');
  s.env.epoch = undefined;
  s.freeSlot('charge');
  expect(s.offered).toEqual([]);
  expect(s.out.size).toBe(0);
});

describe('a Step locked while it waits in memory', () => {
  it('is not taken out of its phase by the news of another queue', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.park('a1', 'charge');
    expect(s.placement.notReady(s.q('ship'), 'a1')).toBe(false);
    expect(s.placement.size).toBe(1);
    expect(s.placement.notReady(s.q('charge'), 'a1')).toBe(true);
    expect(s.placement.size).toBe(0);
    expect(s.toHeads).toEqual([]);
  });

  it('tells the host its queue has something to read when a refill skipped it meanwhile', () => {
    const s = setup();
    stop = () => s.timers.stop();
    s.park('a1', 'charge');
    // A refill read only a1, which it skipped as held: reading again would repeat, until a1 leaves.
    s.q('charge').fill([{ taskId: 'a1', readyAt: 0 }], true);
    expect(s.placement.notReady(s.q('charge'), 'a1')).toBe(true);
    expect(s.toHeads).toEqual(['(none)']);
  });
});

describe('a sticky Step whose offer bounced', () => {
  afterEach(() => jest.useRealTimers());

  it('goes on to sync-match at once when its sticky phase ended while the offer was out', async () => {
    jest.useFakeTimers({ now: 10_000 });
    const s = setup(60_000, 1_000);
    stop = () => s.timers.stop();
    s.parkSticky('o1', 'W');
    let answer!: (r: 'no-slot') => void;
    s.answer.result = new Promise((resolve) => (answer = resolve));
    s.freeSlot('*', 'W');
    await jest.advanceTimersByTimeAsync(1_500); // the offer is out past the end of the sticky phase
    answer('no-slot');
    for (let i = 0; i < 5; i++) await Promise.resolve();
    s.answer.result = Promise.resolve('taken');
    s.freeSlot('*', 'other');
    expect(s.offered).toEqual(['o1', 'o1']);
  });

  it('offered at once to its idle worker, waits for that worker only for the sticky wait', async () => {
    jest.useFakeTimers({ now: 10_000 });
    const s = setup(60_000, 50);
    stop = () => s.timers.stop();
    s.env.presence = 'idle';
    s.answer.result = Promise.resolve('no-slot');
    s.free.set('*', 1);
    s.parkSticky('o1', 'W');
    expect(s.offered).toEqual(['o1']);
    await jest.advanceTimersByTimeAsync(0);
    expect(s.placement.size).toBe(1); // waits for W
    await jest.advanceTimersByTimeAsync(60);
    s.answer.result = Promise.resolve('taken');
    s.freeSlot('*', 'other');
    expect(s.offered).toEqual(['o1', 'o1']);
  });
});
