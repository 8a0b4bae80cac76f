/**
 * The registry's count of queues with a backlog (BusyQueues, kept by each
 * QueueHeads): it must always say what asking every partition's queue would.
 * A long random walk of the mutations the owner makes, checked after each.
 */
import { BusyQueues, QueueHeads } from '../../../src/owner/heads';

/** A small deterministic generator (mulberry32), so a failure repeats. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['acme:order:charge', 'acme:order:ship'];

it('counts what a scan of every queue counts, after each of 20 000 random mutations', () => {
  const busy = new BusyQueues();
  const rand = rng(7);
  const live: QueueHeads[] = [];
  const detached = new Set<QueueHeads>();
  let id = 0;
  const scan = (name: string) => live.filter((q) => !detached.has(q) && q.name === name && (q.size > 0 || q.more)).length;
  for (let step = 0; step < 20_000; step++) {
    const r = rand();
    if (live.length < 8 || r < 0.02) {
      const name = NAMES[Math.floor(rand() * NAMES.length)]!;
      const [, flowType, stepType] = name.split(':') as [string, string, string];
      const q = new QueueHeads(live.length, name, 'acme', flowType, stepType, busy);
      if (rand() < 0.5) q.more = false; // a queue first seen after its partition loaded
      live.push(q);
    } else {
      const q = live[Math.floor(rand() * live.length)]!;
      const op = rand();
      if (op < 0.02) {
        q.detach(); // its partition left
        detached.add(q);
      } else if (op < 0.3) q.add({ taskId: `t${id++}`, readyAt: step });
      else if (op < 0.55) q.shift();
      else if (op < 0.65) q.unshift({ taskId: `u${id++}`, readyAt: step });
      else if (op < 0.8) q.fill(Array.from({ length: Math.floor(rand() * 4) }, () => ({ taskId: `f${id++}`, readyAt: step })), rand() < 0.3);
      else if (op < 0.9) q.more = rand() < 0.5;
      else {
        const head = q.peek();
        if (head) q.drop(head.taskId);
      }
    }
    for (const name of NAMES) {
      if (busy.count(name) !== scan(name)) throw new Error(`step ${step}: busy counts ${busy.count(name)} for ${name}, the scan ${scan(name)}`);
      if (busy.has(name) !== scan(name) > 0) throw new Error(`step ${step}: busy.has disagrees for ${name}`);
    }
  }
  expect(live.length).toBeGreaterThan(8);
});

it('counts a queue once however it changes, and not at all once detached', () => {
  const busy = new BusyQueues();
  const q = new QueueHeads(0, NAMES[0]!, 'acme', 'order', 'charge', busy);
  expect(busy.has(NAMES[0]!)).toBe(true); // new: Redis may hold more
  q.more = false;
  expect(busy.has(NAMES[0]!)).toBe(false);
  q.add({ taskId: 'a', readyAt: 1 });
  q.add({ taskId: 'b', readyAt: 2 });
  q.more = true;
  expect(busy.has(NAMES[0]!)).toBe(true);
  q.detach();
  expect(busy.has(NAMES[0]!)).toBe(false);
  q.more = false;
  q.more = true;
  expect(busy.has(NAMES[0]!)).toBe(false);
});
