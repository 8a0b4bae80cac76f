/**
 * A worker that registers with accepts_task_in_ack (and accepts_task_after_ack)
 * gets its next task inside the ack of its result when that task's start is
 * already on its way: one frame instead of two. The node never waits for a
 * start it has not made: with nothing to start, the ack goes out alone, and a
 * start that finds its task gone lets the ack go out alone too.
 */
import { pb } from '../../src/wire';
import { Slot, type SlotRegistration } from '../../src/gateway/slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('inack'));
});
afterEach(() => t.close());

const step = (seid: string) => ({ tenant: 'acme', flow_id: `f-${seid}`, flow_type: 'order', step_type: 's', step_execution_id: seid });

it('carries the next task of a backlog in each ack, and sends the last ack alone', async () => {
  const s = openSlot(t.worker, registerFrame({ accepts_task_after_ack: true, accepts_task_in_ack: true }));
  await s.nextOf('registered');
  const n = 30;
  await t.matching.enqueueSteps({ steps: Array.from({ length: n }, (_, i) => step(`b${i}`)) });
  let task = (await s.nextOf('step_task')).step_task!;
  const seen = new Set<string>([task.task_id!]);
  let inAck = 0;
  while (seen.size < n) {
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    const ack = (await s.nextOf('result_ack')).result_ack!; // throws if a step_task comes first
    expect(ack).toMatchObject({ task_token: task.task_token, verdict: pb.ResultVerdict.ACCEPTED });
    if (ack.next_task) {
      inAck++;
      task = ack.next_task;
    } else {
      task = (await s.nextOf('step_task')).step_task!;
    }
    expect(seen.has(task.task_id!)).toBe(false);
    seen.add(task.task_id!);
  }
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('last') } });
  const last = (await s.nextOf('result_ack')).result_ack!;
  expect(last.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(last.next_task).toBeFalsy();
  // With a backlog the next start leaves with the completion, so nearly every
  // ack carries it (the first results may race the owner loading its heads).
  expect(inAck).toBeGreaterThanOrEqual(n - 5);
  // every task ran once and completed: the ones that rode in acks too
  for (const id of seen) expect((await t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  s.reset();
});

it('never puts a task in the ack of a worker that did not ask for it', async () => {
  const s = openSlot(t.worker, registerFrame({ accepts_task_after_ack: true }));
  await s.nextOf('registered');
  await t.matching.enqueueSteps({ steps: Array.from({ length: 10 }, (_, i) => step(`o${i}`)) });
  let task = (await s.nextOf('step_task')).step_task!;
  for (let i = 1; i < 10; i++) {
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await s.nextOf('result_ack')).result_ack!.next_task).toBeFalsy();
    task = (await s.nextOf('step_task')).step_task!;
  }
  s.reset();
});

describe('Slot: an ack kept back for the next start', () => {
  const reg: SlotRegistration = {
    tenant: 'acme', appWorkerId: 'w', flowTypes: ['order'], kind: 'STEP_AND_RPC', taskLimit: 1, sdk: 'test',
    acceptsTaskAfterAck: true, acceptsTaskInAck: true,
  };
  const ack = { result_ack: { task_token: 'prev', verdict: pb.ResultVerdict.ACCEPTED } };
  const task = { step_task: { task_token: 'next', task_id: 'n1' } };

  /** A slot whose result came in (freed early) and that is bound again for a start; `got` collects what it writes. */
  function rebound(r = reg): { slot: Slot; got: pb.IServerFrame[] } {
    const slot = new Slot('s1', r);
    slot.awaitAck();
    slot.state = 'busy';
    return { slot, got: collect(slot) };
  }
  function collect(slot: Slot): pb.IServerFrame[] {
    const got: pb.IServerFrame[] = [];
    void (async () => {
      for await (const f of slot.out) got.push(f);
    })();
    return got;
  }
  const settled = () => new Promise((r) => setImmediate(r));

  it('merges the ack with the task that follows it', async () => {
    const { slot, got } = rebound();
    expect(slot.send(ack, 0)).toBe(true);
    slot.ackWritten();
    await settled();
    expect(got).toEqual([]); // kept back: the start is on its way
    expect(slot.send(task, 0)).toBe(true);
    await settled();
    expect(got).toEqual([{ result_ack: { ...ack.result_ack, next_task: task.step_task } }]);
  });

  it('merges with a task that was already held behind the ack', async () => {
    const { slot, got } = rebound();
    slot.send(task, 0);
    slot.send(ack, 0);
    slot.ackWritten();
    await settled();
    expect(got).toEqual([{ result_ack: { ...ack.result_ack, next_task: task.step_task } }]);
  });

  it('writes the ack alone when the slot is freed without a task, before any other frame, or at close', async () => {
    const freed = rebound();
    freed.slot.send(ack, 0);
    freed.slot.ackWritten();
    freed.slot.state = 'idle'; // the start found its task gone
    await settled();
    expect(freed.got).toEqual([ack]);

    const pinged = rebound();
    pinged.slot.send(ack, 0);
    pinged.slot.ackWritten();
    pinged.slot.send({ ping: { sent_at_ms: 1 } }, 0);
    await settled();
    expect(pinged.got).toEqual([ack, { ping: { sent_at_ms: 1 } }]);

    const closed = rebound();
    closed.slot.send(ack, 0);
    closed.slot.ackWritten();
    closed.slot.close();
    await settled();
    expect(closed.got).toEqual([ack]);
    expect(closed.slot.out.isClosed).toBe(true);
  });

  it('never keeps an ack back for a worker without the flag, an unbound slot or an ack of a result not freed early', async () => {
    const plain = rebound({ ...reg, acceptsTaskInAck: false });
    plain.slot.send(ack, 0);

    const idle = new Slot('s2', reg);
    idle.awaitAck();
    const idleGot = collect(idle);
    idle.send(ack, 0);

    const busy = new Slot('s3', reg); // busy with its own task: a stale result's refusal
    busy.state = 'busy';
    const busyGot = collect(busy);
    busy.send(ack, 0);
    await settled();
    expect([plain.got, idleGot, busyGot]).toEqual([[ack], [ack], [ack]]);
  });
});

it.each([
  ['a task after the ack', { accepts_task_after_ack: true }],
  ['a task in the ack', { accepts_task_after_ack: true, accepts_task_in_ack: true }],
])('acks the last result of a worker taking %s on a draining node before its stream ends', async (_how, over) => {
  const s = openSlot(t.worker, registerFrame(over));
  await s.nextOf('registered');
  await t.matching.enqueueStep({ step: step('drain-1') });
  const task = (await s.nextOf('step_task')).step_task!;
  t.node.gateway.startDrain();
  await s.nextOf('reconnect');
  s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  const ack = (await s.nextOf('result_ack')).result_ack!;
  expect(ack).toMatchObject({ task_token: task.task_token, verdict: pb.ResultVerdict.ACCEPTED });
  expect(ack.next_task).toBeFalsy();
  await expect(s.ended).resolves.toBeNull();
});
