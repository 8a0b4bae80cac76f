/**
 * A batch answer stops short of what a gRPC client reads by default: the
 * entries that fit in the budget, each counted with its overhead, and always
 * the first however large, so one outsized entry still goes out alone.
 */
import { ENTRY_OVERHEAD_BYTES, RESPONSE_BYTES_MAX, splitAtBytes } from '../../../src/api/response-budget';

const size = (n: number) => n;

it('stays under the 4 MiB a gRPC client reads by default', () => {
  expect(RESPONSE_BYTES_MAX).toBeLessThan(4 * 1024 * 1024);
  expect(ENTRY_OVERHEAD_BYTES).toBeGreaterThan(0);
});

it('keeps every entry when all fit', () => {
  const max = 3 * ENTRY_OVERHEAD_BYTES + 6;
  expect(splitAtBytes([1, 2, 3], size, max)).toEqual([[1, 2, 3], []]);
  expect(splitAtBytes([], size, max)).toEqual([[], []]);
});

it('counts each entry with its overhead, and cuts before the first entry past the budget', () => {
  const max = 3 * (1000 + ENTRY_OVERHEAD_BYTES);
  expect(splitAtBytes([1000, 1000, 1000, 1000], size, max)).toEqual([[1000, 1000, 1000], [1000]]);
  expect(splitAtBytes([1000, 1000, 1001, 5], size, max)).toEqual([[1000, 1000], [1001, 5]]);
  // Payloads alone would fit; with their overhead they do not.
  expect(splitAtBytes([100, 100], size, 2 * ENTRY_OVERHEAD_BYTES + 199)).toEqual([[100], [100]]);
});

it('always holds the first entry, even one past the budget on its own', () => {
  expect(splitAtBytes([500, 1], size, 100)).toEqual([[500], [1]]);
  expect(splitAtBytes([500], size, 100)).toEqual([[500], []]);
  expect(splitAtBytes([RESPONSE_BYTES_MAX * 2, 1], size)).toEqual([[RESPONSE_BYTES_MAX * 2], [1]]);
});

it('uses RESPONSE_BYTES_MAX when no budget is given', () => {
  const half = RESPONSE_BYTES_MAX / 2;
  expect(splitAtBytes([half, half, 1], size)).toEqual([[half], [half, 1]]);
});
