/**
 * The outcome stream's trim (DESIGN §8): entries go only once every
 * registered consumer group has acked them (its oldest pending entry, else the
 * one after its last delivered, bounds the trim); with no group, entries older
 * than outcomes.retention go; a partition without outcomes is left alone
 * without an error reply. XTRIM MINID ~ trims whole stream nodes (100 entries
 * each by default), so each case writes a few hundred entries. The trim also
 * deletes the consumers that hold nothing and were handed nothing for a day:
 * engines name one per process, and every name a group ever read with stayed.
 */
import { OutcomeStore } from '../../src/store/outcomes';
import { useEmbeddedRedis } from '../helpers/redis';
import { useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'trim');
const P = 3;
const DAY = 86_400_000;

/** Appends `n` entries with ids `<ms>-0` for ms = from…from+n-1; returns the ids. */
async function append(n: number, from = 1): Promise<string[]> {
  const key = fx.keys.out(P);
  const pipeline = fx.client.pipeline();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `${from + i}-0`;
    ids.push(id);
    pipeline.xadd(key, id, 'taskId', `t${i}`, 'o', 'x');
  }
  await pipeline.exec();
  return ids;
}

const firstId = async (): Promise<string> => ((await fx.client.xrange(fx.keys.out(P), '-', '+', 'COUNT', 1))[0] ?? ['none'])[0];
const length = (): Promise<number> => fx.client.xlen(fx.keys.out(P));

async function read(group: string, count: number): Promise<string[]> {
  const r = (await fx.client.xreadgroup('GROUP', group, 'c', 'COUNT', count, 'STREAMS', fx.keys.out(P), '>')) as [string, [string, string[]][]][];
  return r[0]![1].map(([id]) => id);
}

it('keeps what a group has not acked, and what another group has not read', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
  const ids = await append(500);
  await fx.client.xgroup('CREATE', fx.keys.out(P), 'engine', '0');
  const delivered = await read('engine', 450);
  // Every entry is older than the retention here: only the group holds them.
  const now = 10 * DAY;

  await outcomes.trim(P, now, 1000);
  expect(await length()).toBe(500); // all 450 delivered are pending, the oldest first

  await fx.client.xack(fx.keys.out(P), 'engine', ...delivered.slice(0, 200));
  await outcomes.trim(P, now, 1000);
  expect(await length()).toBeLessThan(500);
  // entry 201 (index 200) is the oldest still pending: it and all after stay
  expect(Number((await firstId()).split('-')[0])).toBeLessThanOrEqual(201);
  expect(await fx.client.xrange(fx.keys.out(P), ids[200]!, '+')).toHaveLength(300);

  await fx.client.xack(fx.keys.out(P), 'engine', ...delivered.slice(200));
  // a second group that has read nothing holds everything again
  await fx.client.xgroup('CREATE', fx.keys.out(P), 'audit', '0');
  const before = await length();
  await outcomes.trim(P, now, 1000);
  expect(await length()).toBe(before);

  await fx.client.xgroup('DESTROY', fx.keys.out(P), 'audit');
  await outcomes.trim(P, now, 1000);
  // all 450 delivered entries are acked: only the 50 never delivered must stay
  expect(await fx.client.xrange(fx.keys.out(P), ids[450]!, '+')).toHaveLength(50);
  expect(await length()).toBeLessThanOrEqual(100);
});

it('keeps a group\'s pending entry that shares its millisecond with where another group has read to', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
  // 300 outcomes written within one millisecond: ids 1-0 … 1-299, three stream nodes.
  const key = fx.keys.out(P);
  const pipeline = fx.client.pipeline();
  for (let i = 0; i < 300; i++) pipeline.xadd(key, `1-${i}`, 'taskId', `t${i}`, 'o', 'x');
  await pipeline.exec();
  // "a" has read and acked up to 1-250; "b" has read six and left 1-5 unacked.
  await fx.client.xgroup('CREATE', key, 'a', '0');
  await fx.client.xack(key, 'a', ...await read('a', 251));
  await fx.client.xgroup('CREATE', key, 'b', '0');
  await fx.client.xack(key, 'b', ...(await read('b', 6)).slice(0, 5));

  await outcomes.trim(P, 10 * DAY, 1000);
  expect(await fx.client.xrange(key, '1-5', '1-5')).toHaveLength(1);
  const claimed = (await fx.client.xautoclaim(key, 'b', 'other', 0, '0-0')) as [string, [string, string[] | null][]];
  expect(claimed[1].map(([id, fields]) => [id, fields !== null])).toEqual([['1-5', true]]);
});

it('lets go a whole stream node once every group has acked its last entry', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
  await append(200); // two stream nodes: 1-0 … 100-0, 101-0 … 200-0
  await fx.client.xgroup('CREATE', fx.keys.out(P), 'engine', '0');
  await fx.client.xack(fx.keys.out(P), 'engine', ...await read('engine', 100));
  await outcomes.trim(P, 10 * DAY, 1000);
  expect(await firstId()).toBe('101-0');
  expect(await length()).toBe(100);
});

it('keeps a group\'s one unacked entry when it is the last the group was handed', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
  const ids = await append(200); // two stream nodes: 1-0 … 100-0, 101-0 … 200-0
  await fx.client.xgroup('CREATE', fx.keys.out(P), 'engine', '0');
  const delivered = await read('engine', 100);
  // All but the last acked: one pending entry, which is also where the group has read to.
  await fx.client.xack(fx.keys.out(P), 'engine', ...delivered.slice(0, 99));
  await outcomes.trim(P, 10 * DAY, 1000);
  expect(await fx.client.xrange(fx.keys.out(P), ids[99]!, ids[99]!)).toHaveLength(1);
  const claimed = (await fx.client.xautoclaim(fx.keys.out(P), 'engine', 'other', 0, '0-0')) as [string, [string, string[] | null][]];
  expect(claimed[1].map(([id, fields]) => [id, fields !== null])).toEqual([[ids[99], true]]);
});

it('with no group, keeps the entries younger than the retention', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
  const ids = await append(300); // ids 1-0 … 300-0: ms timestamps 1 … 300
  await outcomes.trim(P, 1_000_000, 1_000_000 - 250); // keep from 250 ms on
  const left = await length();
  expect(left).toBeLessThan(300);
  expect(await fx.client.xrange(fx.keys.out(P), ids[249]!, '+')).toHaveLength(51);
  // nothing kept is younger than needed: trimmed in whole nodes, never past the bound
  expect(Number((await firstId()).split('-')[0])).toBeLessThanOrEqual(250);
});

it('leaves a partition without outcomes alone, without an error reply', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
  const errors = async () => Number(/total_error_replies:(\d+)/.exec(await fx.client.info('stats'))![1]);
  const before = await errors();
  await outcomes.trim(P, Date.now(), 1000);
  expect(await fx.client.exists(fx.keys.out(P))).toBe(0);
  expect(await errors()).toBe(before);
});

const consumers = async (group: string): Promise<Record<string, number>> => {
  const list = (await fx.client.xinfo('CONSUMERS', fx.keys.out(P), group)) as unknown[][];
  return Object.fromEntries(list.map((c) => [String(c[1]), Number(c[3])])); // name → pending
};

it('deletes the consumers that hold nothing and were handed nothing for long, and keeps those with unacked outcomes', async () => {
  const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
  await append(5);
  await fx.client.xgroup('CREATE', fx.keys.out(P), 'engine', '0');
  // Three engine processes, each under a name of its own: two acked what they read, one did not.
  const acked = [...await fx.client.xreadgroup('GROUP', 'engine', 'gone-1', 'COUNT', 2, 'STREAMS', fx.keys.out(P), '>') as [string, [string][]][]][0]![1].map(([id]) => id);
  await fx.client.xack(fx.keys.out(P), 'engine', ...acked);
  await fx.client.xreadgroup('GROUP', 'engine', 'gone-2', 'COUNT', 1, 'STREAMS', fx.keys.out(P), '>');
  await fx.client.xreadgroup('GROUP', 'engine', 'polls', 'COUNT', 1, 'STREAMS', fx.keys.out(P), '>');
  await fx.client.xack(fx.keys.out(P), 'engine', ...(await fx.client.xpending(fx.keys.out(P), 'engine', '-', '+', 10, 'polls') as [string][]).map(([id]) => id));
  expect(Object.keys(await consumers('engine')).sort()).toEqual(['gone-1', 'gone-2', 'polls']);

  // Not idle long enough: nobody goes.
  await outcomes.trim(P, Date.now(), DAY);
  expect(Object.keys(await consumers('engine')).sort()).toEqual(['gone-1', 'gone-2', 'polls']);

  await new Promise((r) => setTimeout(r, 60));
  await new OutcomeStore(fx.client, fx.keys, 8).trim(P, Date.now(), DAY, 50);
  // gone-2 still holds an unacked outcome: it stays, and the outcome stays claimable.
  expect(await consumers('engine')).toEqual({ 'gone-2': 1 });
  const claimed = (await fx.client.xautoclaim(fx.keys.out(P), 'engine', 'new', 0, '0-0')) as [string, [string, string[]][]];
  expect(claimed[1]).toHaveLength(1);
  // A consumer deleted while it had nothing is made again by its next read.
  await fx.client.xreadgroup('GROUP', 'engine', 'polls', 'COUNT', 1, 'STREAMS', fx.keys.out(P), '>');
  expect(Object.keys(await consumers('engine'))).toContain('polls');
});
