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
