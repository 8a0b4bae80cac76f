/**
 * Slot: the order in which frames reach the worker when a slot freed early
 * (accepts_task_after_ack) holds its next task behind the ack of the last
 * result. A Cancel of that next task must come after it, never before: a
 * worker drops a Cancel for a task it does not hold, and would then run the
 * cancelled task to its end.
 */
import { Slot } from '../../../src/gateway/slot';
import type { pb } from '../../../src/wire';

const reg = {
  tenant: 'acme', appWorkerId: 'w1', flowTypes: ['order'], kind: 'STEP_AND_RPC' as const, taskLimit: 1, sdk: 'test',
  acceptsTaskAfterAck: true, acceptsTaskInAck: false,
};

async function written(slot: Slot, n: number): Promise<pb.IServerFrame[]> {
  const it = slot.out[Symbol.asyncIterator]();
  const out: pb.IServerFrame[] = [];
  for (let i = 0; i < n; i++) out.push((await it.next()).value as pb.IServerFrame);
  return out;
}

const kind = (f: pb.IServerFrame) => Object.keys(f).find((k) => (f as Record<string, unknown>)[k] != null);

it('writes a Cancel after the task it cancels when that task waits behind an ack', async () => {
  const slot = new Slot('s1', reg);
  slot.awaitAck(); // a result came; its ack is on its way
  slot.send({ step_task: { task_token: 't2' } }, 1); // the next start finished first: held
  slot.send({ cancel: { task_token: 't2', reason: 'flow cancelled' } }, 2);
  expect(slot.holdsTask).toBe(true);
  slot.send({ result_ack: { task_token: 't1' } }, 3);
  slot.ackWritten();
  expect((await written(slot, 3)).map(kind)).toEqual(['result_ack', 'step_task', 'cancel']);
});

it('writes a Cancel at once when no task is held', async () => {
  const slot = new Slot('s1', reg);
  slot.send({ step_task: { task_token: 't1' } }, 1);
  slot.send({ cancel: { task_token: 't1', reason: 'flow cancelled' } }, 2);
  expect((await written(slot, 2)).map(kind)).toEqual(['step_task', 'cancel']);
});

it('holds a task behind every ack still to be written, not only the first', async () => {
  const slot = new Slot('s1', reg);
  slot.awaitAck(); // two results came while the slot was freed early
  slot.awaitAck();
  slot.send({ step_task: { task_token: 't3' } }, 1);
  slot.send({ result_ack: { task_token: 't1' } }, 2);
  slot.ackWritten();
  expect(slot.holdsTask).toBe(true);
  slot.send({ result_ack: { task_token: 't2' } }, 3);
  slot.ackWritten();
  expect(slot.holdsTask).toBe(false);
  expect((await written(slot, 3)).map((f) => (f.result_ack ?? f.step_task)!.task_token)).toEqual(['t1', 't2', 't3']);
});

it('takes back a task that rides unread in an ack, so a stream ending before the worker read it returns the task', async () => {
  const slot = new Slot('s1', { ...reg, acceptsTaskInAck: true });
  slot.state = 'busy';
  slot.awaitAck();
  slot.send({ step_task: { task_token: 't2' } }, 1); // the next start finished first: held
  slot.send({ result_ack: { task_token: 't1' } }, 2); // it rides in this ack
  expect(slot.out.size).toBe(1);
  expect(slot.takeBackUnread('t2')).toBe(true);
  expect(slot.out.size).toBe(0);
});

it('refuses a task frame held behind an ack once the stream has ended', () => {
  const slot = new Slot('s1', reg);
  slot.awaitAck();
  slot.close();
  expect(slot.send({ step_task: { task_token: 't2' } }, 1)).toBe(false);
  expect(slot.holdsTask).toBe(false);
});
