/**
 * CallBatch on its own: which calls of a turn share a script call (same group,
 * at most `max`), when a full group leaves, and how each caller is answered.
 * The run function stands in for a script call; it answers each item itself.
 */
import { CallBatch } from '../../../src/store/call-batch';

interface Item { group: string; n: number }

/** A batch whose run records each call's items and, unless told otherwise, answers each item with its n doubled. */
function batchOf(max: number, answer: (items: Item[]) => Promise<number[]> = async (items) => items.map((i) => i.n * 2)) {
  const calls: Item[][] = [];
  const batch = new CallBatch<Item, number>((items) => {
    calls.push(items);
    return answer(items);
  }, (i) => i.group, max);
  return { batch, calls };
}

const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

it('sends the calls of one turn as one call per group, each caller answered with its own reply', async () => {
  const { batch, calls } = batchOf(8);
  const replies = await Promise.all([
    batch.add({ group: 'a', n: 1 }), batch.add({ group: 'b', n: 2 }), batch.add({ group: 'a', n: 3 }), batch.add({ group: 'b', n: 4 }),
  ]);
  expect(replies).toEqual([2, 4, 6, 8]);
  expect(calls.map((c) => c.map((i) => i.n))).toEqual([[1, 3], [2, 4]]);
});

it('sends a group that reaches max at once, before the turn ends, and never more than max in a call', async () => {
  const { batch, calls } = batchOf(3);
  const replies = [1, 2, 3].map((n) => batch.add({ group: 'a', n }));
  // the third call filled the group: it left in this turn
  expect(calls.map((c) => c.map((i) => i.n))).toEqual([[1, 2, 3]]);
  for (const n of [4, 5, 6, 7]) replies.push(batch.add({ group: 'a', n }));
  expect(calls.map((c) => c.map((i) => i.n))).toEqual([[1, 2, 3], [4, 5, 6]]);
  await turnEnd();
  expect(calls.map((c) => c.map((i) => i.n))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  expect(await Promise.all(replies)).toEqual([2, 4, 6, 8, 10, 12, 14]);
});

it('sends a call alone in its turn at the end of that turn, and the next turn\'s in a call of its own', async () => {
  const { batch, calls } = batchOf(8);
  expect(await batch.add({ group: 'a', n: 1 })).toBe(2);
  expect(await batch.add({ group: 'a', n: 2 })).toBe(4);
  expect(calls.map((c) => c.map((i) => i.n))).toEqual([[1], [2]]);
});

it('fails every caller of a call that answers a different number of replies, and only those', async () => {
  const { batch } = batchOf(8, async (items) => (items[0]!.group === 'short' ? [1] : items.map((i) => i.n)));
  const settled = await Promise.allSettled([
    batch.add({ group: 'short', n: 1 }), batch.add({ group: 'short', n: 2 }), batch.add({ group: 'ok', n: 3 }),
  ]);
  expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
  expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/1 replies for 2 calls/);
  expect((settled[2] as PromiseFulfilledResult<number>).value).toBe(3);
});

it('fails every caller of a call that answers more replies than it had calls: the replies cannot be matched to them', async () => {
  const { batch } = batchOf(8, async (items) => [...items.map((i) => i.n), 99]);
  const settled = await Promise.allSettled([batch.add({ group: 'a', n: 1 }), batch.add({ group: 'a', n: 2 })]);
  expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/3 replies for 2 calls/);
});

it('fails every caller of a call that fails, with its error', async () => {
  const err = new Error('script failed');
  const { batch } = batchOf(8, () => Promise.reject(err));
  const settled = await Promise.allSettled([batch.add({ group: 'a', n: 1 }), batch.add({ group: 'a', n: 2 })]);
  expect(settled).toEqual([{ status: 'rejected', reason: err }, { status: 'rejected', reason: err }]);
});
