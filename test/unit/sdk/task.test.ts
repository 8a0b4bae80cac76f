import { pb } from '../../../src/wire';
import { Outbox } from '../../../src/sdk/worker/outbox';
import { PongSweep } from '../../../src/sdk/worker/pongs';
import { HeartbeatThrottle } from '../../../src/sdk/worker/heartbeats';
import { PONG_INTERVAL_MS, TaskCancelledError, TaskRun } from '../../../src/sdk/worker/task';
import { recordingLogger } from './fake-worker-server';

describe('Outbox', () => {
  it('yields frames in order, coalesces keyed ones, and ends after the queue', async () => {
    const box = new Outbox<string>();
    box.push('a');
    box.push('hb1', 'hb');
    box.push('hb2', 'hb'); // replaces the pending heartbeat
    box.push('b');
    box.end();
    expect(box.push('late')).toBe(false);
    const out: string[] = [];
    for await (const f of box.frames()) out.push(f);
    expect(out).toEqual(['a', 'hb2', 'b']);
  });

  it('wakes a waiting reader', async () => {
    const box = new Outbox<number>();
    const it = box.frames();
    const next = it.next();
    box.push(1);
    await expect(next).resolves.toEqual({ value: 1, done: false });
    box.end();
    await expect(it.next()).resolves.toEqual({ value: undefined, done: true });
  });
});

describe('PongSweep', () => {
  afterEach(() => jest.useRealTimers());

  it('pongs every running task at its cadence from one timer, and lets the timer go once none runs', () => {
    jest.useFakeTimers();
    const sweep = new PongSweep(1000);
    const pongs: string[] = [];
    const task = (name: string) => ({ pong: () => void pongs.push(name) });
    const [a, b, c] = [task('a'), task('b'), task('c')];
    sweep.add(a);
    jest.advanceTimersByTime(500);
    sweep.add(b);
    sweep.add(c);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(500); // a is due (at 750), not b or c (at 1 250)
    expect(pongs).toEqual(['a']);
    sweep.delete(c);
    jest.advanceTimersByTime(1000); // b at 1 250 and 2 000, a at 1 500
    expect(pongs).toEqual(['a', 'b', 'a', 'b']);
    sweep.delete(a);
    sweep.delete(b);
    expect(sweep.running).toBe(0);
    jest.advanceTimersByTime(250);
    expect(jest.getTimerCount()).toBe(0);
    expect(pongs).toEqual(['a', 'b', 'a', 'b']);
    sweep.add(c); // and starts again
    jest.advanceTimersByTime(1000);
    expect(pongs).toEqual(['a', 'b', 'a', 'b', 'c']);
  });

  it('never leaves a running task more than the interval without a Pong, whenever it started', () => {
    jest.useFakeTimers();
    const sweep = new PongSweep(20_000);
    const gaps: number[] = [];
    sweep.add({ pong: () => undefined }); // keeps the sweep's phase fixed
    // Tasks starting at every offset within a sweep period (its clock is monotonic: time
    // moves on for it, not by setting the date), and their gaps over a few minutes.
    for (let offset = 0; offset < 5000; offset += 250) {
      let last = Date.now();
      sweep.add({ pong: (now: number) => { gaps.push(now - last); last = now; } });
      jest.advanceTimersByTime(250); // the next offset starts later
    }
    jest.advanceTimersByTime(180_000);
    expect(gaps.length).toBeGreaterThan(100);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(20_000);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(10_000);
  });
});

describe('TaskRun', () => {
  afterEach(() => jest.useRealTimers());

  it('shares the worker\'s Pong timer: 50 running tasks hold one timer, and each pongs', async () => {
    jest.useFakeTimers();
    const sweep = new PongSweep(PONG_INTERVAL_MS);
    const sent: pb.IWorkerFrame[] = [];
    const finish: ((v: string) => void)[] = [];
    const tasks = Array.from({ length: 50 }, (_, i) => new TaskRun(`t${i}`, 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger(), pongs: sweep },
      () => new Promise<string>((r) => finish.push(r))));
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(PONG_INTERVAL_MS);
    expect(sent.filter((f) => f.pong)).toHaveLength(50);
    for (const f of finish) f('x');
    await Promise.resolve();
    await Promise.resolve();
    expect(sweep.running).toBe(0);
    for (const t of tasks) t.abandon(new Error('done'));
  });

  it('sends a Pong every 20 s while the handler runs, then the result, then waits for the ack', async () => {
    jest.useFakeTimers();
    const sent: pb.IWorkerFrame[] = [];
    let finish!: (v: string) => void;
    const task = new TaskRun('tok', 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() },
      () => new Promise<string>((r) => (finish = r)));
    jest.advanceTimersByTime(PONG_INTERVAL_MS * 2 + 1);
    expect(sent.filter((f) => f.pong)).toHaveLength(2);
    finish('x');
    await Promise.resolve();
    await Promise.resolve();
    expect(task.phase).toBe('flushing');
    expect(sent.at(-1)!.step_result).toMatchObject({ task_token: 'tok' });
    jest.advanceTimersByTime(PONG_INTERVAL_MS * 3);
    expect(sent.filter((f) => f.pong)).toHaveLength(2); // no Pong once the handler returned
    task.acked({ task_token: 'tok', verdict: pb.ResultVerdict.ACCEPTED });
    await task.done;
    expect(task.phase).toBe('done');
  });

  it('rejects handler return values that are not bytes or strings as a failure', async () => {
    const sent: pb.IWorkerFrame[] = [];
    const task = new TaskRun('t', 'rpc', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() },
      () => ({ not: 'bytes' }) as unknown as string);
    await new Promise((r) => setImmediate(r));
    expect(sent[0]!.rpc_result!.failure).toMatchObject({ type: 'TypeError' });
    task.abandon(new Error('x'));
    await task.done;
  });

  it.each([
    ['null', null],
    ['nothing', undefined],
  ])('sends an empty output, not a failure, for a handler that returns %s', async (_what, value) => {
    const sent: pb.IWorkerFrame[] = [];
    const task = new TaskRun('t', 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() }, () => value);
    await new Promise((r) => setImmediate(r));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.step_result!.failure).toBeUndefined();
    expect(Buffer.from(sent[0]!.step_result!.output!)).toEqual(Buffer.alloc(0));
    task.acked({ task_token: 't', verdict: pb.ResultVerdict.ACCEPTED });
    await task.done;
  });

  it('sends no heartbeat its handler makes after returning: the result is the last word', async () => {
    const sent: pb.IWorkerFrame[] = [];
    let beat!: (details?: string) => void;
    const task = new TaskRun('t', 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() }, (_task, heartbeat) => {
      beat = heartbeat;
      return 'out';
    });
    await new Promise((r) => setTimeout(r, 10));
    beat('late'); // a timer the handler left behind
    expect(sent.map((f) => Object.keys(f)[0])).toEqual(['step_result']);
    task.acked({ task_token: 't', verdict: pb.ResultVerdict.ACCEPTED });
    await task.done;
  });

  it('sends nothing once abandoned', async () => {
    const sent: pb.IWorkerFrame[] = [];
    const task = new TaskRun('t', 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() },
      ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))));
    task.abandon(new Error('stream lost'));
    await task.done;
    expect(sent).toHaveLength(0);
  });

  it('gives a handler that reads its signal only after a Cancel an already-aborted signal', async () => {
    const sent: pb.IWorkerFrame[] = [];
    let late: AbortSignal | undefined;
    let proceed!: () => void;
    const task = new TaskRun('t', 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() },
      async (t) => {
        await new Promise<void>((r) => (proceed = r));
        late = t.signal;
      });
    task.cancel('flow cancelled');
    proceed();
    await new Promise((r) => setImmediate(r));
    expect(late?.aborted).toBe(true);
    expect(late?.reason).toBeInstanceOf(TaskCancelledError);
    task.acked({ task_token: 't', verdict: pb.ResultVerdict.REFUSED_CANCELLED });
    await task.done;
  });
});

describe('TaskRun heartbeats', () => {
  afterEach(() => jest.useRealTimers());

  /** A running task with the heartbeat timeout, its heartbeat function, its sent frames' details and a finish. */
  function running(heartbeatTimeoutMs: number) {
    const sent: pb.IWorkerFrame[] = [];
    let beat!: (d?: string) => void;
    let finish!: () => void;
    const task = new TaskRun('t', 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() },
      (_t, heartbeat) => new Promise<string>((r) => {
        beat = heartbeat;
        finish = () => r('x');
      }), heartbeatTimeoutMs);
    const details = () => sent.filter((f) => f.heartbeat).map((f) => Buffer.from(f.heartbeat!.details!).toString());
    return { task, beat: (d?: string) => beat(d), finish: () => finish(), details };
  }

  it('sends the first at once, then one per third of the timeout, carrying the latest details', () => {
    jest.useFakeTimers();
    const r = running(3000);
    for (let i = 1; i <= 500; i++) r.beat(`${i}`);
    expect(r.details()).toEqual(['1']);
    jest.advanceTimersByTime(999);
    expect(r.details()).toEqual(['1']);
    jest.advanceTimersByTime(1);
    expect(r.details()).toEqual(['1', '500']);
    jest.advanceTimersByTime(5000);
    expect(r.details()).toEqual(['1', '500']); // nothing held: nothing sent
    r.beat('late');
    expect(r.details()).toEqual(['1', '500', 'late']); // an interval passed: at once
    r.task.abandon(new Error('x'));
  });

  // A heartbeat timeout over 3 × (2^31 - 1) ms (the node allows up to 366 days): a timer that long
  // fires after 1 ms, so the throttle sent a Heartbeat (a Redis script call) about every millisecond.
  it('keeps throttling with a heartbeat timeout whose third a timer cannot hold', async () => {
    const r = running(300 * 86_400_000);
    r.beat('a');
    r.beat('b');
    await new Promise((res) => setTimeout(res, 50)); // real timers: the overflow is Node's
    r.beat('c');
    await new Promise((res) => setTimeout(res, 50));
    expect(r.details()).toEqual(['a']);
    r.task.abandon(new Error('x'));
  });

  it('sends at most one a second without a heartbeat timeout, and nothing held once the handler returned', async () => {
    jest.useFakeTimers();
    const r = running(0);
    r.beat('a');
    r.beat('b');
    jest.advanceTimersByTime(1000);
    expect(r.details()).toEqual(['a', 'b']);
    r.beat('c');
    r.finish();
    await Promise.resolve();
    await Promise.resolve();
    jest.advanceTimersByTime(5000);
    expect(r.details()).toEqual(['a', 'b']);
    expect(jest.getTimerCount()).toBe(0);
    r.task.abandon(new Error('x'));
  });
});

describe('HeartbeatThrottle', () => {
  it('holds a heartbeat that comes while one is held, even when its timer is late, so the latest details go last', async () => {
    const sent: string[] = [];
    const throttle = new HeartbeatThrottle(20, (d) => sent.push(Buffer.from(d).toString()));
    throttle.beat(Buffer.from('a'));
    throttle.beat(Buffer.from('b')); // held for the end of the interval
    const until = performance.now() + 35;
    while (performance.now() < until); // the handler keeps the event loop: the timer is late
    throttle.beat(Buffer.from('c'));
    expect(sent).toEqual(['a']);
    await new Promise((r) => setTimeout(r, 40));
    expect(sent).toEqual(['a', 'c']);
    throttle.stop();
  });

  it('holds its timer unreferenced: a held heartbeat never keeps the process up', () => {
    const spy = jest.spyOn(global, 'setTimeout');
    const throttle = new HeartbeatThrottle(60_000, () => undefined);
    let timers: NodeJS.Timeout[];
    try {
      throttle.beat(new Uint8Array(0));
      throttle.beat(new Uint8Array(0));
      timers = spy.mock.results.map((r) => r.value as NodeJS.Timeout);
    } finally {
      spy.mockRestore();
    }
    expect(timers).toHaveLength(1);
    expect(timers[0]!.hasRef()).toBe(false);
    throttle.stop();
  });
});

describe('TaskRun refused failure', () => {
  it('sends a failure refused as invalid again once, and takes a second refusal as the end', async () => {
    const sent: pb.IWorkerFrame[] = [];
    const task = new TaskRun('t', 'step', {}, { send: (f) => (sent.push(f), true), logger: recordingLogger() }, () => {
      throw new Error('bad');
    });
    await new Promise((r) => setImmediate(r));
    expect(sent.filter((f) => f.step_result)).toHaveLength(1);
    const refused = { task_token: 't', verdict: pb.ResultVerdict.REFUSED_INVALID, error: 'type too long' };
    expect(task.acked(refused)).toBe(false);
    expect(sent.filter((f) => f.step_result).map((f) => f.step_result!.failure!.type)).toEqual(['Error', 'invalid_result']);
    // A node that refuses that one too must not get it a third time: the slot is freed.
    expect(task.acked(refused)).toBe(true);
    expect(sent.filter((f) => f.step_result)).toHaveLength(2);
    await task.done;
  });
});
