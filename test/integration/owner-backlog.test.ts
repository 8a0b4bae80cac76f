/**
 * The backlog count of the partitions a node owns (src/owner/backlog.ts), and the
 * periodic heads resync that restores what the owner lost (src/owner/resync.ts), over a
 * real Redis: ready entries and the oldest one per queue, queues that hold
 * nothing leaving the set, ready entries behind heads that expect nothing
 * looked for again, consumer-group lag, and the gauges' snapshot. Owners that
 * hold real QueueHeads stand in for the partitions; no node runs.
 */
import { BacklogCounter } from '../../src/owner/backlog';
import { HeadsResync } from '../../src/owner/resync';
import type { RedisClient } from '../../src/store/redis';
import { QueueHeads } from '../../src/owner/heads';
import type { Dispatcher } from '../../src/owner/dispatcher';
import type { PartitionOwner } from '../../src/owner/partition';
import { parseQueueName, queueName } from '../../src/store/keys';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const s = useTaskStore(redis, 'backlog');

const NOW = 1_700_000_000_000;
const A = queueName('acme', 'order', 'charge');
const B = queueName('acme', 'order', 'ship');

/** An owner of `partition` whose queues are real QueueHeads; what the counter asks of it is recorded. */
function owner(partition: number) {
  const queues = new Map<string, QueueHeads>();
  const seen = { rearmed: 0, refilled: [] as string[], ready: [] as string[] };
  const raw = {
    partition,
    active: true,
    queues,
    queueFor(name: string): QueueHeads {
      let q = queues.get(name);
      if (!q) {
        const { tenant, flowType, stepType } = parseQueueName(name);
        q = new QueueHeads(partition, name, tenant, flowType, stepType);
        queues.set(name, q);
      }
      return q;
    },
    forgetQueue(name: string): boolean {
      const q = queues.get(name);
      if (!q || !q.idle) return false;
      queues.delete(name);
      return true;
    },
    rearmTimers: async () => void seen.rearmed++,
    refillInBackground: (q: QueueHeads) => void seen.refilled.push(q.name),
    taskReady: (name: string, taskId: string, readyAt: number) => void seen.ready.push(`${name}/${taskId}@${readyAt - NOW}`),
  };
  return { p: raw as unknown as PartitionOwner, raw, seen };
}

/** Heads of `name` loaded with `refs` (the whole queue in the window). */
function loaded(o: ReturnType<typeof owner>, name: string, refs: [string, number][] = []): QueueHeads {
  const q = o.raw.queueFor(name);
  q.fill(refs.map(([taskId, readyAt]) => ({ taskId, readyAt })), false);
  return q;
}

async function queued(partition: number, name: string, entries: [string, number][]): Promise<void> {
  await redis.command('SADD', s.keys.queues(partition), name);
  if (entries.length > 0) await redis.command('ZADD', s.keys.queue(partition, name), ...entries.flatMap(([id, at]) => [at, id]));
}

function setup(owners: ReturnType<typeof owner>[], dispatcher?: Partial<Dispatcher>, onRestore: (p: PartitionOwner) => void = () => undefined) {
  const restored: string[] = [];
  const clock = { t: NOW, now: () => clock.t };
  const warned: string[] = [];
  const log = { warn: (_o: unknown, msg: string) => void warned.push(msg), info: () => undefined, debug: () => undefined, error: () => undefined } as never;
  const list = [...owners];
  const counter = new BacklogCounter(
    () => list.map((o) => o.p), () => dispatcher as Dispatcher | undefined, s.client, s.keys, 60_000, clock, log,
    async (p, name) => (restored.push(`${p.partition}/${name}`), onRestore(p), 0),
  );
  const row = (name: string) => counter.snapshot().queues.find((r) => `${r.tenant}:${r.flowType}:${r.stepType}` === name);
  return { counter, restored, warned, list, row, clock };
}

it('counts the ready entries of each queue and the age of the oldest, not the delayed ones', async () => {
  const o = owner(0);
  await queued(0, A, [['a1', NOW - 5000], ['a2', NOW - 1000], ['later', NOW + 60_000]]);
  o.raw.queueFor(A).more = true; // a refill will read it
  const t = setup([o]);
  await t.counter.count(o.p);
  expect(t.row(A)).toMatchObject({ entries: 2, oldestAgeSeconds: 5 });
  expect(o.seen.rearmed).toBe(1);
  expect(t.restored).toEqual([]);
});

it('takes the oldest age from the heads once they hold the oldest task, so a drained backlog stops showing', async () => {
  const o = owner(0);
  await queued(0, A, [['a1', NOW - 5000], ['a2', NOW - 1000]]);
  const q = loaded(o, A, [['a1', NOW - 5000], ['a2', NOW - 1000]]);
  const t = setup([o]);
  await t.counter.count(o.p);
  expect(t.row(A)!.oldestAgeSeconds).toBe(5);
  q.shift(); // a1 was offered and taken
  expect(t.row(A)!.oldestAgeSeconds).toBe(1);
});

it('drops from the set a queue that holds nothing, and keeps one that holds only a delayed entry', async () => {
  const o = owner(0);
  await queued(0, A, []);
  await queued(0, B, [['later', NOW + 60_000]]);
  loaded(o, A);
  const t = setup([o]);
  await t.counter.count(o.p);
  expect(await redis.command('SMEMBERS', s.keys.queues(0))).toEqual([B]);
  expect(o.raw.queues.has(A)).toBe(false);
  expect(t.row(A)).toBeUndefined();
  expect(t.row(B)).toMatchObject({ entries: 0, oldestAgeSeconds: 0 });
  t.clock.t += 10_000; // a queue with nothing ready shows no age, however long after its count
  expect(t.row(B)).toMatchObject({ entries: 0, oldestAgeSeconds: 0 });
});

it('takes the older of the heads\' first task and the oldest counted one', async () => {
  const o = owner(0);
  await queued(0, A, [['a1', NOW - 7000], ['a2', NOW - 1000]]);
  const q = o.raw.queueFor(A);
  q.fill([{ taskId: 'a2', readyAt: NOW - 1000 }], true); // a2 in the window; a1 still in Redis only
  expect(q.peek()?.taskId).toBe('a2');
  const t = setup([o]);
  await t.counter.count(o.p);
  expect(t.row(A)!.oldestAgeSeconds).toBe(7);
});

it('makes no heads for a lost queue of a partition given up while it was looked at again', async () => {
  const o = owner(0);
  await queued(0, A, [['a1', NOW - 5000]]);
  const t = setup([o], undefined, () => void (o.raw.active = false));
  await t.counter.count(o.p);
  expect(t.restored).toEqual([`0/${A}`]);
  expect(o.raw.queues.has(A)).toBe(false);
  expect(o.seen.refilled).toEqual([]);
});

it('looks again at ready entries behind heads that hold and expect nothing, and only there', async () => {
  const o = owner(0);
  const C = queueName('acme', 'order', 'pack');
  const D = queueName('acme', 'order', 'bill');
  await queued(0, A, [['a1', NOW - 5000]]); // no heads at all
  await queued(0, B, [['b1', NOW - 5000]]); // heads loaded, empty: the ready notice went missing
  await queued(0, C, [['c1', NOW - 5000]]); // heads that will read Redis anyway
  await queued(0, D, [['d1', NOW - 5000]]); // heads that hold it
  loaded(o, B);
  o.raw.queueFor(C).more = true;
  loaded(o, D, [['d1', NOW - 5000]]);
  const t = setup([o]);
  await t.counter.count(o.p);
  expect(t.restored.sort()).toEqual([`0/${A}`, `0/${B}`]);
  expect(o.seen.refilled.sort()).toEqual([A, B]);
  expect(o.raw.queues.get(A)!.more).toBe(true);
  expect(o.raw.queues.get(B)!.more).toBe(true);
});

it('keeps nothing of a partition that stopped being active during its count', async () => {
  const o = owner(0);
  await queued(0, A, [['a1', NOW - 5000]]);
  o.raw.rearmTimers = async () => void (o.raw.active = false);
  const t = setup([o]);
  await t.counter.count(o.p);
  expect(t.row(A)).toBeUndefined();
  expect(t.restored).toEqual([]);
});

it('logs a count that failed and keeps what it counted before', async () => {
  const o = owner(0);
  await queued(0, A, [['a1', NOW - 5000]]);
  o.raw.queueFor(A).more = true;
  const t = setup([o]);
  await t.counter.count(o.p);
  await redis.command('SET', s.keys.queue(0, A), 'not a sorted set');
  await t.counter.count(o.p);
  expect(t.warned).toEqual(['backlog count failed']);
  expect(t.row(A)!.entries).toBe(1);
});

describe('consumer-group lag', () => {
  async function stream(partition: number, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(String(await redis.command('XADD', s.keys.out(partition), '*', 'f', 'v')));
    return ids;
  }

  it('sums each group\'s unread outcomes over the partitions counted here, the stream length standing in where Redis gives none', async () => {
    const [o0, o1] = [owner(0), owner(1)];
    const ids = await stream(0, 4);
    await redis.command('XGROUP', 'CREATE', s.keys.out(0), 'g', '0');
    await redis.command('XGROUP', 'CREATE', s.keys.out(0), 'set-by-hand', '0');
    // An id inside the stream, set by hand after entries were deleted: Redis cannot count its lag.
    await redis.command('XDEL', s.keys.out(0), ids[1]!);
    await redis.command('XGROUP', 'SETID', s.keys.out(0), 'set-by-hand', ids[0]!);
    await stream(1, 2);
    await redis.command('XGROUP', 'CREATE', s.keys.out(1), 'g', '0');
    const t = setup([o0, o1]);
    await t.counter.count(o0.p);
    await t.counter.count(o1.p);
    expect(Object.fromEntries(t.counter.consumerLag())).toEqual({ g: 5, 'set-by-hand': 3 });

    // A partition this node gave up leaves the sums at the next count, and at once when forgotten.
    t.list.splice(1, 1);
    await (t.counter as unknown as { countAll(): Promise<void> }).countAll();
    expect(Object.fromEntries(t.counter.consumerLag())).toEqual({ g: 3, 'set-by-hand': 3 });
    t.counter.forget(o0.p);
    expect(t.counter.consumerLag().size).toBe(0);
  });
});

describe('the snapshot', () => {
  it('sums entries over the partitions, takes the oldest age of any, and skips queues with nothing', async () => {
    const [o0, o1] = [owner(0), owner(1)];
    await queued(0, A, [['a1', NOW - 7000]]);
    await queued(1, A, [['a2', NOW - 2000], ['a3', NOW - 1000]]);
    await queued(1, B, [['later', NOW + 60_000]]);
    o0.raw.queueFor(A).more = true;
    o1.raw.queueFor(A).more = true;
    const served = { canServe: false, fetchServes: false, hasWorker: false };
    const t = setup([o0, o1], {
      canServe: () => served.canServe, fetchServes: () => served.fetchServes, hasWorker: () => served.hasWorker,
    });
    await t.counter.count(o0.p);
    await t.counter.count(o1.p);
    expect(t.row(A)).toMatchObject({ entries: 3, oldestAgeSeconds: 7 });
    expect(t.counter.snapshot().unserved).toEqual({ no_worker: 1, no_supporting_worker: 0 }); // B holds nothing ready
    served.hasWorker = true;
    expect(t.counter.snapshot().unserved).toEqual({ no_worker: 0, no_supporting_worker: 1 });
    served.fetchServes = true;
    expect(t.counter.snapshot().unserved).toEqual({ no_worker: 0, no_supporting_worker: 0 });
    served.fetchServes = false;
    served.canServe = true;
    expect(t.counter.snapshot().unserved).toEqual({ no_worker: 0, no_supporting_worker: 0 });
  });

  it('counts a queue whose heads hold a task, before any count, as one nobody serves', () => {
    const o = owner(0);
    loaded(o, A, [['a1', NOW - 3000]]);
    const t = setup([o], { canServe: () => false, fetchServes: () => false, hasWorker: () => false });
    expect(t.row(A)).toMatchObject({ entries: 0, oldestAgeSeconds: 3 });
    expect(t.counter.snapshot().unserved).toEqual({ no_worker: 1, no_supporting_worker: 0 });
  });
});

describe('the heads resync', () => {
  /** A resync over `owners` (grace 50 ms); the Redis calls it makes are recorded, `after` runs once each read answered. */
  function resync(owners: ReturnType<typeof owner>[], after: (cmd: string) => void = () => undefined) {
    const calls: string[] = [];
    const hooks = { restored: [] as number[], incomplete: 0 };
    const client = new Proxy(s.client, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return async (...args: unknown[]) => {
          calls.push(`${String(key)} ${args.filter((a) => typeof a === 'string' && !/^[-+(]|WITHSCORES|LIMIT/.test(a)).join(' ')}`);
          const out = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          after(String(key));
          return out;
        };
      },
    }) as RedisClient;
    const r = new HeadsResync(() => owners.map((o) => o.p), client, s.keys, {
      restored: (n) => void hooks.restored.push(n), incomplete: () => void hooks.incomplete++,
    }, 0, { now: () => NOW }, { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined } as never);
    return { r, calls, hooks };
  }

  it('restores at its ready time only what is older than its grace and not held, and asks Redis again only of that', async () => {
    const o = owner(0);
    await queued(0, A, [['lost', NOW - 5000], ['held', NOW - 4000], ['young', NOW - 10]]);
    loaded(o, A, [['held', NOW - 4000]]);
    const t = resync([o]);
    expect(await t.r.runOnce()).toBe(1);
    expect(o.seen.ready).toEqual([`${A}/lost@-5000`]);
    expect(t.hooks.restored).toEqual([1]);
    expect(t.calls.filter((c) => c.startsWith('zmscore'))).toEqual([`zmscore ${s.keys.queue(0, A)} lost`]);
  });

  it('reads no queue whose heads will read Redis anyway, and no partition that is not active', async () => {
    const [o0, o1] = [owner(0), owner(1)];
    await queued(0, A, [['lost-a', NOW - 5000]]);
    await queued(0, B, [['lost-b', NOW - 5000]]);
    await queued(1, A, [['lost-1', NOW - 5000]]);
    o0.raw.queueFor(A).more = true;
    loaded(o0, B).loading = true;
    // A queue whose heads hold all it has: read once, nothing asked again, nothing counted.
    const C = queueName('acme', 'order', 'pack');
    await queued(0, C, [['held', NOW - 5000]]);
    loaded(o0, C, [['held', NOW - 5000]]);
    loaded(o1, A);
    o1.raw.active = false;
    const t = resync([o0, o1]);
    expect(await t.r.runOnce()).toBe(0);
    expect(t.calls).toEqual([`smembers ${s.keys.queues(0)}`, `zrangebyscore ${s.keys.queue(0, C)}`]);
    expect(t.hooks).toEqual({ restored: [], incomplete: 0 });
    expect(o1.raw.queues.size).toBe(1);
  });

  it('restores nothing of a queue that a refill started reading while the scan waited out its grace', async () => {
    const o = owner(0);
    await queued(0, A, [['lost', NOW - 5000]]);
    const q = loaded(o, A);
    const t = resync([o], (cmd) => {
      if (cmd === 'zrangebyscore') setTimeout(() => (q.more = true), 10);
    });
    expect(await t.r.runOnce()).toBe(0);
    expect(o.seen.ready).toEqual([]);
  });

  it('counts a restore the backlog count asked for that Redis would not read as an incomplete scan', async () => {
    const o = owner(0);
    await redis.command('SET', s.keys.queue(0, A), 'not a sorted set');
    loaded(o, A);
    const t = resync([o]);
    expect(await t.r.restoreQueue(o.p, A)).toBe(0);
    expect(t.hooks.incomplete).toBe(1);
  });

  it('restores at most its scan limit of one queue in a pass', async () => {
    const o = owner(0);
    const args: (string | number)[] = [];
    for (let i = 0; i < 5100; i++) args.push(NOW - 60_000 + i, `lost-${i}`);
    await redis.command('SADD', s.keys.queues(0), A);
    await redis.command('ZADD', s.keys.queue(0, A), ...args);
    loaded(o, A);
    const t = resync([o]);
    expect(await t.r.runOnce()).toBe(5000);
    expect(t.hooks.incomplete).toBe(1);
  });
});
