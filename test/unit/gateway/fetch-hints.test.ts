/**
 * What claims remember of each partition's queue of a fetch topic
 * (src/gateway/fetch-hints.ts): trusted until a touch of the partition or of
 * the whole topic, until the time it names, and for HINT_TTL_MS at most; a
 * touch while a claim runs voids what that claim saw.
 */
import { FetchHints, HINT_TTL_MS } from '../../../src/gateway/fetch-hints';

const T = 'acme:order:charge';

it('remembers an empty queue and a first score until a touch of that partition, and only that one', () => {
  const h = new FetchHints();
  const mark = h.begin([T]);
  h.quiet(T, 3, mark, 1000, Infinity);
  h.quiet(T, 4, mark, 1000, 1500);
  expect(h.quietUntil(T, 3, 1100)).toBe(1000 + HINT_TTL_MS); // empty: look again when the hint ends
  expect(h.quietUntil(T, 4, 1100)).toBe(1500); // its first entry is due before that
  expect(h.quietUntil(T, 5, 1100)).toBeUndefined(); // never seen
  expect(h.quietUntil('other:t:s', 3, 1100)).toBeUndefined();
  h.touched(T, 3);
  expect(h.quietUntil(T, 3, 1100)).toBeUndefined();
  expect(h.quietUntil(T, 4, 1100)).toBe(1500);
});

it('forgets the whole topic on a touch that names no partition (a peer\'s doorbell)', () => {
  const h = new FetchHints();
  const mark = h.begin([T]);
  for (let p = 0; p < 8; p++) h.quiet(T, p, mark, 1000, Infinity);
  h.touched(T);
  for (let p = 0; p < 8; p++) expect(h.quietUntil(T, p, 1001)).toBeUndefined();
});

it('stops trusting a hint once its time comes, and after HINT_TTL_MS', () => {
  const h = new FetchHints();
  const mark = h.begin([T]);
  h.quiet(T, 1, mark, 1000, 1200);
  h.quiet(T, 2, mark, 1000, Infinity);
  expect(h.quietUntil(T, 1, 1199)).toBe(1200);
  expect(h.quietUntil(T, 1, 1200)).toBeUndefined(); // due now: peek it
  expect(h.quietUntil(T, 2, 1000 + HINT_TTL_MS - 1)).toBe(1000 + HINT_TTL_MS);
  expect(h.quietUntil(T, 2, 1000 + HINT_TTL_MS)).toBeUndefined();
});

it('voids what a claim saw of a partition touched after the claim began', () => {
  const h = new FetchHints();
  const mark = h.begin([T]);
  h.touched(T, 6); // an enqueue lands while the claim's peeks are in flight
  h.quiet(T, 6, mark, 1000, Infinity);
  h.quiet(T, 7, mark, 1000, Infinity);
  expect(h.quietUntil(T, 6, 1001)).toBeUndefined();
  expect(h.quietUntil(T, 7, 1001)).toBe(1000 + HINT_TTL_MS);
  const next = h.begin([T]);
  h.touched(T);
  h.quiet(T, 7, next, 1002, Infinity);
  expect(h.quietUntil(T, 7, 1003)).toBeUndefined();
});

it('keeps the hints of every topic of a fetch of several', () => {
  const h = new FetchHints();
  const topics = ['acme:order:a', 'acme:order:b', 'acme:order:c'];
  const mark = h.begin(topics);
  for (const t of topics) h.quiet(t, 0, mark, 1000, Infinity);
  for (const t of topics) expect(h.quietUntil(t, 0, 1001)).toBe(1000 + HINT_TTL_MS);
});

it('past 10 000 topics forgets the one a claim read longest ago, not a busy one first asked long ago', () => {
  const h = new FetchHints();
  const mark = h.begin([T]);
  h.quiet(T, 0, mark, 1000, Infinity);
  const others = Array.from({ length: 9_999 }, (_, i) => `acme:other:${i}`);
  const later = h.begin(others);
  for (const t of others) h.quiet(t, 0, later, 1000, Infinity);
  expect(h.quietUntil(T, 0, 1001)).toBe(1000 + HINT_TTL_MS); // read again by a claim: the latest used
  h.begin(['acme:new:s']);
  expect(h.quietUntil(T, 0, 1002)).toBe(1000 + HINT_TTL_MS);
  expect(h.quietUntil(others[0]!, 0, 1002)).toBeUndefined(); // the longest unused, forgotten
  expect(h.quietUntil(others[1]!, 0, 1002)).toBe(1000 + HINT_TTL_MS);
});
