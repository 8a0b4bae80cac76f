/**
 * What a node's link to one peer holds back (src/cluster/link-outbox.ts): the
 * notices lost to its bound are said once their frame is written, and what is
 * handed back from a link the peer never served is its one-way frames, the
 * newest capacity snapshot only, and no offer batch (those fail on their own).
 */
import { LinkOutbox, MAX_QUEUED_BELL_EVENTS } from '../../../src/cluster/link-outbox';
import type { pb } from '../../../src/wire';

const bells = (n: number, from = 0): pb.ILinkFrame => ({
  doorbell: { events: Array.from({ length: n }, (_, i) => ({ partition: 0, task_id: `t${from + i}` })) },
});
const capacity = (seq: number): pb.ILinkFrame => ({ capacity: { node_id: 'me', seq } });
const offers = (id: string): pb.ILinkFrame => ({ offers: { offers: [{ ref: { task_id: id } }] } } as pb.ILinkFrame);

it('says notices were dropped once the frame that lost them is written, and only then', async () => {
  const out = new LinkOutbox();
  let told = 0;
  out.onBellsDropped = () => told++;
  out.push(bells(MAX_QUEUED_BELL_EVENTS));
  out.push(bells(10, MAX_QUEUED_BELL_EVENTS));
  expect(out.droppedBellEvents).toBe(10);
  expect(told).toBe(0);
  const it = out[Symbol.asyncIterator]();
  const frame = (await it.next()).value as pb.ILinkFrame;
  expect(frame.doorbell!.events!.length).toBe(MAX_QUEUED_BELL_EVENTS);
  expect(frame.doorbell!.events![0].task_id).toBe('t10'); // the oldest went
  expect(told).toBe(1);
  out.push(bells(1));
  await it.next();
  expect(told).toBe(1);
});

it('hands back the one-way frames of a link never confirmed: the newest snapshot only, and no offer batch', async () => {
  const out = new LinkOutbox();
  const it = out[Symbol.asyncIterator]();
  out.push(capacity(1));
  out.push(offers('o1'));
  await it.next();
  await it.next(); // both written, the peer never confirmed the link
  out.push(bells(1));
  out.push(capacity(2)); // queued, not written
  out.push(offers('o2'));
  const back = out.unconfirmed();
  expect(back).toEqual([bells(1), capacity(2)]);
  expect(out.size).toBe(0);
});

it('hands back nothing once the peer confirmed the link', async () => {
  const out = new LinkOutbox();
  const it = out[Symbol.asyncIterator]();
  out.push(capacity(1));
  await it.next();
  out.confirm();
  expect(out.unconfirmed()).toEqual([]);
});

it('keeps one queued capacity snapshot, the newest, however many come before the stream takes one', async () => {
  const out = new LinkOutbox();
  out.push(capacity(1));
  out.push(capacity(2));
  out.push(capacity(3));
  expect(out.size).toBe(1);
  const it = out[Symbol.asyncIterator]();
  expect((await it.next()).value).toEqual(capacity(3));
});

it('hands back nothing queued once the peer confirmed the link, and queues afresh after a hand-back', async () => {
  const out = new LinkOutbox();
  out.confirm();
  out.push(bells(1));
  out.push(capacity(1));
  expect(out.unconfirmed()).toEqual([]);
  // What was handed back is gone: a new snapshot is queued itself, not merged into it.
  out.push(capacity(2));
  out.push(bells(1, 5));
  expect(out.size).toBe(2);
});

it('drops the oldest notice as soon as the queued doorbell frame goes one past its bound', () => {
  const out = new LinkOutbox();
  out.push(bells(MAX_QUEUED_BELL_EVENTS));
  expect(out.droppedBellEvents).toBe(0);
  out.push(bells(1, MAX_QUEUED_BELL_EVENTS));
  expect(out.droppedBellEvents).toBe(1);
});
