/**
 * A partition's queue refill over a real redis-server (src/owner/partition.ts):
 * the ids it already knows (out on offers, held in a sticky or sync-match
 * phase) neither hide the Steps behind them nor make it read the same page
 * over and over.
 */
import { PartitionOwner, type PartitionHost } from '../../src/owner/partition';
import { HEADS_WINDOW, KNOWN_READ_MAX, type QueueHeads } from '../../src/owner/heads';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const s = useTaskStore(redis, 'refill');
const log = { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never;
const QUEUE = 'acme:order:charge';

/** A partition owner whose host only counts what it is told. */
function owner(): { p: PartitionOwner; available: QueueHeads[] } {
  const available: QueueHeads[] = [];
  const host = {
    headsAvailable: (q: QueueHeads) => available.push(q),
    isNodeGone: async () => false,
  } as Partial<PartitionHost> as PartitionHost;
  const p = new PartitionOwner({ partition: 0, epoch: 1, token: 't' }, s.client, s.keys, s.store, host, { now: () => Date.now() }, log);
  return { p, available };
}

/** `n` ready entries t0…t(n-1) in the queue's sorted set, oldest first. */
async function queued(n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `t${i}`);
  for (let i = 0; i < n; i += 1000) {
    const args = ids.slice(i, i + 1000).flatMap((id, j) => [i + j + 1, id]);
    await s.client.zadd(s.keys.queue(0, QUEUE), ...args);
  }
  return ids;
}

async function zrangeCalls(): Promise<number> {
  const stats = String(await s.client.info('commandstats'));
  return Number(/cmdstat_zrangebyscore:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

it('reads past the held Steps at the front of a queue to the ones behind them', async () => {
  // Guards the read past known ids: 300 sticky waiters at the front filled the page of
  // 256, and the 10 plain Steps behind them stayed unseen while slots idled.
  const ids = await queued(310);
  const { p, available } = owner();
  const q = p.queueFor(QUEUE);
  for (const id of ids.slice(0, 300)) q.hold(id);
  await p.refill(q);
  expect(q.size).toBe(10);
  expect(q.peek()?.taskId).toBe('t300');
  expect(available).toContain(q);
});

it('does not read the same page again while every id on it is known, and reads once one settles', async () => {
  // Guards the refill's loop: a page of known ids made it read again at once, thousands
  // of ZRANGEBYSCOREs a second, for as long as the offers were out.
  const known = HEADS_WINDOW + KNOWN_READ_MAX;
  const ids = await queued(known + 20);
  const { p } = owner();
  const q = p.queueFor(QUEUE);
  for (const id of ids.slice(0, known)) q.hold(id);
  const before = await zrangeCalls();
  await p.refill(q);
  await new Promise((r) => setTimeout(r, 200));
  // the refill's two reads (the ready page, the next delayed entry), and no more
  expect((await zrangeCalls()) - before).toBe(2);
  expect(q.size).toBe(0);
  expect(q.more).toBe(true);

  // one of them is taken: its offer settles, the queue says it wants a read, and that
  // read gets past the known ids again
  await s.client.zrem(s.keys.queue(0, QUEUE), ids[0]!);
  expect(q.settle(ids[0]!)).toBe(true);
  await p.refill(q);
  expect(q.peek()?.taskId).toBe(ids[known]);
});

it('arms no timer for a delayed entry when its partition unloads while the refill reads', async () => {
  // Guards the unload: a refill in flight then armed the delayed entry's timer on the
  // unloaded owner, keeping it and its heads in memory until that entry's time (days, say).
  await s.client.zadd(s.keys.queue(0, QUEUE), Date.now() + 86_400_000, 'later');
  const { p } = owner();
  const q = p.queueFor(QUEUE);
  const reading = p.refill(q);
  p.unload('membership');
  await reading;
  expect((p as unknown as { timers: { size: number } }).timers.size).toBe(0);
  expect(q.wakeAt).toBe(Infinity);
});

it('tells the node once that its lease moved, and does not expire the refused batch again and again', async () => {
  // Guards a refused expiry batch: each refused script asked for a lease pass of its own (15
  // passes for one batch), and the timer, re-armed at once, ran the batch again until the unload.
  const moved: number[] = [];
  const host = {
    headsAvailable: () => undefined, isNodeGone: async () => false, leaseMoved: (p: number) => moved.push(p),
    cancelAttempt: () => undefined,
  } as Partial<PartitionHost> as PartitionHost;
  const p = new PartitionOwner({ partition: 0, epoch: 1, token: 'a:1' }, s.client, s.keys, s.store, host, { now: () => Date.now() }, log);
  await s.client.set(s.keys.lease(0), 'b:2'); // another node holds it now
  const due = Date.now() - 1000;
  for (let i = 0; i < 20; i++) await s.client.zadd(s.keys.inflight(0), due, `gone-${i}`);
  const before = await evalshaCalls();
  p.attemptDeadline(due);
  await new Promise((r) => setTimeout(r, 300));
  expect(moved).toEqual([0]);
  // one batch of 20 refused scripts, not a batch a turn
  expect((await evalshaCalls()) - before).toBe(20);
});

it('tells the node that its lease moved when a flow-deadline timeout is refused', async () => {
  // Guards the deadline timer's refusal: the owner stopped, but the node went on serving the
  // partition's heads until its next lease renewal, up to a third of the TTL later.
  const moved: number[] = [];
  const host = {
    headsAvailable: () => undefined, isNodeGone: async () => false, leaseMoved: (p: number) => moved.push(p),
  } as Partial<PartitionHost> as PartitionHost;
  const p = new PartitionOwner({ partition: 0, epoch: 1, token: 'a:1' }, s.client, s.keys, s.store, host, { now: () => Date.now() }, log);
  await s.client.set(s.keys.lease(0), 'b:2'); // another node holds it now
  const due = Date.now() - 1000;
  await s.client.zadd(s.keys.deadlines(0), due, 'late-0', due, 'late-1');
  p.flowDeadline(due);
  await waitFor(() => moved.length > 0, { description: 'the node told that the lease moved' });
  expect(moved).toEqual([0]);
  // refused: the deadlines stay for the partition's owner
  expect(await s.client.zcard(s.keys.deadlines(0))).toBe(2);
});

async function evalshaCalls(): Promise<number> {
  const stats = String(await s.client.info('commandstats'));
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

it('holds one timer for a queue whose short delays keep coming ahead of a far one', async () => {
  // Guards the owner's timers: each short delay armed a timer ahead of the far one, and once
  // it fired the refill armed the far time again; the earlier ones stayed in the heap until
  // their time (a Step scheduled a week out kept one per retry of its queue for that week).
  const { p } = owner();
  await p.load();
  const key = s.keys.queue(0, QUEUE);
  const far = Date.now() + 7 * 86_400_000;
  await s.client.zadd(key, far, 'far');
  p.taskReady(QUEUE, 'far', far);
  const q = p.queueFor(QUEUE);
  const timers = () => (p as unknown as { timers: { size: number } }).timers.size;
  const baseline = timers();
  for (let i = 0; i < 200; i++) {
    const at = Date.now() + 2;
    await s.client.zadd(key, at, `soon-${i}`);
    p.taskReady(QUEUE, `soon-${i}`, at);
    const until = Date.now() + 2000;
    while (!(q.size > 0 && q.wakeAt === far && !q.loading) && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
    expect(q.peek()?.taskId).toBe(`soon-${i}`);
    // a slot takes it
    q.shift();
    await s.client.zrem(key, `soon-${i}`);
  }
  expect(q.wakeAt).toBe(far);
  expect(timers()).toBeLessThanOrEqual(baseline + 1);
});
