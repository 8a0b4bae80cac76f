/**
 * A queue's count of stale heads in a row (QueueHeads.passed): one incomplete
 * seek per STALE_RUN gone heads in a row, none while live heads break the run.
 */
import { QueueHeads, STALE_RUN } from '../../../src/owner/heads';

const heads = () => new QueueHeads(0, 'acme:order:pack', 'acme', 'order', 'pack');

it('counts one incomplete seek per run of STALE_RUN gone heads', () => {
  const q = heads();
  const seeks = Array.from({ length: 3 * STALE_RUN }, () => q.passed(true)).filter(Boolean).length;
  expect(seeks).toBe(3);
});

it('starts the run again at a live head', () => {
  const q = heads();
  for (let i = 0; i < STALE_RUN - 1; i++) expect(q.passed(true)).toBe(false);
  expect(q.passed(false)).toBe(false);
  for (let i = 0; i < STALE_RUN - 1; i++) expect(q.passed(true)).toBe(false);
  expect(q.passed(true)).toBe(true);
});
