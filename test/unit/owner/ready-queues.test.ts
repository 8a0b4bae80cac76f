/**
 * The ready queues of one flow type, oldest head first (what the owner's
 * pump offers from): the order across partitions, heads that change, queues
 * that run empty or leave. Pure data: QueueHeads in, an order out.
 */
import { QueueHeads } from '../../../src/owner/heads';
import { ReadyQueues } from '../../../src/owner/ready-queues';

function queue(partition: number, refs: [string, number][]): QueueHeads {
  const q = new QueueHeads(partition, 'acme:order:charge', 'acme', 'order', 'charge');
  q.fill(refs.map(([taskId, readyAt]) => ({ taskId, readyAt })), false);
  return q;
}

/** Takes heads as the pump does, until none is left: the task ids in the order taken. */
function drain(r: ReadyQueues, emptied: QueueHeads[] = []): string[] {
  const out: string[] = [];
  for (let q = r.oldest((e) => emptied.push(e)); q; q = r.oldest((e) => emptied.push(e))) {
    out.push(q.shift()!.taskId);
    r.taken(q, (e) => emptied.push(e));
  }
  return out;
}

it('takes heads oldest first across partitions, equal readyAt in the order the queues came', () => {
  const r = new ReadyQueues();
  const a = queue(0, [['a1', 10], ['a2', 30]]);
  const b = queue(1, [['b1', 20], ['b2', 30]]);
  const c = queue(2, [['c1', 5]]);
  expect([a, b, c].map((q) => r.add(q))).toEqual([true, true, true]);
  expect(r.add(a)).toBe(false); // already in
  const emptied: QueueHeads[] = [];
  expect(drain(r, emptied)).toEqual(['c1', 'a1', 'b1', 'a2', 'b2']);
  expect(new Set(emptied)).toEqual(new Set([a, b, c]));
  expect(r.size).toBe(0);
});

it('takes a run from one queue while its heads tie with others (a Redis Cluster batches per partition)', () => {
  const r = new ReadyQueues();
  const a = queue(0, [['a1', 10], ['a2', 10], ['a3', 10]]);
  const b = queue(1, [['b1', 10], ['b2', 10]]);
  r.add(a);
  r.add(b);
  expect(drain(r)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
});

it('leaves a queue in place when its head is not taken (no slot), and finds it again', () => {
  const r = new ReadyQueues();
  const a = queue(0, [['a1', 10]]);
  r.add(a);
  expect(r.oldest(() => undefined)).toBe(a);
  expect(r.oldest(() => undefined)).toBe(a);
  expect(a.size).toBe(1);
});

it('places a queue by its new head when a ref comes back to the front or an earlier one arrives', () => {
  const r = new ReadyQueues();
  const a = queue(0, [['a1', 10], ['a2', 40]]);
  const b = queue(1, [['b1', 20]]);
  r.add(a);
  r.add(b);
  const q = r.oldest(() => undefined)!;
  const ref = q.shift()!;
  r.taken(q, () => undefined);
  // The offer found no slot: a1 goes back to the front of a, which is oldest again.
  q.unshift(ref);
  r.add(q);
  expect(r.oldest(() => undefined)).toBe(a);
  expect(drain(r)).toEqual(['a1', 'b1', 'a2']);
});

it('skips the entries of a head that changed without a note, and of a queue that left', () => {
  const r = new ReadyQueues();
  const a = queue(0, [['a1', 10], ['a2', 50]]);
  const b = queue(1, [['b1', 20]]);
  const c = queue(2, [['c1', 30]]);
  [a, b, c].forEach((q) => r.add(q));
  a.drop('a1'); // a's head is a2 (50) now, and nobody said so
  r.delete(b); // b's partition left this node
  expect(drain(r)).toEqual(['c1', 'a2']);
});

it('keeps its order through many head changes of one queue (stale entries are compacted)', () => {
  const r = new ReadyQueues();
  const hot = queue(0, [['h0', 1000]]);
  const cold = queue(1, [['k1', 499]]);
  r.add(hot);
  r.add(cold);
  // 5 000 refs handed back to the front of `hot`, each earlier than the last: its head changes every time.
  for (let i = 1; i <= 5000; i++) {
    hot.unshift({ taskId: `h${i}`, readyAt: 1000 - i * 0.1 });
    r.add(hot);
  }
  const first = drain(r).slice(0, 3);
  expect(first).toEqual(['k1', 'h5000', 'h4999']);
});

it('reports a queue it finds empty when its entry surfaces, and lets it go', () => {
  const r = new ReadyQueues();
  const a = queue(0, [['a1', 10]]);
  r.add(a);
  a.drop('a1'); // its only head went without a note
  const emptied: QueueHeads[] = [];
  expect(r.oldest((q) => emptied.push(q))).toBeUndefined();
  expect(emptied).toEqual([a]);
  expect(r.size).toBe(0);
});

it('finds a queue that got heads after it joined with none', () => {
  const r = new ReadyQueues();
  const a = queue(0, []);
  expect(r.add(a)).toBe(true); // about to be found empty: no entry yet
  a.add({ taskId: 'a1', readyAt: 10 }); // heads came without a note
  expect(r.oldest(() => undefined)).toBe(a);
});
