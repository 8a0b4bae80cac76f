import { eachApart } from '../../../src/util/each-apart';

it('runs every item at once, and skips one whose last run has not settled', async () => {
  const inFlight = new Set<number>();
  const started: number[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  // Item 1 never answers in the first pass; 2 and 3 do, without waiting for it.
  const first = eachApart([1, 2, 3], inFlight, async (n) => {
    started.push(n);
    if (n === 1) await held;
  });
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual([1, 2, 3]);
  expect([...inFlight]).toEqual([1]);
  // The next pass does not ask 1 again while its run is out.
  await eachApart([1, 2, 3], inFlight, async (n) => void started.push(n));
  expect(started).toEqual([1, 2, 3, 2, 3]);
  release();
  await first;
  expect(inFlight.size).toBe(0);
  // Settled, it is asked again; a run that fails leaves the set too.
  await expect(eachApart([1], inFlight, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
  expect(inFlight.size).toBe(0);
});
