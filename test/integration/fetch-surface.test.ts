/**
 * The fetch-and-lock surface over real gRPC and a real redis-server (DESIGN
 * §6, §7): claims across partitions, the four verdicts, bounds, the long poll
 * (including the forced lost-wakeup interleaving), lock expiry as part of the
 * claim predicate, the fetch budget and terminal tasks, and a crash between
 * the outcome and the delete absorbed by the idempotency key.
 */
import { Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { fetchClients, failureOf, sleep, step, topic, type ExternalClient, type OperatorClient } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { taskBuilder } from '../helpers/store';
import { waitFor } from '../helpers/wait';
import { HINT_TTL_MS } from '../../src/gateway/fetch-hints';
import { partitionOf as partitionOfFlow } from '../../src/store/keys';
import { toNewTask } from '../../src/api/step-spec';

const redis = useEmbeddedRedis();
let t: TestNode;
let external: ExternalClient;
let operator: OperatorClient;
const open: RawSlot[] = [];

async function boot(overrides: Record<string, unknown> = {}): Promise<void> {
  t = await startTestNode(redis.url, uniquePrefix('fetch'), overrides);
  ({ external, operator } = fetchClients(t));
}

afterEach(async () => {
  for (const s of open.splice(0)) s.reset();
  await t?.close();
});

const fetch = (over: Partial<pb.IFetchAndLockRequest> = {}) =>
  external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, ...over });

async function enqueued(over: Partial<pb.IStepSpec> = {}): Promise<string> {
  return (await t.matching.enqueueStep({ step: step(over) })).task_id;
}

async function stateOf(taskId: string): Promise<pb.TaskState> {
  return (await t.matching.getTask({ task_id: taskId })).task!.state ?? pb.TaskState.TASK_STATE_UNSPECIFIED;
}

/** Calls of a command Redis has run, all clients together. */
async function calls(command: string): Promise<number> {
  const stats = String(await redis.command('INFO', 'commandstats'));
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

async function outcomesOf(group: string, taskId?: string): Promise<pb.IOutcome[]> {
  const r = await t.matching.consumeOutcomes({ group, consumer: 'c', max_count: 100, wait_ms: 300 });
  return (r.outcomes ?? []).filter((o) => !taskId || o.task_id === taskId);
}

describe('claims', () => {
  beforeEach(() => boot());

  it('claims tasks of a topic across partitions, locks them, and never hands a locked task out twice', async () => {
    const ids = await Promise.all(['f1', 'f2', 'f3', 'f4', 'f5'].map((f) => enqueued({ flow_id: f })));
    expect(new Set(ids.map((id) => id.split('-')[0])).size).toBeGreaterThan(1);
    await enqueued({ flow_id: 'other', step_type: 'ship' });
    const before = Date.now();
    const r = await fetch({ max_tasks: 10, lock_duration_ms: 5000 });
    expect(r.tasks.map((x) => x.task_id).sort()).toEqual([...ids].sort());
    for (const x of r.tasks) {
      expect(x).toMatchObject({ topic: { tenant: 'acme', flow_type: 'order', step_type: 'charge' }, attempt: 1, retries: 0 });
      expect(Buffer.from(x.input!).toString()).toBe('in');
      expect(x.lock_until_ms).toBeGreaterThanOrEqual(before + 5000);
      expect(await stateOf(x.task_id!)).toBe(pb.TaskState.LOCKED);
    }
    expect((await fetch({ worker_id: 'B', max_tasks: 10 })).tasks).toEqual([]);
  });

  it('a fetch woken by an enqueue peeks only the partition the task landed in, not every partition', async () => {
    // Guards the claim's hints (src/gateway/fetch-hints.ts): every ring made each waiting fetch peek every partition.
    expect(t.config.cluster.partitions).toBe(8);
    expect((await fetch()).tasks).toEqual([]); // a claim that saw every partition's queue empty
    await sleep(200); // the node's own start-up reads are done
    const before = await calls('zrange');
    const waiting = fetch({ wait_ms: 3000 });
    await sleep(100);
    const id = await enqueued({ flow_id: 'hinted' });
    expect((await waiting).tasks.map((x) => x.task_id)).toEqual([id]);
    // Its first claim peeks nothing (all known empty); the ring's claim, the one partition. Before: 8 + 8.
    expect((await calls('zrange')) - before).toBeLessThanOrEqual(2);
  });

  it('a waiting fetch finds a task put in its queue without a ring within the hint\'s life, not at the end of its wait', async () => {
    // Guards the bound on what a hint hides: a queue changed without ringing its topic (a path that
    // forgets to, a node of another version) is looked at again once the hint ends.
    expect((await fetch()).tasks).toEqual([]); // every partition's queue known empty
    const started = Date.now();
    const waiting = fetch({ wait_ms: 10_000 });
    await sleep(50);
    const [task] = [taskBuilder()({ flowId: 'silent' })];
    await t.node.store.enqueue(task!, Date.now()); // the store alone: no ring
    const r = await waiting;
    expect(r.tasks.map((x) => x.task_id)).toEqual([task!.taskId]);
    expect(Date.now() - started).toBeLessThan(HINT_TTL_MS + 1000);
  });

  it('of many fetches woken by one enqueue, one calls the claim script: the others find nothing due left', async () => {
    // Guards the claims in turn (external-tasks.ts claimInTurn): each woken fetch peeked the partition and
    // called the claim script, and all but the first found the task taken.
    expect((await fetch()).tasks).toEqual([]);
    // Count the claim's calls to Redis as they go through (each still runs against the real Redis).
    const store = t.node.externalTasks!.store;
    const lock = store.lock.bind(store);
    const peek = store.firstScore.bind(store);
    let [locks, peeks] = [0, 0];
    store.lock = (...a: Parameters<typeof lock>) => (locks++, lock(...a));
    store.firstScore = (...a: Parameters<typeof peek>) => (peeks++, peek(...a));
    const waiting = Array.from({ length: 6 }, (_, i) => fetch({ worker_id: `W${i}`, wait_ms: 1500 }));
    await sleep(100);
    [locks, peeks] = [0, 0];
    const id = await enqueued({ flow_id: 'herd' });
    expect((await Promise.race(waiting)).tasks.map((x) => x.task_id)).toEqual([id]);
    await sleep(150); // the other five have claimed again by now, and wait on
    // One claim script and one peek, where each of the six woken fetches used to call both.
    expect([locks, peeks]).toEqual([1, 1]);
    store.lock = lock;
    store.firstScore = peek;
    const results = await Promise.all(waiting);
    expect(results.flatMap((r) => r.tasks.map((x) => x.task_id))).toEqual([id]);
  });

  it('completes with a result, or without one (fire-and-forget: the outcome carries the input)', async () => {
    const a = await enqueued({ flow_id: 'fa', input: Buffer.from('A-in') });
    const b = await enqueued({ flow_id: 'fb', input: Buffer.from('B-in') });
    const c = await enqueued({ flow_id: 'fc', input: Buffer.from('C-in') });
    await fetch({ max_tasks: 3 });
    await external.complete({ task_id: a, worker_id: 'A', result: Buffer.from('A-out'), has_result: true });
    await external.complete({ task_id: b, worker_id: 'A' });
    // An empty result is a result: the output is empty, not the input.
    await external.complete({ task_id: c, worker_id: 'A', result: Buffer.alloc(0), has_result: true });
    const out = await outcomesOf('engine');
    const by = new Map(out.map((o) => [o.task_id ?? '', o]));
    expect(by.get(a)).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, app_worker_id: 'A', attempt: 1, idempotency_key: a });
    expect(Buffer.from(by.get(a)!.output!).toString()).toBe('A-out');
    expect(Buffer.from(by.get(b)!.output!).toString()).toBe('B-in');
    expect(Buffer.from(by.get(c)!.output ?? []).toString()).toBe('');
    expect(await stateOf(a)).toBe(pb.TaskState.DONE);
  });

  it('extends a lock, and unlocks a task so that another worker can fetch it at once', async () => {
    const id = await enqueued();
    const got = (await fetch({ lock_duration_ms: 1000 })).tasks[0]!;
    const ext = await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 60_000 });
    expect(ext.lock_until_ms).toBeGreaterThan(Number(got.lock_until_ms) + 50_000);
    await external.unlock({ task_id: id, worker_id: 'A' });
    expect(await stateOf(id)).toBe(pb.TaskState.QUEUED);
    expect((await fetch({ worker_id: 'B' })).tasks.map((x) => x.task_id)).toEqual([id]);
  });
});

describe('the four verdicts (a refused mutation is never success)', () => {
  beforeEach(() => boot());

  const mutations = (id: string, worker: string) => [
    external.complete({ task_id: id, worker_id: worker, result: Buffer.from('x'), has_result: true }),
    external.fail({ task_id: id, worker_id: worker, failure: { message: 'm' }, retries: 3 }),
    external.extendLock({ task_id: id, worker_id: worker, lock_duration_ms: 1000 }),
    external.unlock({ task_id: id, worker_id: worker }),
  ];

  async function expectVerdict(id: string, worker: string, status: Status, code: string): Promise<void> {
    for (const call of mutations(id, worker)) {
      const err = await failureOf(call);
      expect({ status: err.code, code: err.details.split(':')[0] }).toEqual({ status, code });
      expect(err.details).toContain(id);
    }
  }

  it('NOT_FOUND: no such task', async () => {
    await expectVerdict('3-0123456789abcdef01234567', 'A', Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
  });

  it('LOCKED_BY_OTHER: another worker holds the lock; nothing changes', async () => {
    const id = await enqueued();
    const lockUntil = (await fetch({ lock_duration_ms: 10_000 })).tasks[0]!.lock_until_ms;
    await expectVerdict(id, 'B', Status.ABORTED, 'ZD_LOCKED_BY_OTHER');
    const task = (await t.matching.getTask({ task_id: id })).task!;
    expect(task).toMatchObject({ state: pb.TaskState.LOCKED, app_worker_id: 'A' });
    expect((await outcomesOf('g'))).toEqual([]);
    expect((await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 10_000 })).lock_until_ms).toBeGreaterThanOrEqual(Number(lockUntil));
  });

  it('LOCK_EXPIRED: the worker held the lock, and it lapsed', async () => {
    const id = await enqueued();
    await fetch({ lock_duration_ms: 150 });
    await sleep(250);
    await expectVerdict(id, 'A', Status.OUT_OF_RANGE, 'ZD_LOCK_EXPIRED');
    expect(await outcomesOf('g')).toEqual([]);
  });

  it('LOCK_EXPIRED, not NOT_FOUND, once the task waits unlocked: given up by Unlock, or by a Fail with retries', async () => {
    const unlocked = await enqueued();
    const retried = await enqueued({ flow_id: 'f2' });
    expect((await fetch({ max_tasks: 2 })).tasks).toHaveLength(2);
    await external.unlock({ task_id: unlocked, worker_id: 'A' });
    await expectVerdict(unlocked, 'A', Status.OUT_OF_RANGE, 'ZD_LOCK_EXPIRED');
    expect((await external.fail({ task_id: retried, worker_id: 'A', failure: { message: 'm' }, retries: 2, retry_timeout_ms: 60_000 })).terminal).toBe(false);
    await expectVerdict(retried, 'A', Status.OUT_OF_RANGE, 'ZD_LOCK_EXPIRED');
    for (const id of [unlocked, retried]) {
      // Given back: no worker is named on it any more.
      const task = (await t.matching.getTask({ task_id: id })).task!;
      expect({ state: task.state, worker: task.app_worker_id || '' }).toEqual({ state: pb.TaskState.QUEUED, worker: '' });
    }
    expect(await outcomesOf('g')).toEqual([]);
  });

  it('TERMINAL: the task is terminal, or has ended', async () => {
    const id = await enqueued();
    await fetch();
    expect((await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'no more' }, retries: 0 })).terminal).toBe(true);
    await expectVerdict(id, 'A', Status.FAILED_PRECONDITION, 'ZD_TERMINAL');
    const done = await enqueued({ flow_id: 'f2' });
    await fetch();
    await external.complete({ task_id: done, worker_id: 'A' });
    await expectVerdict(done, 'A', Status.FAILED_PRECONDITION, 'ZD_TERMINAL');
  });

  it('a malformed task id is bad input, not a verdict', async () => {
    const err = await failureOf(external.complete({ task_id: 'nope', worker_id: 'A' }));
    expect(err.code).toBe(Status.INVALID_ARGUMENT);
    expect(err.details).toContain('task_id');
  });
});

describe('bounds are rejections, never clamps', () => {
  beforeEach(() => boot({ 'fetch.wait': '300ms', 'fetch.maxTasks': 2 }));

  it.each<[string, Partial<pb.IFetchAndLockRequest>, string]>([
    ['max_tasks', { max_tasks: 101 }, 'max_tasks: 101 exceeds the ceiling of 100 (fetch.maxMaxTasks)'],
    ['lock_duration_ms', { lock_duration_ms: 600_001 }, 'lock_duration_ms: 600001 ms exceeds the ceiling of 600000 ms (fetch.maxLockDuration)'],
    ['wait_ms', { wait_ms: 60_001 }, 'wait_ms: 60001 ms exceeds the ceiling of 60000 ms (fetch.maxWait)'],
    ['lock_duration_ms past 2^53 (a uint64)', { lock_duration_ms: 2 ** 60 }, 'lock_duration_ms: 1152921504606847000 ms exceeds the ceiling of 600000 ms (fetch.maxLockDuration)'],
    ['worker_id', { worker_id: '' }, 'worker_id: is required'],
    ['topics', { topics: [] }, 'topics: must name at least one topic'],
    ['topics[0].step_type', { topics: [topic({ step_type: 'a:b' })] }, 'topics[0].step_type'],
    ['a topic\'s queue name', { topics: [topic({ tenant: 'a'.repeat(100), flow_type: 'b'.repeat(100), step_type: 'c'.repeat(100) })] }, 'topics[0].step_type: makes the queue name'],
  ])('%s over its bound → INVALID_ARGUMENT naming the field and the ceiling; nothing claimed', async (_f, over, message) => {
    const id = await enqueued();
    const err = await failureOf(fetch(over));
    expect(err.code).toBe(Status.INVALID_ARGUMENT);
    expect(err.details).toContain(message);
    expect(await stateOf(id)).toBe(pb.TaskState.QUEUED);
  });

  it('ExtendLock over the ceiling is rejected too, and the lock is unchanged', async () => {
    const id = await enqueued();
    const before = (await fetch({ lock_duration_ms: 5000 })).tasks[0]!.lock_until_ms;
    const err = await failureOf(external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 600_001 }));
    expect(err.code).toBe(Status.INVALID_ARGUMENT);
    expect(err.details).toContain('lock_duration_ms: 600001 ms exceeds the ceiling of 600000 ms');
    const after = (await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 1 })).lock_until_ms;
    expect(after).toBeLessThan(Number(before));
  });

  it('omitted bounds take the defaults, not the ceilings', async () => {
    await Promise.all(['f1', 'f2', 'f3'].map((f) => enqueued({ flow_id: f })));
    const before = Date.now();
    const r = await external.fetchAndLock({ worker_id: 'A', topics: [topic()] });
    expect(r.tasks).toHaveLength(2); // fetch.maxTasks, not fetch.maxMaxTasks (100)
    for (const x of r.tasks) {
      // fetch.lockDuration (30s), not fetch.maxLockDuration (10m)
      expect(x.lock_until_ms).toBeGreaterThanOrEqual(before + 30_000);
      expect(x.lock_until_ms).toBeLessThan(Date.now() + 31_000);
    }
    await external.fetchAndLock({ worker_id: 'A', topics: [topic()] }); // takes the third
    const started = Date.now();
    expect((await external.fetchAndLock({ worker_id: 'A', topics: [topic()] })).tasks).toEqual([]);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(280); // fetch.wait (300ms), not fetch.maxWait (60s)
    expect(waited).toBeLessThan(2000);
  });
});

describe('long poll', () => {
  beforeEach(() => boot());

  it('cannot miss a wake-up: a task parked between the first claim query and the wait is fetched at once', async () => {
    const surface = t.node.externalTasks!;
    let parked = '';
    // Forced interleaving: the first claim found nothing; before the fetch waits, the task arrives.
    surface.hooks.beforeWait = async (round) => {
      if (round === 0) parked = await enqueued();
    };
    const started = Date.now();
    const r = await fetch({ wait_ms: 20_000 });
    const took = Date.now() - started;
    surface.hooks.beforeWait = undefined;
    expect(r.tasks.map((x) => x.task_id)).toEqual([parked]);
    // The ring was caught by the subscription made before the first query, not by a timer.
    expect(took).toBeLessThan(2000);
  });

  it.each(['Unlock', 'Fail with retry_timeout_ms 0'])('a waiting fetch is woken at once by another worker\'s %s', async (how) => {
    const id = await enqueued();
    await fetch({ lock_duration_ms: 60_000 }); // A holds it for a minute
    const waiting = fetch({ worker_id: 'B', wait_ms: 5000 });
    await sleep(200); // B has looked, found nothing, and waits
    const releasedAt = Date.now();
    if (how === 'Unlock') await external.unlock({ task_id: id, worker_id: 'A' });
    else await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'again' }, retries: 3, retry_timeout_ms: 0 });
    const r = await waiting;
    expect(r.tasks.map((x) => x.task_id)).toEqual([id]);
    expect(Date.now() - releasedAt).toBeLessThan(1000); // the ring, not the 5 s wait
  });

  it('a waiting fetch is woken by an enqueue on its topic, and only the claim decides', async () => {
    const pending = fetch({ wait_ms: 10_000 });
    await sleep(100);
    await enqueued({ step_type: 'ship', step_execution_id: 'other' }); // another topic: no wake-up that matters
    const id = await enqueued();
    const r = await pending;
    expect(r.tasks.map((x) => x.task_id)).toEqual([id]);
  });

  it.each(['Unlock', 'Fail with retry_timeout_ms 0', 'an operator\'s retry of the terminal task'])(
    'a waiting fetch hears of %s by its ring, not by looking again when its hints run out', async (how) => {
      // Hints that outlive the wait: a fetch that skipped the partition looks at it again only when a ring
      // says it changed. The ring's claim still runs against the real Redis.
      const hints = t.node.fetchBell.hints;
      const quiet = hints.quiet.bind(hints);
      const spy = jest.spyOn(hints, 'quiet').mockImplementation((q, p, mark, now, dueAt) => quiet(q, p, mark, now + 60_000, dueAt));
      try {
        const id = await enqueued();
        await fetch({ lock_duration_ms: 60_000 }); // A holds it for a minute
        if (how.startsWith('an operator')) {
          await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'gave up' }, retries: 0 });
        }
        const waiting = fetch({ worker_id: 'B', wait_ms: 3000 });
        await sleep(200); // B has looked, found nothing due, and waits
        if (how === 'Unlock') await external.unlock({ task_id: id, worker_id: 'A' });
        else if (how.startsWith('Fail')) await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'again' }, retries: 3, retry_timeout_ms: 0 });
        else await operator.retryTerminalTask({ task_id: id, retries: 2 });
        expect((await waiting).tasks.map((x) => x.task_id)).toEqual([id]);
      } finally {
        spy.mockRestore();
      }
    },
  );

  it('is bounded: an empty topic answers an empty list after the wait', async () => {
    const started = Date.now();
    expect((await fetch({ wait_ms: 400 })).tasks).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
  });

  it('answers at the end of its wait, not later', async () => {
    const started = Date.now();
    expect((await fetch({ wait_ms: 2000 })).tasks).toEqual([]);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1980);
    expect(took).toBeLessThan(3000);
  });

  it('a fetch whose caller has gone claims nothing', async () => {
    const surface = t.node.externalTasks!;
    const ac = new AbortController();
    let id = '';
    surface.hooks.beforeWait = async (round) => {
      if (round !== 0) return;
      ac.abort();
      await sleep(150); // the cancel reaches the server
      id = await enqueued();
    };
    await expect(external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 5000 }, { signal: ac.signal })).rejects.toThrow();
    await sleep(200);
    surface.hooks.beforeWait = undefined;
    expect(await stateOf(id)).toBe(pb.TaskState.QUEUED);
  });

  it('a fetch whose caller left while its claim waited its turn behind another claims nothing', async () => {
    await enqueued();
    await enqueued({ flow_id: 'f2' });
    const store = t.node.externalTasks!.store;
    const lock = store.lock.bind(store);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const claimedFor: string[] = [];
    const spy = jest.spyOn(store, 'lock').mockImplementation(async (...args: Parameters<typeof store.lock>) => {
      claimedFor.push(args[2]);
      if (args[2] === 'A') await held; // A's claim is slow to answer: B's, on the same topic, waits its turn
      return lock(...args);
    });
    try {
      const first = fetch({ max_tasks: 1 });
      await waitFor(() => claimedFor.length > 0);
      const ac = new AbortController();
      const second = external.fetchAndLock({ worker_id: 'B', topics: [topic()], wait_ms: 5000 }, { signal: ac.signal });
      await sleep(100);
      ac.abort();
      await expect(second).rejects.toThrow();
      await sleep(150); // the cancel reaches the server
      release();
      expect((await first).tasks).toHaveLength(1);
      await sleep(200);
    } finally {
      spy.mockRestore();
    }
    expect(claimedFor).toEqual(['A']);
  });

  it('tasks claimed for a caller that left are unlocked at once', async () => {
    const surface = t.node.externalTasks!;
    const id = await enqueued();
    const ac = new AbortController();
    let hookDone!: () => void;
    const returned = new Promise<void>((r) => (hookDone = r));
    surface.hooks.afterClaim = async () => {
      ac.abort();
      await sleep(150); // the cancel reaches the server while the claimed tasks are on their way back
      hookDone();
    };
    await expect(external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 5000, lock_duration_ms: 60_000 }, { signal: ac.signal })).rejects.toThrow();
    await returned;
    surface.hooks.afterClaim = undefined;
    await sleep(50);
    expect(await stateOf(id)).toBe(pb.TaskState.QUEUED); // not after the 60s lock
    expect((await fetch({ worker_id: 'B' })).tasks.map((x) => x.task_id)).toEqual([id]);
  });
});

describe('lock expiry is part of the claim predicate', () => {
  it('a dead fetch worker costs exactly one lock duration', async () => {
    await boot();
    const id = await enqueued();
    const claimedAt = Date.now();
    await fetch({ lock_duration_ms: 1000 });
    // worker A dies; B long-polls at once
    const r = await fetch({ worker_id: 'B', wait_ms: 5000, lock_duration_ms: 1000 });
    const after = Date.now() - claimedAt;
    expect(r.tasks.map((x) => x.task_id)).toEqual([id]);
    expect(after).toBeGreaterThanOrEqual(990);
    expect(after).toBeLessThan(1400);
    expect(r.tasks[0]!.attempt).toBe(1);
  });

  it('past fetch.maxLockExpiries the task turns terminal instead of looping as a poison task', async () => {
    await boot({ 'fetch.maxLockExpiries': 2 });
    const id = await enqueued();
    expect((await fetch({ lock_duration_ms: 100 })).tasks).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      await sleep(150);
      expect((await fetch({ lock_duration_ms: 100 })).tasks.map((x) => x.task_id)).toEqual([id]); // expiry 1, 2
    }
    await sleep(150);
    expect((await fetch({ lock_duration_ms: 100 })).tasks).toEqual([]); // expiry 3 > 2
    expect(await stateOf(id)).toBe(pb.TaskState.TERMINAL);
    const listed = (await operator.listTerminalTasks({ tenant: 'acme' })).tasks;
    expect(listed.map((x) => x.task_id)).toEqual([id]);
    expect(listed[0]!.reason).toContain('fetch.maxLockExpiries = 2');
    // no longer backlog
    const q = (await t.matching.describeQueues({ tenant: 'acme' })).queues;
    expect(q.reduce((n, x) => n + Number(x.ready) + Number(x.delayed), 0)).toBe(0);
  });

  it('a locked task is not offered to a stream slot; once its lock expires a slot may take it (one expiry)', async () => {
    await boot();
    const id = await enqueued();
    const lockedAt = Date.now();
    await fetch({ lock_duration_ms: 600 });
    const s = openSlot(t.worker, registerFrame());
    open.push(s);
    await s.nextOf('registered');
    const task = (await s.nextOf('step_task', 5000)).step_task!;
    expect(Date.now() - lockedAt).toBeGreaterThanOrEqual(590);
    expect(task).toMatchObject({ task_id: id, attempt: 1 });
    expect(await stateOf(id)).toBe(pb.TaskState.RUNNING);
    // the fetch worker's late completion is refused, and so is every other call it makes on the task
    const err = await failureOf(external.complete({ task_id: id, worker_id: 'A' }));
    expect(err.details).toMatch(/^ZD_LOCKED_BY_OTHER/);
    for (const call of [
      external.fail({ task_id: id, worker_id: 'A', failure: { message: 'm' }, retries: 3 }),
      external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 1000 }),
      external.unlock({ task_id: id, worker_id: 'A' }),
    ]) {
      const late = await failureOf(call);
      expect([Status[late.code], late.details.split(':')[0]]).toEqual(['ABORTED', 'ZD_LOCKED_BY_OTHER']);
    }
    expect(await stateOf(id)).toBe(pb.TaskState.RUNNING);
  });
});

describe('a slot start from an expired lock', () => {
  it('counts toward fetch.maxLockExpiries: past it the task turns terminal and no slot gets it', async () => {
    await boot({ 'fetch.maxLockExpiries': 1 });
    const id = await enqueued();
    const partition = Number(id.split('-')[0]);
    expect((await fetch({ lock_duration_ms: 100 })).tasks).toHaveLength(1);
    await sleep(150);
    expect((await fetch({ lock_duration_ms: 100 })).tasks.map((x) => x.task_id)).toEqual([id]); // expiry 1 of 1
    expect(await redis.command('HGET', t.node.keys.task(partition, id), 'lockExpiries')).toBe('1');
    await sleep(150);
    // A slot's start of the lapsed lock is expiry 2: past the bound, terminal, not started.
    const s = openSlot(t.worker, registerFrame());
    open.push(s);
    await s.nextOf('registered');
    await expect(s.nextOf('step_task', 1000)).rejects.toThrow(/no frame/);
    expect(await stateOf(id)).toBe(pb.TaskState.TERMINAL);
    expect((await operator.listTerminalTasks({ tenant: 'acme' })).tasks.map((x) => x.task_id)).toEqual([id]);
  });
});

describe('cancelling a flow ends its fetch tasks too', () => {
  it('a locked task: CANCELLED once, and its worker\'s late Complete is refused as TERMINAL', async () => {
    await boot();
    const id = await enqueued();
    await fetch({ lock_duration_ms: 60_000 });
    expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1' })).toMatchObject({ cancelled_queued: 1 });
    const err = await failureOf(external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('late'), has_result: true }));
    expect(err.details).toMatch(/^ZD_TERMINAL/);
    const out = await outcomesOf('engine', id);
    expect(out.map((o) => o.status)).toEqual([pb.OutcomeStatus.CANCELLED]);
  });

  it('a terminal task: CANCELLED once, and no longer listed', async () => {
    await boot();
    const id = await enqueued();
    await fetch();
    await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'no' }, retries: 0 });
    expect(await stateOf(id)).toBe(pb.TaskState.TERMINAL);
    expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1' })).toMatchObject({ cancelled_queued: 1 });
    expect((await outcomesOf('engine', id)).map((o) => o.status)).toEqual([pb.OutcomeStatus.CANCELLED]);
    expect((await operator.listTerminalTasks({ tenant: 'acme' })).tasks).toEqual([]);
  });
});

describe('the fetch budget (Fail) never meets the step budget', () => {
  it('Fail with retries: fetchable again after retryTimeout, with the same step attempt', async () => {
    await boot();
    const id = await enqueued({ retry_policy: { max_attempts: 1 } });
    await fetch();
    const failedAt = Date.now();
    expect((await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'flaky', type: 'Io' }, retries: 2, retry_timeout_ms: 500 })).terminal).toBe(false);
    const queued = (await t.matching.getTask({ task_id: id })).task!;
    expect(queued).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
    expect(queued.last_error).toMatchObject({ message: 'flaky', type: 'Io' });
    expect((await fetch({ worker_id: 'B' })).tasks).toEqual([]); // not before retryTimeout
    const r = await fetch({ worker_id: 'B', wait_ms: 3000 }); // woken when the retry is due
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(490);
    expect(Date.now() - failedAt).toBeLessThan(1200);
    expect(r.tasks[0]).toMatchObject({ task_id: id, attempt: 1, retries: 2 });
  });

  it('lists a tenant\'s terminal tasks however many older ones other tenants have', async () => {
    await boot({ 'cluster.partitions': 1 });
    const terminal = async (tenant: string, flow: string) => {
      const id = await enqueued({ tenant, flow_id: flow });
      const got = await fetch({ topics: [topic({ tenant })], max_tasks: 1 });
      expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
      await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'no' }, retries: 0 });
      return id;
    };
    for (let i = 0; i < 6; i++) await terminal('other', `o${i}`);
    const mine = await terminal('acme', 'a1');
    expect((await operator.listTerminalTasks({ tenant: 'acme', limit: 1 })).tasks.map((x) => x.task_id)).toEqual([mine]);
    expect((await operator.listTerminalTasks({ tenant: 'other', limit: 2 })).tasks).toHaveLength(2);
  });

  it('lists at most limit terminal tasks over every partition, the oldest first', async () => {
    await boot();
    const partitions = t.config.cluster.partitions;
    const seen = new Set<number>();
    const flows: string[] = [];
    for (let i = 0; flows.length < 3; i++) {
      const p = partitionOfFlow('acme', `t${i}`, partitions);
      if (!seen.has(p)) { seen.add(p); flows.push(`t${i}`); }
    }
    const ids: string[] = [];
    for (const flow of flows) {
      const id = await enqueued({ flow_id: flow });
      expect((await fetch({ max_tasks: 1 })).tasks.map((x) => x.task_id)).toEqual([id]);
      await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'no' }, retries: 0 });
      ids.push(id);
      await sleep(5); // each turns terminal at its own millisecond
    }
    // Each partition holds one: the limit bounds the whole listing, not each partition's share.
    expect((await operator.listTerminalTasks({ tenant: 'acme', limit: 2 })).tasks.map((x) => x.task_id)).toEqual(ids.slice(0, 2));
  });

  it('retries 0 → terminal, listed, no backlog; operators retry it, then abandon it with a FAILED outcome', async () => {
    await boot();
    const id = await enqueued();
    await fetch();
    expect((await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'gave up', type: 'Bad' }, retries: 0 })).terminal).toBe(true);
    const listed = (await operator.listTerminalTasks({ tenant: 'acme', flow_type: 'order' })).tasks;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ task_id: id, reason: 'fetch retries exhausted', attempt: 1, last_error: { message: 'gave up', type: 'Bad' } });
    expect((await operator.listTerminalTasks({ tenant: 'other' })).tasks).toEqual([]);
    expect((await fetch({ worker_id: 'B' })).tasks).toEqual([]);

    const terminalSet = t.node.keys.terminal(Number(id.split('-')[0]));
    await operator.retryTerminalTask({ task_id: id, retries: 3 });
    expect((await operator.listTerminalTasks({ tenant: 'acme' })).tasks).toEqual([]);
    expect(await redis.command('ZSCORE', terminalSet, id)).toBeNull();
    const again = (await fetch({ worker_id: 'B' })).tasks[0]!;
    expect(again).toMatchObject({ task_id: id, attempt: 1, retries: 3 });
    await external.fail({ task_id: id, worker_id: 'B', failure: { message: 'still bad' }, retries: 0 });

    const err = await failureOf(operator.retryTerminalTask({ task_id: (await enqueued({ flow_id: 'x' })), retries: 1 }));
    expect(err.details).toMatch(/^ZD_NOT_TERMINAL/);

    const abandoned = await operator.abandonTerminalTask({ task_id: id, reason: 'bad data, see ticket 42' });
    expect(abandoned.outcome_id).toMatch(/^\d+-/);
    const out = await outcomesOf('engine', id);
    expect(out).toHaveLength(1);
    // The id answered is the one the engine reads the outcome under (it acks by it).
    expect(out[0]!.outcome_id).toBe(abandoned.outcome_id);
    expect(out[0]).toMatchObject({ status: pb.OutcomeStatus.FAILED, attempt: 1, error: { message: 'bad data, see ticket 42', type: 'abandoned' } });
    expect(await stateOf(id)).toBe(pb.TaskState.DONE);
    // Resolved, it leaves the partition's terminal set: left there, dead entries would fill a listing's scan.
    expect(await redis.command('ZSCORE', terminalSet, id)).toBeNull();
  });

  it('a flow deadline still fires while a fetch worker retries (TIMED_OUT), and while it holds a lock', async () => {
    await boot();
    const retrying = await enqueued({ flow_deadline_ms: Date.now() + 700 });
    const locked = await enqueued({ flow_id: 'f2', flow_deadline_ms: Date.now() + 700 });
    await fetch({ max_tasks: 2, lock_duration_ms: 60_000 });
    await external.fail({ task_id: retrying, worker_id: 'A', failure: { message: 'later' }, retries: 5, retry_timeout_ms: 60_000 });
    for (const id of [retrying, locked]) {
      const o = (await t.matching.waitOutcome({ task_id: id, wait_ms: 5000 })).outcome!;
      expect(o).toMatchObject({ status: pb.OutcomeStatus.TIMED_OUT, attempt: 1 });
    }
    const err = await failureOf(external.complete({ task_id: locked, worker_id: 'A' }));
    expect(err.details).toMatch(/^ZD_TERMINAL/);
  });
});

describe('the claim and the flow deadline', () => {
  it('never claims a task past its flow deadline, nor counts its expired lock, before the deadline timer fires', async () => {
    await boot();
    const queued = await enqueued({ flow_deadline_ms: Date.now() + 60_000 });
    const relocked = await enqueued({ flow_id: 'f2', flow_deadline_ms: Date.now() + 60_000 });
    const store = t.node.externalTasks!.store;
    const q = 'acme:order:charge';
    const partitionOf = (id: string) => Number(id.split('-')[0]);
    // A short lock on one of them, which lapses.
    const now = Date.now();
    expect((await store.lock(partitionOf(relocked), [q], 'A', 100, 1, 5, now)).tasks.map((x) => x.taskId)).toContain(relocked);
    // The claim script runs as if the clock were past both deadlines (an owner whose
    // timer is late, or one that has just taken the partition over).
    const later = now + 120_000;
    for (const id of [queued, relocked]) {
      expect((await store.lock(partitionOf(id), [q], 'B', 1000, 10, 5, later)).tasks.map((x) => x.taskId)).not.toContain(id);
    }
    expect(await stateOf(queued)).toBe(pb.TaskState.QUEUED);
    const h = await redis.command('HGET', t.node.keys.task(partitionOf(relocked), relocked), 'lockExpiries');
    expect(h ?? '0').toBe('0');
  });
});

describe('the claim and the flow deadline, in numbers', () => {
  it('claims the fetchable task behind a run of tasks past their flow deadline, and says when to look again', async () => {
    await boot();
    const partitions = t.config.cluster.partitions;
    const p = partitionOfFlow('acme', 'late-0', partitions);
    // Twenty tasks of one partition whose deadlines pass, ahead of one without a deadline.
    const flows: string[] = [];
    for (let i = 0; flows.length < 21; i++) if (partitionOfFlow('acme', `late-${i}`, partitions) === p) flows.push(`late-${i}`);
    for (const f of flows.slice(0, 20)) await enqueued({ flow_id: f, flow_deadline_ms: Date.now() + 60_000 });
    const free = await enqueued({ flow_id: flows[20]! });
    const store = t.node.externalTasks!.store;
    // As if the clock were past the deadlines and the owner's timer had not run yet.
    const later = Date.now() + 120_000;
    const first = await store.lock(p, ['acme:order:charge'], 'B', 1000, 1, 5, later);
    expect(first.tasks.map((x) => x.taskId)).toEqual([free]);
    // Nothing fetchable is left: not "due now" (a waiting fetch would look again every 25 ms).
    const again = await store.lock(p, ['acme:order:charge'], 'B', 1000, 1, 5, later);
    expect(again.tasks).toEqual([]);
    expect(again.nextDue).toBeGreaterThan(later);
  });
});

describe('shared with stream slots', () => {
  it('a long-polling fetch takes the retry of a stream attempt the owner timed out, without waiting out its wait', async () => {
    // Guards the owner's requeue ringing the topic: the retry went to the heads only, and a
    // fetch waiting on the topic slept to the end of its wait with the task ready.
    await boot();
    const s = openSlot(t.worker, registerFrame());
    open.push(s);
    await s.nextOf('registered');
    const id = await enqueued({ method_timeout_ms: 300, retry_policy: { max_attempts: 3, initial_interval_ms: 50 } });
    expect((await s.nextOf('step_task')).step_task).toMatchObject({ task_id: id, attempt: 1 }); // never answered
    const started = Date.now();
    const r = await fetch({ wait_ms: 5000 });
    expect(r.tasks.map((x) => [x.task_id, x.attempt])).toEqual([[id, 2]]);
    expect(Date.now() - started).toBeLessThan(2500);
  });
  it('a retried enqueue wakes a long-polling fetch: the first may have committed on a node that died before it rang', async () => {
    // Guards the retry's ring reaching the fetch surface: it rang the heads only, so a
    // fetch waiting on the topic slept to the end of its wait with the task queued.
    await boot();
    const spec = step({ flow_id: 'retried' });
    const started = Date.now();
    const waiting = fetch({ wait_ms: 6000 });
    await sleep(200); // subscribed, its first claim found nothing
    // The first enqueue's commit, on a node that died before its rings went out.
    await t.node.store.enqueue(toNewTask(spec, 'step', t.config), Date.now());
    expect((await t.matching.enqueueStep({ step: spec })).created).toBe(false);
    const r = await waiting;
    expect(r.tasks.map((x) => x.flow_id)).toEqual(['retried']);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('complete: verify and hold the lock, write the outcome, then delete', () => {
  it('a crash between the outcome and the delete re-offers the task; the second completion is absorbed by the idempotency key', async () => {
    await boot();
    const id = await enqueued();
    await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 1, wait_ms: 1 }); // create the group
    await fetch({ lock_duration_ms: 400 });
    const store = t.node.externalTasks!.store;
    store.faults.completeAfterOutcome = true;
    const crash = await failureOf(external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('r1'), has_result: true, idempotency_key: 'k-1' }));
    store.faults.completeAfterOutcome = false;
    expect(crash.code).toBe(Status.INTERNAL);
    // the outcome is written, the task is still there, still locked (held across the dispatch)
    expect(await stateOf(id)).toBe(pb.TaskState.LOCKED);
    expect((await fetch({ worker_id: 'B' })).tasks).toEqual([]);

    // re-offered once the held lock lapses
    const again = await fetch({ worker_id: 'B', wait_ms: 3000, lock_duration_ms: 5000 });
    expect(again.tasks.map((x) => x.task_id)).toEqual([id]);
    await external.complete({ task_id: id, worker_id: 'B', result: Buffer.from('r2'), has_result: true, idempotency_key: 'k-1' });
    expect(await stateOf(id)).toBe(pb.TaskState.DONE);
    // a retried completion whose reply was lost is absorbed too; another key is refused
    await external.complete({ task_id: id, worker_id: 'A', idempotency_key: 'k-1' });
    expect((await failureOf(external.complete({ task_id: id, worker_id: 'A', idempotency_key: 'k-2' }))).details).toMatch(/^ZD_TERMINAL/);

    const seen = await outcomesOf('engine', id);
    expect(seen).toHaveLength(1);
    expect(Buffer.from(seen[0]!.output!).toString()).toBe('r1');
    expect((await redis.command('XLEN', `${t.config.redis.keyPrefix}:{${id.split('-')[0]}}:out`))).toBe(1);
  });

  it('a duplicate completion absorbed by its idempotency key is no second outcome, nor counted as one', async () => {
    await boot();
    const id = await enqueued();
    await fetch();
    await external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('r'), has_result: true, idempotency_key: 'k' });
    await external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('r'), has_result: true, idempotency_key: 'k' });
    expect(await outcomesOf('engine', id)).toHaveLength(1);
    const counted = (await t.node.metrics.outcomes.get()).values.filter((v) => v.labels.status === 'COMPLETED');
    expect(counted.reduce((n, v) => n + v.value, 0)).toBe(1);
  });

  it('holds the lock a full lock duration from the Complete, not to the lock taken at the fetch', async () => {
    // Guards the hold across the dispatch: a Complete late in its lock that stops after the outcome
    // must not let the task be re-offered at the fetch's old lockUntil, moments later.
    await boot();
    const id = await enqueued();
    const locked = (await fetch({ lock_duration_ms: 1000 })).tasks[0]!;
    await sleep(700);
    const store = t.node.externalTasks!.store;
    store.faults.completeAfterOutcome = true;
    const completedAt = Date.now();
    await failureOf(external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('r1'), has_result: true, idempotency_key: 'k' }));
    store.faults.completeAfterOutcome = false;
    const held = Number(await redis.command('HGET', t.node.keys.task(Number(id.split('-')[0]), id), 'lockUntil'));
    expect(held).toBeGreaterThanOrEqual(completedAt + 1000);
    expect(held).toBeGreaterThan(Number(locked.lock_until_ms) + 500);
    // Past the fetch's lockUntil, inside the hold: nobody gets it.
    await sleep(Math.max(0, Number(locked.lock_until_ms) - Date.now()) + 150);
    expect((await fetch({ worker_id: 'B' })).tasks).toEqual([]);
  });

  describe('a leftover of a completion that stopped after its outcome gets no second outcome', () => {
    /** A task whose Complete wrote its outcome and stopped before the delete (its lock held 400 ms). */
    async function leftover(over: Partial<pb.IStepSpec> = {}, config: Record<string, unknown> = {}): Promise<string> {
      await boot(config);
      const id = await enqueued(over);
      await fetch({ lock_duration_ms: 400 });
      const store = t.node.externalTasks!.store;
      store.faults.completeAfterOutcome = true;
      await failureOf(external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('r1'), has_result: true }));
      store.faults.completeAfterOutcome = false;
      expect(await stateOf(id)).toBe(pb.TaskState.LOCKED);
      return id;
    }
    const streamLength = (id: string) => redis.command('XLEN', `${t.config.redis.keyPrefix}:{${id.split('-')[0]}}:out`);

    it('when its flow is cancelled: nothing counted as cancelled, the leftover deleted', async () => {
      const id = await leftover();
      expect(await t.matching.cancelFlow({ tenant: 'acme', flow_id: 'f1' })).toMatchObject({ cancelled_queued: 0, cancelled_running: 0 });
      expect(await streamLength(id)).toBe(1);
      expect((await t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!.status).toBe(pb.OutcomeStatus.COMPLETED);
      expect(await redis.command('EXISTS', t.node.keys.task(Number(id.split('-')[0]), id))).toBe(0);
    });

    it('when a stream slot could start it once the held lock lapses: not started, deleted', async () => {
      const id = await leftover();
      const s = openSlot(t.worker, registerFrame());
      open.push(s);
      await s.nextOf('registered');
      await expect(s.nextOf('step_task', 1500)).rejects.toThrow(/no frame/);
      expect(await streamLength(id)).toBe(1);
      expect(await redis.command('EXISTS', t.node.keys.task(Number(id.split('-')[0]), id))).toBe(0);
    });

    it('when its lock expiries run out: deleted, not a terminal task for operators to retry or abandon', async () => {
      const id = await leftover({}, { 'fetch.maxLockExpiries': 1 });
      // B takes it once the held lock lapses (expiry 1 of 1) and dies; C's claim is expiry 2.
      expect((await fetch({ worker_id: 'B', wait_ms: 3000, lock_duration_ms: 100 })).tasks.map((x) => x.task_id)).toEqual([id]);
      await sleep(150);
      expect((await fetch({ worker_id: 'C', lock_duration_ms: 100 })).tasks).toEqual([]);
      expect((await operator.listTerminalTasks({ tenant: 'acme' })).tasks).toEqual([]);
      expect(await stateOf(id)).toBe(pb.TaskState.DONE);
      expect(await redis.command('EXISTS', t.node.keys.task(Number(id.split('-')[0]), id))).toBe(0);
      expect(await streamLength(id)).toBe(1);
    });

    it('when its flow deadline passes: no TIMED_OUT after its COMPLETED', async () => {
      const id = await leftover({ flow_deadline_ms: Date.now() + 800 });
      await sleep(1500);
      expect(await streamLength(id)).toBe(1);
      expect((await t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!.status).toBe(pb.OutcomeStatus.COMPLETED);
    });
  });
});

describe('a long poll while Redis does not answer', () => {
  it('ends at its wait with an empty list, not when Redis answers again', async () => {
    // Guards DESIGN §7 "a wait ends in an empty list, never a hang": the claim was awaited
    // with no bound, and a fetch on a node whose Redis stalled had no answer at all.
    await boot();
    await fetch(); // the topic's first claim, with Redis answering
    const pausedAt = Date.now();
    await redis.command('CLIENT', 'PAUSE', '5000', 'ALL'); // every client waits, UNPAUSE too
    try {
      const started = Date.now();
      const r = await fetch({ wait_ms: 1000 });
      expect(r.tasks).toEqual([]);
      expect(Date.now() - started).toBeLessThan(3500); // its wait and a second's grace, not the pause
    } finally {
      await sleep(Math.max(0, pausedAt + 5200 - Date.now()));
    }
  });

  it('waits for a claim Redis is slow to answer as long as its wait lasts, and answers what it claimed', async () => {
    await boot();
    const id = await enqueued();
    const pausedAt = Date.now();
    await redis.command('CLIENT', 'PAUSE', '2000', 'ALL');
    try {
      // Redis answers after two seconds, well inside the five-second wait: no empty answer at the grace's end.
      expect((await fetch({ wait_ms: 5000 })).tasks.map((x) => x.task_id)).toEqual([id]);
    } finally {
      await sleep(Math.max(0, pausedAt + 2200 - Date.now()));
    }
  });

  it('gives back at once what its claim locks when Redis answers after the fetch has answered empty', async () => {
    await boot();
    const id = await enqueued();
    const store = t.node.externalTasks!.store;
    const lock = store.lock.bind(store);
    let claimed = 0;
    store.lock = async (...a: Parameters<typeof lock>) => {
      const r = await lock(...a);
      claimed += r.tasks.length;
      return r;
    };
    const pausedAt = Date.now();
    await redis.command('CLIENT', 'PAUSE', '3000', 'ALL');
    try {
      // The claim waits in Redis past the wait and its grace: the worker hears of nothing.
      expect((await fetch({ wait_ms: 500, lock_duration_ms: 60_000 })).tasks).toEqual([]);
    } finally {
      await sleep(Math.max(0, pausedAt + 3200 - Date.now()));
    }
    await waitFor(() => claimed === 1, { timeoutMs: 5000, description: 'the claim answered by Redis at last' });
    store.lock = lock;
    // Locked in A's name when Redis answered, for a minute nobody would use: unlocked instead.
    await waitFor(async () => (await stateOf(id)) === pb.TaskState.QUEUED, { timeoutMs: 5000, description: 'the late claim given back' });
    expect((await fetch({ worker_id: 'B' })).tasks.map((x) => x.task_id)).toEqual([id]);
  });
});
