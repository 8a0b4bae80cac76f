/**
 * The store's record formats over a real redis-server: the done record (one
 * string holding the whole outcome, kept after the stream entry is trimmed)
 * and the task's packed spec, and tasks and done hashes written in the layout
 * before either was packed, which the scripts still read.
 */
import { FetchStore } from '../../src/store/fetch-store';
import { payloadArg, TaskStore, type NewTask } from '../../src/store/task-store';
import { decodeEntry, OutcomeStore } from '../../src/store/outcomes';
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const RETENTION = 60_000;
const fx = useTaskStore(redis, 'rec', { retentionMs: RETENTION });
let fetchStore: FetchStore;

beforeEach(() => {
  fetchStore = new FetchStore(fx.client, fx.keys, RETENTION);
});

const newTask = taskBuilder((n) => ({ flowId: `flow ${n} ünïcode`, input: Buffer.from([1, 0xff, 0, 2]) }));
const str = (h: Record<string, Buffer> | null) =>
  Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k, k === 'output' || k === 'input' ? [...v] : v.toString()]));

/** A task as enqueueTask wrote it before the spec was packed: each value a field of its own. */
async function legacyEnqueue(t: NewTask, now: number): Promise<void> {
  const tag = fx.keys.tag(t.partition);
  await fx.client.hset(fx.keys.task(t.partition, t.taskId),
    'state', 'queued', 'attempt', '1', 'queue', t.queue, 'enqueuedAt', now, 'readyAt', now, 'deadline', t.flowDeadline,
    'tenant', t.tenant, 'flowId', t.flowId, 'flowType', t.flowType, 'stepType', t.stepType, 'seid', t.stepExecutionId,
    'input', t.input, 'maxAttempts', t.maxAttempts, 'initialInterval', t.initialInterval,
    'backoffCoefficient', t.backoffCoefficient, 'maxInterval', t.maxInterval, 'nonRetryable', t.nonRetryable.join('\x1f'),
    'methodTimeout', t.methodTimeout, 'hbTimeout', t.heartbeatTimeout, 'sticky', t.stickyWorkerId);
  await fx.client.zadd(`${tag}q:${t.queue}`, now, t.taskId);
  await fx.client.sadd(`${tag}queues`, t.queue);
  await fx.client.sadd(fx.keys.flow(t.partition, t.tenant, t.flowId), t.taskId);
  if (t.flowDeadline > 0) await fx.client.zadd(fx.keys.deadlines(t.partition), t.flowDeadline, t.taskId);
}

/** The outcome stream entry of an outcome id, as stored. */
async function rawEntry(partition: number, id: string): Promise<Record<string, Buffer>> {
  const [entry] = await fx.client.xrangeBuffer(fx.keys.out(partition), id, id);
  const fields = entry![1];
  const out: Record<string, Buffer> = {};
  for (let i = 0; i < fields.length; i += 2) out[fields[i]!.toString()] = fields[i + 1]!;
  return out;
}

/** The outcome stream entry of an outcome id, as outcome fields. */
async function streamEntry(partition: number, id: string): Promise<Record<string, Buffer>> {
  return decodeEntry(await rawEntry(partition, id));
}

async function run(t: NewTask, now: number): Promise<string> {
  const started = await fx.store.start(t.partition, t.taskId, 0, testSlot, 'nonce-1', now);
  expect(started).toMatchObject({ taskId: t.taskId, attempt: 1 });
  return 'nonce-1';
}

describe('the done record', () => {
  it('is one string with a TTL that holds the whole outcome, binary output included, after the stream entry is trimmed', async () => {
    const t = newTask();
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    const output = Buffer.from([0xff, 0, 0x41, 0xff, 0xfe]);
    const r = await fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce }, output, now + 5);
    if (r.kind !== 'completed') throw new Error(r.kind);

    const key = fx.keys.done(t.partition, t.taskId);
    expect(await fx.client.type(key)).toBe('string');
    const ttl = await fx.client.pttl(key);
    expect(ttl).toBeGreaterThan(RETENTION - 5000);
    expect(ttl).toBeLessThanOrEqual(RETENTION);

    const entry = await streamEntry(t.partition, r.outcomeId);
    const done = await fx.store.readDone(t.partition, t.taskId);
    expect(str(done)).toEqual({ ...str(entry), outcomeId: r.outcomeId, fetchIdem: `\x01${nonce}` });
    expect(str(done)).toMatchObject({
      taskId: t.taskId, tenant: 'acme', flowId: t.flowId, flowType: 'order', stepType: 'charge', seid: t.stepExecutionId,
      status: 'COMPLETED', attempt: '1', worker: 'w1', output: [...output], errMsg: '', errType: '', errNR: '0',
      finishedAt: String(now + 5), enqueuedAt: String(now),
    });

    await fx.client.xtrim(fx.keys.out(t.partition), 'MAXLEN', 0);
    expect(await fx.client.xlen(fx.keys.out(t.partition))).toBe(0);
    expect(str(await fx.store.readDone(t.partition, t.taskId))).toEqual(str(done));

    // Ended: a late result of another start names the status; a retried enqueue creates nothing.
    expect(await fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-other' }, output, now))
      .toEqual({ kind: 'ended', status: 'COMPLETED' });
    expect((await fx.store.enqueue(t, now)).result).toBe('ended');
    expect(await fx.store.readTask(t.partition, t.taskId)).toBeNull();
  });

  it('stays a second at the least, whatever outcomes.retention says', async () => {
    const store = new TaskStore(fx.client, fx.keys, 0, 60_000);
    const t = newTask();
    const now = Date.now();
    await store.enqueue(t, now);
    await store.start(t.partition, t.taskId, 0, testSlot, 'n1', now);
    const r = await store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' }, Buffer.from('out'), now);
    expect(r).toMatchObject({ kind: 'completed' });
    expect(await fx.client.pttl(fx.keys.done(t.partition, t.taskId))).toBeGreaterThan(500);
  });

  it('keeps a failure message as sent, and the fetch surface\'s idempotency key', async () => {
    const t = newTask({ maxAttempts: 1 });
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    const message = 'line 1\nline 2 \u00ff\u2028 \0 end';
    const r = await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce },
      { message, type: 'Oops', nonRetryable: false, retryAfterMs: 0 }, now);
    expect(r.kind).toBe('terminal');
    expect(str(await fx.store.readDone(t.partition, t.taskId))).toMatchObject({ status: 'FAILED', errMsg: message, errType: 'Oops', errNR: '0' });

    const f = newTask();
    await fx.store.enqueue(f, now);
    await fetchStore.lock(f.partition, [f.queue], 'fw', 10_000, 10, 0, now);
    const c = await fetchStore.complete(f.partition, f.taskId, 'fw', undefined, 'key-1', now);
    expect(c).toMatchObject({ kind: 'ok', absorbed: false });
    expect(str(await fx.store.readDone(f.partition, f.taskId))).toMatchObject({ status: 'COMPLETED', fetchIdem: 'key-1', worker: 'fw', output: [1, 0xff, 0, 2] });
    expect(await fetchStore.complete(f.partition, f.taskId, 'fw', undefined, 'key-1', now))
      .toEqual({ kind: 'ok', outcomeId: (c as { outcomeId: string }).outcomeId, absorbed: true });
    expect(await fetchStore.complete(f.partition, f.taskId, 'fw', undefined, 'key-2', now)).toEqual({ kind: 'refused', verdict: 'terminal' });
  });

  it('reads a done hash, the format before the record was one string', async () => {
    const t = newTask();
    const key = fx.keys.done(t.partition, t.taskId);
    await fx.client.hset(key, 'outcomeId', '1-1', 'taskId', t.taskId, 'tenant', 'acme', 'flowId', t.flowId, 'flowType', 'order',
      'stepType', 'charge', 'seid', t.stepExecutionId, 'status', 'CANCELLED', 'attempt', '1', 'worker', '', 'output', '',
      'errMsg', 'stop', 'errType', 'cancelled', 'errNR', '1', 'finishedAt', '5', 'enqueuedAt', '4', 'fetchIdem', 'k');
    await fx.client.pexpire(key, RETENTION);
    expect(str(await fx.store.readDone(t.partition, t.taskId))).toMatchObject({ outcomeId: '1-1', status: 'CANCELLED', errMsg: 'stop' });
    expect(await fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'x' }, Buffer.alloc(0), 1))
      .toEqual({ kind: 'ended', status: 'CANCELLED' });
    expect(await fx.store.heartbeat({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'x' }, 1))
      .toEqual({ kind: 'ended', status: 'CANCELLED' });
    expect((await fx.store.enqueue(t, 1)).result).toBe('ended');
    expect(await fetchStore.complete(t.partition, t.taskId, 'fw', undefined, 'k', 1)).toEqual({ kind: 'ok', outcomeId: '1-1', absorbed: true });
    expect(await fetchStore.complete(t.partition, t.taskId, 'fw', undefined, 'other', 1)).toEqual({ kind: 'refused', verdict: 'terminal' });
    expect(await fetchStore.unlock(t.partition, t.taskId, 'fw', 1)).toEqual({ kind: 'refused', verdict: 'terminal' });
  });
});

describe('the outcome stream entry', () => {
  it('is two fields, taskId and the packed outcome, which consumers read as the done record\'s fields', async () => {
    const t = newTask();
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    const output = Buffer.from([0xff, 0, 0x41]);
    const r = await fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce }, output, now + 7);
    if (r.kind !== 'completed') throw new Error(r.kind);
    const raw = await rawEntry(t.partition, r.outcomeId);
    expect(Object.keys(raw).sort()).toEqual(['o', 'taskId']);
    expect(raw.taskId!.toString()).toBe(t.taskId);

    const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
    await outcomes.ensureGroup('g');
    const [o] = await outcomes.readNew('g', 'c', 10, [t.partition]);
    expect(o).toEqual({
      outcomeId: `${t.partition}-${r.outcomeId}`, taskId: t.taskId, tenant: 'acme', flowId: t.flowId, flowType: 'order',
      stepType: 'charge', stepExecutionId: t.stepExecutionId, status: 'COMPLETED', attempt: 1, appWorkerId: 'w1',
      output, error: null, finishedAt: now + 7, enqueuedAt: now,
    });
  });

  it('carries a failure as consumers read it: retryable or not, a type without a message still an error', async () => {
    const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
    await outcomes.ensureGroup('g');
    const now = Date.now();
    const failures = [
      { message: 'no route', type: 'Io', nonRetryable: false, retryAfterMs: 0 },
      { message: '', type: 'Fatal', nonRetryable: true, retryAfterMs: 0 },
    ];
    for (const f of failures) {
      const t = newTask({ maxAttempts: 1 });
      await fx.store.enqueue(t, now);
      const nonce = await run(t, now);
      expect(await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce }, f, now))
        .toMatchObject({ kind: 'terminal', status: 'FAILED' });
      const [o] = await outcomes.readNew('g', 'c', 10, [t.partition]);
      expect(o).toMatchObject({ taskId: t.taskId, status: 'FAILED', error: { message: f.message, type: f.type, nonRetryable: f.nonRetryable } });
    }
  });

  it('still reads an entry written field by field, the format before it was packed', async () => {
    const t = newTask();
    const outcomes = new OutcomeStore(fx.client, fx.keys, 8);
    await outcomes.ensureGroup('g');
    const id = await fx.client.xadd(fx.keys.out(t.partition), '*', 'taskId', t.taskId, 'tenant', 'acme', 'flowId', t.flowId,
      'flowType', 'order', 'stepType', 'charge', 'seid', t.stepExecutionId, 'status', 'FAILED', 'attempt', '2', 'worker', 'w9',
      'output', '', 'errMsg', 'boom', 'errType', 'E', 'errNR', '1', 'finishedAt', '20', 'enqueuedAt', '10');
    const [o] = await outcomes.readNew('g', 'c', 10, [t.partition]);
    expect(o).toMatchObject({
      outcomeId: `${t.partition}-${id}`, taskId: t.taskId, status: 'FAILED', attempt: 2, appWorkerId: 'w9',
      error: { message: 'boom', type: 'E', nonRetryable: true }, finishedAt: 20, enqueuedAt: 10,
    });
  });
});

describe('the task spec', () => {
  it('is one field of the task hash, read back as the fields GetTask shows', async () => {
    const t = newTask({ flowDeadline: Date.now() + 60_000, methodTimeout: 5000, heartbeatTimeout: 2000, nonRetryable: ['A', 'B'], stickyWorkerId: 'w9' });
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const raw = await fx.client.hgetallBuffer(fx.keys.task(t.partition, t.taskId));
    expect(Object.keys(raw).sort()).toEqual(['attempt', 'input', 'queue', 'readyAt', 'spec', 'state']);
    expect(str(await fx.store.readTask(t.partition, t.taskId))).toEqual({
      state: 'queued', attempt: '1', queue: t.queue, readyAt: String(now), input: [1, 0xff, 0, 2],
      methodTimeout: '5000', hbTimeout: '2000', deadline: String(t.flowDeadline), enqueuedAt: String(now), tenant: 'acme',
      flowId: t.flowId, flowType: 'order', stepType: 'charge', seid: t.stepExecutionId, maxAttempts: '3',
      initialInterval: '1000', backoffCoefficient: '2', maxInterval: '60000', nonRetryable: 'A\x1fB', sticky: 'w9',
    });
    expect(await fx.store.readTenant(t.partition, t.taskId)).toBe('acme');
    expect(await fx.store.readTenant(t.partition, `${t.partition}-${'f'.repeat(24)}`)).toBeNull();

    const started = await fx.store.start(t.partition, t.taskId, 1, testSlot, 'nonce-1', now + 1);
    expect(started).toEqual({
      taskId: t.taskId, attempt: 1, nonce: 'nonce-1', startedAt: now + 1, input: t.input, tenant: 'acme', flowId: t.flowId,
      flowType: 'order', stepType: 'charge', stepExecutionId: t.stepExecutionId, enqueuedAt: now, methodTimeout: 5000,
      heartbeatTimeout: 2000, flowDeadline: t.flowDeadline, deadlineAt: now + 1 + 2000,
    });
    // a non-retryable type from the spec ends the attempt at once
    const r = await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' },
      { message: 'no', type: 'B', nonRetryable: false, retryAfterMs: 0 }, now + 2);
    expect(r.kind).toBe('terminal');
    expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBeNull();
    expect(await fx.client.exists(fx.keys.flow(t.partition, t.tenant, t.flowId))).toBe(0);
  });
});

describe('retry backoff', () => {
  it('grows by backoffCoefficient from initialInterval up to maxInterval; a worker retry-after replaces it', async () => {
    const t = newTask({ maxAttempts: 6, initialInterval: 100, backoffCoefficient: 2, maxInterval: 300 });
    let now = Date.now();
    await fx.store.enqueue(t, now);
    const failOnce = async (attempt: number, retryAfterMs: number) => {
      expect(await fx.store.start(t.partition, t.taskId, attempt, testSlot, `n${attempt}`, now)).toMatchObject({ attempt });
      return fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt, nonce: `n${attempt}` },
        { message: 'again', type: 'Io', nonRetryable: false, retryAfterMs }, now);
    };
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const r = await failOnce(attempt, attempt === 5 ? 1234 : 0);
      if (r.kind !== 'retry') throw new Error(r.kind);
      expect(r.attempt).toBe(attempt + 1);
      expect(await fx.client.zscore(fx.keys.queue(t.partition, t.queue), t.taskId)).toBe(String(r.readyAt));
      delays.push(r.readyAt - now);
      now = r.readyAt;
    }
    expect(delays).toEqual([100, 200, 300, 300, 1234]);
    expect((await failOnce(6, 0)).kind).toBe('terminal'); // maxAttempts
  });
});

describe('a retry\'s sticky worker', () => {
  it('is the request\'s sticky worker, else the one the flow remembers, else none', async () => {
    const now = Date.now();
    const failure = { message: 'again', type: 'Io', nonRetryable: false, retryAfterMs: 0 };
    const named = newTask({ stickyWorkerId: 'w-named' });
    const remembered = newTask();
    const none = newTask();
    await fx.client.set(fx.keys.sticky(remembered.partition, remembered.tenant, remembered.flowId), 'w-remembered');
    const sticky: string[] = [];
    for (const t of [named, remembered, none]) {
      await fx.store.enqueue(t, now);
      await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n1', now);
      const r = await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' }, failure, now);
      sticky.push(r.kind === 'retry' ? r.sticky : r.kind);
    }
    expect(sticky).toEqual(['w-named', 'w-remembered', '']);
  });
});

describe('a failure that ends the task', () => {
  it('says which outcome it wrote: FAILED past maxAttempts, TIMED_OUT when the retry would pass the flow deadline', async () => {
    const now = Date.now();
    const failure = { message: 'no', type: 'Io', nonRetryable: false, retryAfterMs: 0 };
    const last = newTask({ maxAttempts: 1 });
    const late = newTask({ maxAttempts: 5, initialInterval: 60_000, flowDeadline: now + 1000 });
    for (const t of [last, late]) {
      await fx.store.enqueue(t, now);
      await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n1', now);
    }
    expect(await fx.store.fail({ partition: last.partition, taskId: last.taskId, attempt: 1, nonce: 'n1' }, failure, now))
      .toMatchObject({ kind: 'terminal', status: 'FAILED' });
    expect(await fx.store.fail({ partition: late.partition, taskId: late.taskId, attempt: 1, nonce: 'n1' }, failure, now))
      .toMatchObject({ kind: 'terminal', status: 'TIMED_OUT' });
    expect(str(await fx.store.readDone(late.partition, late.taskId))).toMatchObject({ status: 'TIMED_OUT' });
  });
});

describe('a result call run again', () => {
  // Its first run landed but the reply was lost (a dropped connection; the gateway
  // runs it again, and ioredis re-sends it after a reconnect): it answers as the
  // first run did, writing nothing more. Another start's late result is refused.
  const failure = { message: 'again', type: 'Io', nonRetryable: false, retryAfterMs: 0 };

  it('completes: the same outcome, one stream entry', async () => {
    const t = newTask();
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    const a = { partition: t.partition, taskId: t.taskId, attempt: 1, nonce };
    const first = await fx.store.complete(a, Buffer.from('out'), now);
    if (first.kind !== 'completed') throw new Error(first.kind);
    const entries = await fx.client.xlen(fx.keys.out(t.partition));
    expect(await fx.store.complete(a, Buffer.from('out'), now + 1)).toEqual(first);
    expect(await fx.client.xlen(fx.keys.out(t.partition))).toBe(entries);
    expect(await fx.store.complete({ ...a, nonce: 'nonce-2' }, Buffer.from('out'), now)).toEqual({ kind: 'ended', status: 'COMPLETED' });
    expect(await fx.store.fail(a, failure, now)).toEqual({ kind: 'ended', status: 'COMPLETED' });
  });

  it('schedules the retry once, and answers the retry it scheduled', async () => {
    const t = newTask({ maxAttempts: 3, initialInterval: 500, stickyWorkerId: 'w-s' });
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    const a = { partition: t.partition, taskId: t.taskId, attempt: 1, nonce };
    const first = await fx.store.fail(a, failure, now);
    expect(first).toMatchObject({ kind: 'retry', attempt: 2, readyAt: now + 500, sticky: 'w-s' });
    expect(await fx.store.fail(a, failure, now + 100)).toEqual(first);
    expect(await fx.client.zscore(fx.keys.queue(t.partition, t.queue), t.taskId)).toBe(String(now + 500));
    expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'attempt')).toBe('2');
    // another start of the same attempt is not the one that failed
    expect(await fx.store.fail({ ...a, nonce: 'nonce-2' }, failure, now)).toEqual({ kind: 'stale' });
    // once the retry has started, the old attempt's call is stale
    expect(await fx.store.start(t.partition, t.taskId, 2, testSlot, 'n2', now + 500)).toMatchObject({ attempt: 2 });
    expect(await fx.store.fail(a, failure, now + 600)).toEqual({ kind: 'stale' });
  });

  it('ends the task once, and answers the outcome it wrote', async () => {
    const t = newTask({ maxAttempts: 1 });
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    const a = { partition: t.partition, taskId: t.taskId, attempt: 1, nonce };
    const first = await fx.store.fail(a, failure, now);
    expect(first).toMatchObject({ kind: 'terminal', status: 'FAILED' });
    const entries = await fx.client.xlen(fx.keys.out(t.partition));
    expect(await fx.store.fail(a, failure, now + 1)).toEqual(first);
    expect(await fx.client.xlen(fx.keys.out(t.partition))).toBe(entries);
    expect(await fx.store.complete(a, Buffer.from('late'), now)).toEqual({ kind: 'ended', status: 'FAILED' });
  });

  it('returns a task unconsumed once, and answers the return it made', async () => {
    const t = newTask({ flowDeadline: Date.now() + 60_000 });
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    const a = { partition: t.partition, taskId: t.taskId, attempt: 1, nonce };
    const first = await fx.store.release(a);
    expect(first).toEqual({ kind: 'released', readyAt: now, flowDeadline: t.flowDeadline });
    expect(await fx.store.release(a)).toEqual(first);
    expect(await fx.store.release({ ...a, nonce: 'nonce-2' })).toEqual({ kind: 'stale' });
    // started again (the same attempt: a return consumes none), the old start's return is stale
    expect(await fx.store.start(t.partition, t.taskId, 1, testSlot, 'n-again', now)).toMatchObject({ attempt: 1 });
    expect(await fx.store.release(a)).toEqual({ kind: 'stale' });
  });

  it('never takes a fetch idempotency key for a stream attempt\'s nonce', async () => {
    const t = newTask();
    const now = Date.now();
    await fx.store.enqueue(t, now);
    const nonce = await run(t, now);
    await fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce }, Buffer.from('out'), now);
    expect(await fetchStore.complete(t.partition, t.taskId, 'fw', undefined, nonce, now)).toEqual({ kind: 'refused', verdict: 'terminal' });
  });
});

describe('a task enqueued before the spec was packed', () => {
  it('starts, heartbeats, retries, completes and is read like any other', async () => {
    const t = newTask({ methodTimeout: 10_000, heartbeatTimeout: 3000, flowDeadline: Date.now() + 600_000, maxAttempts: 2, initialInterval: 1 });
    const now = Date.now();
    await legacyEnqueue(t, now);
    expect(str(await fx.store.readTask(t.partition, t.taskId))).toMatchObject({ tenant: 'acme', flowId: t.flowId, maxAttempts: '2' });
    expect(await fx.store.readTenant(t.partition, t.taskId)).toBe('acme');

    const started = await fx.store.start(t.partition, t.taskId, 0, testSlot, 'n1', now);
    expect(started).toEqual({
      taskId: t.taskId, attempt: 1, nonce: 'n1', startedAt: now, input: t.input, tenant: 'acme', flowId: t.flowId,
      flowType: 'order', stepType: 'charge', stepExecutionId: t.stepExecutionId, enqueuedAt: now, methodTimeout: 10_000,
      heartbeatTimeout: 3000, flowDeadline: t.flowDeadline, deadlineAt: now + 3000,
    });
    expect(await fx.store.heartbeat({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' }, now + 1000))
      .toEqual({ kind: 'extended', deadlineAt: now + 4000 });
    expect(await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' },
      { message: 'again', type: 'Io', nonRetryable: false, retryAfterMs: 0 }, now + 1000))
      .toEqual({ kind: 'retry', readyAt: now + 1001, attempt: 2, flowDeadline: t.flowDeadline, sticky: '' });
    expect(await fx.store.start(t.partition, t.taskId, 2, testSlot, 'n2', now + 1001)).toMatchObject({ attempt: 2, flowId: t.flowId });
    expect(await fx.store.release({ partition: t.partition, taskId: t.taskId, attempt: 2, nonce: 'n2' })).toEqual({ kind: 'released', readyAt: now + 1001, flowDeadline: t.flowDeadline });
    expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBe(String(t.flowDeadline));
    await fx.store.start(t.partition, t.taskId, 2, testSlot, 'n3', now + 1002);

    const r = await fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 2, nonce: 'n3' }, Buffer.from('ok'), now + 2000);
    if (r.kind !== 'completed') throw new Error(r.kind);
    expect(str(await streamEntry(t.partition, r.outcomeId))).toMatchObject({
      taskId: t.taskId, tenant: 'acme', flowId: t.flowId, flowType: 'order', stepType: 'charge', seid: t.stepExecutionId,
      status: 'COMPLETED', attempt: '2', worker: 'w1', enqueuedAt: String(now),
    });
    expect(await fx.client.zscore(fx.keys.deadlines(t.partition), t.taskId)).toBeNull();
    expect(await fx.client.exists(fx.keys.flow(t.partition, t.tenant, t.flowId))).toBe(0);
    const sticky = fx.keys.sticky(t.partition, t.tenant, t.flowId);
    expect(await fx.client.get(sticky)).toBe('w1');
    // remembered for the store's sticky TTL (60 s in this fixture), not for ever
    const ttl = await fx.client.pttl(sticky);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('is claimed, listed as terminal, timed out and cancelled', async () => {
    const now = Date.now();
    const claimed = newTask();
    await legacyEnqueue(claimed, now);
    const lock = await fetchStore.lock(claimed.partition, [claimed.queue], 'fw', 10_000, 10, 0, now);
    expect(lock.tasks).toEqual([expect.objectContaining({ taskId: claimed.taskId, flowId: claimed.flowId, stepExecutionId: claimed.stepExecutionId, input: claimed.input })]);
    expect(await fetchStore.fail(claimed.partition, claimed.taskId, 'fw', 'bad', 'Data', 0, 0, now)).toMatchObject({ kind: 'ok', terminal: true });
    expect((await fetchStore.listTerminal(claimed.partition, 10)).tasks).toEqual([expect.objectContaining({
      taskId: claimed.taskId, tenant: 'acme', flowType: 'order', stepType: 'charge', flowId: claimed.flowId,
      stepExecutionId: claimed.stepExecutionId, attempt: 1, errMsg: 'bad',
    })]);
    expect(await fetchStore.abandonTerminal(claimed.partition, claimed.taskId, 'gone', now)).toMatchObject({ kind: 'abandoned' });
    expect(str(await fx.store.readDone(claimed.partition, claimed.taskId))).toMatchObject({ status: 'FAILED', flowId: claimed.flowId, errMsg: 'gone' });

    const late = newTask({ flowDeadline: now - 1 });
    await legacyEnqueue(late, now);
    const lease = fx.keys.lease(late.partition);
    await fx.client.set(lease, 'n1:1');
    expect(await fx.store.timeout(late.partition, late.taskId, now, 'n1:1')).toBe('timed-out');
    expect(str(await fx.store.readDone(late.partition, late.taskId))).toMatchObject({ status: 'TIMED_OUT', seid: late.stepExecutionId });

    const flow = newTask();
    await legacyEnqueue(flow, now);
    expect(await fx.store.cancelFlow(flow.partition, flow.tenant, flow.flowId, 'stop', now)).toEqual({ queued: [flow.taskId], queuedIn: [flow.queue], running: [] });
    expect(str(await fx.store.readDone(flow.partition, flow.taskId))).toMatchObject({ status: 'CANCELLED', stepType: 'charge' });
  });

  it('lists as terminal only a task still terminal when it is read, not one retried since the set was read, nor one gone', async () => {
    // The listing reads the terminal set, then each task: an operator's retry in between leaves the
    // set's entry read but the task queued again; the task is then no terminal task to show.
    const now = Date.now();
    const t = newTask();
    await legacyEnqueue(t, now);
    await fetchStore.lock(t.partition, [t.queue], 'fw', 10_000, 10, 0, now);
    await fetchStore.fail(t.partition, t.taskId, 'fw', 'bad', 'Data', 0, 0, now);
    expect(await fetchStore.retryTerminal(t.partition, t.taskId, 3, now)).toMatchObject({ kind: 'queued' });
    await fx.client.zadd(fx.keys.terminal(t.partition), now, t.taskId); // as the listing read the set before the retry
    await fx.client.zadd(fx.keys.terminal(t.partition), now, `${t.partition}-${'0'.repeat(24)}`); // a task since deleted
    expect(await fetchStore.listTerminal(t.partition, 10)).toEqual({ tasks: [], complete: true });
  });
});

describe('payload arguments', () => {
  it('sends valid UTF-8 payloads as strings and binary ones as Buffers, and both come back byte for byte', async () => {
    const text = Buffer.from('{"note":"héllo ✓ 😀","bom":"\ufeff","replacement":"\ufffd"}');
    const binary = Buffer.from([0xc3, 0x28, 0xff, 0x00, 0xe2, 0x82]); // invalid UTF-8: a decode/encode would change it
    expect(typeof payloadArg(text)).toBe('string');
    expect(Buffer.from(payloadArg(text) as string)).toEqual(text);
    expect(payloadArg(binary)).toBe(binary);
    expect(payloadArg(Buffer.alloc(0))).toBe('');
    for (const [input, output] of [[text, binary], [binary, text]] as const) {
      const t = newTask({ input });
      const now = Date.now();
      expect((await fx.store.enqueue(t, now)).result).toBe('created');
      const started = await fx.store.start(t.partition, t.taskId, 0, testSlot, 'nonce-1', now);
      expect('input' in started && [...started.input]).toEqual([...input]);
      const done = await fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' }, output, now);
      expect(done.kind).toBe('completed');
      const entry = await streamEntry(t.partition, (done as { outcomeId: string }).outcomeId);
      expect([...entry.output!]).toEqual([...output]);
    }
  });
});

describe('enqueueMany', () => {
  it('starts a task in the testSlot bound to it, unless its flow remembers another sticky worker', async () => {
    const now = Date.now();
    const [fresh, mine, other] = [newTask({ methodTimeout: 30_000 }), newTask(), newTask()];
    for (const [t, w] of [[mine!, 'w1'], [other!, 'w2']] as const) await fx.client.set(`${fx.keys.tag(t.partition)}sticky:acme:${t.flowId}`, w);
    const start = (nonce: string) => ({ slot: testSlot, nonce });
    const r = await fx.store.enqueueMany([fresh!, mine!, other!], now, [start('n1'), start('n2'), start('n3')]);
    expect(r.map((x) => [x.result, x.rememberedSticky, x.startedDeadlineAt])).toEqual([
      ['created', '', now + 30_000], ['created', 'w1', 9007199254740991], ['created', 'w2', undefined],
    ]);
    for (const [t, nonce] of [[fresh!, 'n1'], [mine!, 'n2']] as const) {
      const h = str(await fx.client.hgetallBuffer(fx.keys.task(t.partition, t.taskId)));
      expect(h).toMatchObject({ state: 'running', attempt: '1', worker: 'w1', nonce, run: `s1\x1en1\x1eb1\x1e${now}` });
      expect(await fx.client.zscore(fx.keys.inflight(t.partition), t.taskId)).not.toBeNull();
      expect(await fx.client.zscore(`${fx.keys.tag(t.partition)}q:${t.queue}`, t.taskId)).toBeNull();
    }
    expect(await fx.client.zscore(fx.keys.inflight(fresh!.partition), fresh!.taskId)).toBe(String(now + 30_000));
    // The other flow's Step waits in its queue for placement (its sticky worker first).
    expect(await fx.client.hget(fx.keys.task(other!.partition, other!.taskId), 'state')).toBe('queued');
    expect(await fx.client.zscore(`${fx.keys.tag(other!.partition)}q:${other!.queue}`, other!.taskId)).toBe(String(now));
    // A task started at enqueue completes like any other.
    const done = await fx.store.complete({ partition: fresh!.partition, taskId: fresh!.taskId, attempt: 1, nonce: 'n1' }, Buffer.from('ok'), now);
    expect(done.kind).toBe('completed');
  });

  it('lists the queue of a Step started at enqueue among the partition\'s queues only once a retry puts it there', async () => {
    const now = Date.now();
    const t = newTask();
    const queues = `${fx.keys.tag(t.partition)}queues`;
    const [r] = await fx.store.enqueueMany([t], now, [{ slot: testSlot, nonce: 'n1' }]);
    expect(r!.startedDeadlineAt).toBeDefined();
    // It holds no entry in its queue: the set of queues with entries does not name it.
    expect(await fx.client.sismember(queues, t.queue)).toBe(0);
    const failure = { message: 'boom', type: 'Error', nonRetryable: false, retryAfterMs: 0 };
    const failed = await fx.store.fail({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'n1' }, failure, now);
    expect(failed.kind).toBe('retry');
    expect(await fx.client.zscore(`${fx.keys.tag(t.partition)}q:${t.queue}`, t.taskId)).not.toBeNull();
    expect(await fx.client.sismember(queues, t.queue)).toBe(1);
  });

  it('reads bound and unbound tasks side by side in one call (an unbound task sends fewer values)', async () => {
    const now = Date.now();
    const tasks = [newTask(), newTask(), newTask(), newTask(), newTask()];
    const starts = [undefined, { slot: testSlot, nonce: 'b1' }, undefined, undefined, { slot: testSlot, nonce: 'b4' }];
    const r = await fx.store.enqueueMany(tasks, now, starts);
    expect(r.map((x) => [x.result, x.startedDeadlineAt !== undefined])).toEqual([
      ['created', false], ['created', true], ['created', false], ['created', false], ['created', true],
    ]);
    for (const [i, t] of tasks.entries()) {
      const h = str(await fx.client.hgetallBuffer(fx.keys.task(t.partition, t.taskId)));
      if (starts[i]) expect(h).toMatchObject({ state: 'running', nonce: starts[i]!.nonce, worker: 'w1', queue: t.queue });
      else expect(h).toMatchObject({ state: 'queued', queue: t.queue });
      expect(h.spec).toContain(t.flowId);
    }
  });

  it('answers a batch in request order: created, exists and ended side by side', async () => {
    const now = Date.now();
    const [a, b, c, d] = [newTask(), newTask(), newTask(), newTask()];
    expect((await fx.store.enqueue(b!, now)).result).toBe('created');
    expect((await fx.store.enqueue(c!, now)).result).toBe('created');
    await run(c!, now);
    const done = await fx.store.complete({ partition: c!.partition, taskId: c!.taskId, attempt: 1, nonce: 'nonce-1' }, Buffer.from('ok'), now);
    expect(done.kind).toBe('completed');
    const results = await fx.store.enqueueMany([a!, b!, c!, d!], now);
    expect(results.map((r) => r.result)).toEqual(['created', 'exists', 'ended', 'created']);
    for (const t of [a!, d!]) expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'state')).toBe('queued');
  });

  it('enqueues a batch across partitions in one script call, each task as a single enqueue would', async () => {
    const now = Date.now();
    const batch = Array.from({ length: 12 }, (_, i) => newTask({ input: Buffer.from(`in ${i}`), flowDeadline: i === 3 ? now + 60_000 : 0 }));
    expect(new Set(batch.map((t) => t.partition)).size).toBeGreaterThan(1);
    await fx.client.set(`${fx.keys.tag(batch[5]!.partition)}sticky:acme:${batch[5]!.flowId}`, 'w-remembered');
    await fx.store.enqueueMany([newTask(), newTask()], now); // loads the script: no NOSCRIPT round below
    const calls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await fx.client.info('commandstats'))?.[1] ?? 0);
    const before = await calls();
    // The same task twice in one batch: the second sees the first.
    const results = await fx.store.enqueueMany([...batch, batch[0]!], now);
    expect(await calls()).toBe(before + 1);
    expect(results.map((r) => r.result)).toEqual([...batch.map(() => 'created'), 'exists']);
    expect(results[5]!.rememberedSticky).toBe('w-remembered');
    expect(results.filter((r) => r.rememberedSticky).length).toBe(1);
    for (const [i, t] of batch.entries()) {
      const tag = fx.keys.tag(t.partition);
      expect(str(await fx.client.hgetallBuffer(fx.keys.task(t.partition, t.taskId)))).toMatchObject({ state: 'queued', attempt: '1', input: [...Buffer.from(`in ${i}`)] });
      expect(await fx.client.zscore(`${tag}q:${t.queue}`, t.taskId)).toBe(String(now));
      expect(await fx.client.sismember(`${tag}queues`, t.queue)).toBe(1);
      expect(await fx.client.sismember(`${tag}flow:acme:${t.flowId}`, t.taskId)).toBe(1);
      expect(await fx.client.zscore(`${tag}deadlines`, t.taskId)).toBe(i === 3 ? String(now + 60_000) : null);
    }
    // And they run like any other task.
    const started = await fx.store.start(batch[7]!.partition, batch[7]!.taskId, 0, testSlot, 'nonce-1', now);
    expect('input' in started && started.input.toString()).toBe('in 7');
  });

  it('rejects the batch when Redis refuses a command, instead of reporting it as enqueued', async () => {
    const t = newTask();
    await fx.client.set(fx.keys.task(t.partition, t.taskId), 'not a hash'); // EXISTS sees it; force a WRONGTYPE later
    const other = newTask();
    await fx.client.set(`${fx.keys.tag(other.partition)}q:${other.queue}`, 'not a zset');
    await expect(fx.store.enqueueMany([t, other], Date.now())).rejects.toThrow(/WRONGTYPE/);
  });
});
