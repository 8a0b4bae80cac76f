import { Channel } from '../../../src/util/channel';

async function readAll<T>(c: Channel<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of c) seen.push(item);
  return seen;
}

it('ends its stream after what was queued before close, and refuses what comes after', async () => {
  const c = new Channel<number>();
  expect(c.push(1)).toBe(true);
  expect(c.push(2)).toBe(true);
  c.close();
  expect(c.isClosed).toBe(true);
  // A frame pushed once the stream is closing must not be sent, and its caller must know.
  expect(c.push(3)).toBe(false);
  expect(c.size).toBe(2);
  expect(await readAll(c)).toEqual([1, 2]);
});

it('hands an item to a reader already waiting, and ends a waiting reader on close', async () => {
  const c = new Channel<string>();
  const it = c[Symbol.asyncIterator]();
  const first = it.next();
  c.push('a');
  await expect(first).resolves.toEqual({ value: 'a', done: false });
  expect(c.size).toBe(0);
  const second = it.next();
  c.close();
  await expect(second).resolves.toEqual({ value: undefined, done: true });
});

it('drops what is queued when its reader stops, and takes nothing after', async () => {
  const c = new Channel<number>();
  c.push(1);
  c.push(2);
  const it = c[Symbol.asyncIterator]();
  await expect(it.next()).resolves.toEqual({ value: 1, done: false });
  await it.return!();
  expect(c.size).toBe(0);
  expect(c.isClosed).toBe(true);
  expect(c.push(3)).toBe(false);
  await expect(it.next()).resolves.toEqual({ value: undefined, done: true });
});

it('takes back only items the reader has not taken yet', async () => {
  const a = { n: 1 };
  const b = { n: 2 };
  const d = { n: 3 };
  const c = new Channel<{ n: number }>();
  c.push(a);
  c.push(b);
  c.push(d);
  const it = c[Symbol.asyncIterator]();
  await expect(it.next()).resolves.toEqual({ value: a, done: false });
  expect(c.withdraw(a)).toBe(false); // already read
  expect(c.withdraw({ n: 2 })).toBe(false); // never queued (another object)
  expect(c.withdrawWhere((x) => x.n === 3)).toBe(true);
  expect(c.withdrawWhere((x) => x.n === 3)).toBe(false);
  expect(c.size).toBe(1);
  c.close();
  expect(await readAll(c)).toEqual([b]);
});

it('clears what is queued without closing', async () => {
  const c = new Channel<number>();
  c.push(1);
  c.push(2);
  c.clear();
  expect(c.size).toBe(0);
  expect(c.isClosed).toBe(false);
  expect(c.push(3)).toBe(true);
  c.close();
  expect(await readAll(c)).toEqual([3]);
});
