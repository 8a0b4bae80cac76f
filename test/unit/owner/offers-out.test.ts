/**
 * Offers out per partition (src/owner/offers-out.ts): a partition being given
 * up waits for its own offers only, and not past its bound.
 */
import { OffersOut } from '../../../src/owner/offers-out';

it('resolves once the partition has no offer out, whatever the other partitions have out', async () => {
  const o = new OffersOut();
  o.sent(1);
  o.sent(1);
  o.sent(2);
  expect(await o.settledWithin(3, 10)).toBe(true); // none out
  let done: boolean | undefined;
  void o.settledWithin(1, 5000).then((v) => (done = v));
  o.settled(1);
  await Promise.resolve();
  expect(done).toBeUndefined();
  o.settled(1);
  await Promise.resolve();
  expect(done).toBe(true);
  expect([o.count(1), o.count(2)]).toEqual([0, 1]);
});

it('gives up waiting after its bound, and a later settle finds no waiter', async () => {
  const o = new OffersOut();
  o.sent(4);
  const started = Date.now();
  expect(await o.settledWithin(4, 50)).toBe(false);
  expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  o.settled(4);
  expect(o.count(4)).toBe(0);
  expect(await o.settledWithin(4, 10)).toBe(true);
});

it('takes a settle of a partition that never sent as none out, not as one owed', async () => {
  const o = new OffersOut();
  o.settled(7);
  expect(o.count(7)).toBe(0);
  expect(await o.settledWithin(7, 10)).toBe(true);
  o.sent(7);
  expect(o.count(7)).toBe(1);
});

it('keeps no waiter of a partition once its waits ended, by a settle or by their bound', async () => {
  const o = new OffersOut();
  const waiters = (o as unknown as { waiters: Map<number, unknown[]> }).waiters;
  o.sent(1);
  const woken = o.settledWithin(1, 5000);
  o.settled(1);
  expect(await woken).toBe(true);
  expect(waiters.size).toBe(0);
  // A peer that never answers: each hand-over attempt gives up after its bound, and leaves nothing behind.
  o.sent(2);
  expect(await Promise.all([o.settledWithin(2, 10), o.settledWithin(2, 20)])).toEqual([false, false]);
  expect(waiters.size).toBe(0);
});
