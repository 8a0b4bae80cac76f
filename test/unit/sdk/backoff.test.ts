/**
 * The SDK's reconnect backoff: exponential from initialMs by coefficient,
 * capped at maxMs, with jitter over the upper half of each window (never an
 * immediate retry, never two workers in lockstep).
 */
import { backoffMs } from '../../../src/sdk/common/backoff';

const low = () => 0;
const high = () => 0.999999;

it('grows by the coefficient from initialMs and stops at maxMs', () => {
  const o = { initialMs: 100, coefficient: 2, maxMs: 1000 };
  expect([0, 1, 2, 3, 4, 5, 10].map((a) => backoffMs(a, o, high))).toEqual([99, 199, 399, 799, 999, 999, 999]);
});

it('draws from the upper half of each window', () => {
  const o = { initialMs: 100, coefficient: 3, maxMs: 10_000 };
  for (let a = 0; a < 6; a++) {
    const ceiling = Math.min(10_000, 100 * 3 ** a);
    expect(backoffMs(a, o, low)).toBe(Math.floor(ceiling / 2));
    expect(backoffMs(a, o, high)).toBeLessThan(ceiling);
    expect(backoffMs(a, o, () => 0.5)).toBe(Math.floor((ceiling * 3) / 4));
  }
});

it('defaults to 100 ms doubling up to 10 s', () => {
  expect(backoffMs(0, {}, low)).toBe(50);
  expect(backoffMs(1, {}, low)).toBe(100);
  expect(backoffMs(20, {}, low)).toBe(5000);
  expect(backoffMs(20, {}, high)).toBe(9999);
});
