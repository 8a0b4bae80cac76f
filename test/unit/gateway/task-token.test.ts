/**
 * The task token on the wire (src/gateway/task-token.ts): it names partition,
 * task id, attempt and start nonce, reads back to exactly those, and anything
 * else (a field past its width, a stray character, a missing part) reads as no
 * token at all rather than as some other attempt.
 */
import { decodeToken, encodeToken } from '../../../src/gateway/task-token';

const parts = { partition: 63, taskId: `123456-${'a'.repeat(24)}`, attempt: 123_456_789, nonce: '0123456789abcdef' };

it('reads back what it wrote, in order', () => {
  const token = encodeToken(parts);
  expect(token).toBe(`63.123456-${'a'.repeat(24)}.123456789.0123456789abcdef`);
  expect(decodeToken(token)).toEqual(parts);
  expect(decodeToken(encodeToken({ ...parts, partition: 999_999 }))).toEqual({ ...parts, partition: 999_999 });
});

it.each([
  ['a partition past six digits', encodeToken({ ...parts, partition: 1_000_000 })],
  ['an attempt past nine digits', encodeToken({ ...parts, attempt: 1_000_000_000 })],
  ['a short nonce', encodeToken({ ...parts, nonce: '0123456789abcde' })],
  ['a long nonce', encodeToken({ ...parts, nonce: '0123456789abcdef0' })],
  ['an upper-case nonce', encodeToken({ ...parts, nonce: '0123456789ABCDEF' })],
  ['a task id of the wrong shape', encodeToken({ ...parts, taskId: `1-${'a'.repeat(23)}` })],
  ['a leading character', `x${encodeToken(parts)}`],
  ['a trailing character', `${encodeToken(parts)}x`],
  ['a missing part', `63.123456-${'a'.repeat(24)}.0123456789abcdef`],
])('reads %s as no token', (_what, token) => {
  expect(decodeToken(token)).toBeUndefined();
});
