/**
 * The owner fails attempts from what it read a moment before: the due entries
 * of `inflight`, then the task's attempt and nonce (expiries), or the node and
 * boot id an attempt runs on (the dead-node sweep). A heartbeat, or an end and
 * a new start, can land in between. The fail script decides (DESIGN §2): it
 * fails an attempt only if it is still due, or still runs on the dead node
 * instance, when the script runs.
 *
 * The gap is opened by holding the owner's read of the task (its Redis client's
 * HMGET) while the race runs, over a real node and a real redis-server.
 */
import type { PartitionOwner } from '../../src/owner/partition';
import { partitionOf } from '../../src/store/keys';
import type { FailResult, TaskStore } from '../../src/store/task-store';
import { TaskStore as Store } from '../../src/store/task-store';
import { pb } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

type Hmget = (...args: unknown[]) => Promise<(string | null)[]>;

describe('the owner and a race between its reads and its fail', () => {
  const env = useSlotNode(redis, 'oexp');

  /**
   * Runs `race` once, inside the owner's first HMGET of `fields` on the hash of
   * `taskId`: `before` ahead of the read, `after` once it answered (the owner
   * then acts on that answer).
   */
  function holdOwnerRead(taskId: string, fields: string[], race: { before?: () => Promise<void>; after?: () => Promise<void> }): () => boolean {
    const rc = env.t.node.redis as unknown as { hmget: Hmget };
    const orig = rc.hmget.bind(rc);
    let ran = false;
    rc.hmget = async (...args: unknown[]) => {
      if (!ran && String(args[0]).endsWith(`:t:${taskId}`) && fields.every((f) => args.includes(f))) {
        ran = true;
        await race.before?.();
        const answer = await orig(...args);
        await race.after?.();
        return answer;
      }
      return orig(...args);
    };
    return () => ran;
  }

  /** Records what the owner's fail calls answered. */
  function failResults(): FailResult[] {
    const store = env.t.node.store as unknown as { fail: TaskStore['fail'] };
    const orig = store.fail.bind(store);
    const results: FailResult[] = [];
    store.fail = async (...args: Parameters<TaskStore['fail']>) => {
      const r = await orig(...args);
      if (args[3]) results.push(r); // the owner's calls carry its lease token
      return r;
    };
    return results;
  }

  /**
   * The owner's expiry came to `first` (the race each test sets up). Another pass may follow
   * it (a timer rearmed meanwhile) and find the attempt of now not due: never anything else.
   */
  function expectResults(results: FailResult[], first: FailResult['kind']): void {
    expect(results[0]).toEqual({ kind: first });
    expect(results.slice(1).filter((r) => r.kind !== 'not-due')).toEqual([]);
  }

  const step = (flowId: string, over: Partial<pb.IStepSpec> = {}): pb.IStepSpec => ({
    tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'charge', step_execution_id: 's',
    heartbeat_timeout_ms: 600, retry_policy: { max_attempts: 3, initial_interval_ms: 1 }, ...over,
  });

  const taskOf = async (taskId: string) => (await env.t.matching.getTask({ task_id: taskId })).task!;

  it('keeps an attempt running at attempt 1 when its heartbeat lands between the owner\'s due scan and its fail', async () => {
    const s = await env.registeredSlot();
    const results = failResults();
    const r = await env.t.matching.enqueueStep({ step: step('hb') });
    const task = (await s.nextOf('step_task')).step_task!;
    const inflight = env.t.node.keys.inflight(partitionOf('acme', 'hb', env.t.config.cluster.partitions));
    const ran = holdOwnerRead(r.task_id!, ['attempt', 'nonce'], {
      before: async () => {
        // the owner has found the attempt due; the worker's heartbeat lands now
        const due = Number(await env.t.node.redis.zscore(inflight, r.task_id!));
        s.send({ heartbeat: { task_token: task.task_token } });
        await waitFor(async () => Number(await env.t.node.redis.zscore(inflight, r.task_id!)) > due, { description: 'the heartbeat moved the deadline' });
      },
    });
    await waitFor(() => results.length > 0, { timeoutMs: 5000, description: 'the owner\'s expiry ran' });
    expect(ran()).toBe(true);
    expect(await taskOf(r.task_id!)).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 1 });
    expectResults(results, 'not-due');
    // the attempt is still the worker's: its result is taken
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('done') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  }, 20_000);

  it('does not fail the new attempt when the due one ended and the next started between the scan and the fail', async () => {
    const s = await env.registeredSlot();
    const results = failResults();
    const r = await env.t.matching.enqueueStep({ step: step('restart') });
    const first = (await s.nextOf('step_task')).step_task!;
    let second: pb.IStepTask | undefined;
    holdOwnerRead(r.task_id!, ['attempt', 'nonce'], {
      before: async () => {
        // the owner has found attempt 1 due; it fails by the worker's hand, and attempt 2 starts
        s.send({ step_result: { task_token: first.task_token, failure: { message: 'boom', type: 'Oops' } } });
        expect((await s.nextOf('result_ack')).result_ack).toMatchObject({ verdict: pb.ResultVerdict.ACCEPTED, retry_scheduled: true });
        second = (await s.nextOf('step_task')).step_task!;
      },
    });
    await waitFor(() => results.length > 0, { timeoutMs: 5000, description: 'the owner\'s expiry ran' });
    expect(second).toMatchObject({ task_id: r.task_id, attempt: 2 });
    expect(await taskOf(r.task_id!)).toMatchObject({ state: pb.TaskState.RUNNING, attempt: 2 });
    expectResults(results, 'not-due');
    s.send({ step_result: { task_token: second!.task_token, output: Buffer.from('done') } });
    expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  }, 20_000);

  it('keeps the inflight entry of an attempt started after the owner read the task and found none running', async () => {
    const store = env.t.node.store;
    const task = taskBuilder()({ heartbeatTimeout: 5000 });
    const p = task.partition;
    const live = { ...testSlot, nodeId: env.t.node.nodeId, bootId: env.t.node.bootId };
    const now = Date.now();
    await store.enqueue(task, now - 10_000);
    // started long enough ago to be due now
    expect(await store.start(p, task.taskId, 0, live, 'n-1', now - 10_000)).toMatchObject({ attempt: 1 });
    const results = failResults();
    const ran = holdOwnerRead(task.taskId, ['attempt', 'nonce'], {
      // the due attempt goes back to its queue before the owner reads it ...
      before: async () => void expect(await store.release({ partition: p, taskId: task.taskId, attempt: 1, nonce: 'n-1' })).toMatchObject({ kind: 'released' }),
      // ... and starts again right after
      after: async () => void expect(await store.start(p, task.taskId, 0, live, 'n-2', Date.now())).toMatchObject({ attempt: 1 }),
    });
    await env.t.node.owner.get(p)!.rearmTimers(); // the owner heard of no start here: arm it by hand
    await waitFor(ran, { timeoutMs: 5000, description: 'the owner\'s expiry read the task' });
    await new Promise((res) => setTimeout(res, 200)); // its expiry has finished
    expect(await env.t.node.redis.hget(env.t.node.keys.task(p, task.taskId), 'nonce')).toBe('n-2');
    expect(await env.t.node.redis.zscore(env.t.node.keys.inflight(p), task.taskId)).not.toBeNull();
    expectResults(results, 'stale');
  }, 20_000);

  describe.each([1, 2])('a dead-node sweep over layout %i', (layout) => {
    it('does not fail an attempt a live node started after the sweep read the task', async () => {
      const store = new Store(env.t.node.redis, env.t.node.keys, 60_000, 60_000, undefined, () => layout);
      const task = taskBuilder()({});
      const p = task.partition;
      const dead = { ...testSlot, nodeId: 'gone', bootId: 'b-gone', streamId: 's-dead' };
      const live = { ...testSlot, nodeId: env.t.node.nodeId, bootId: env.t.node.bootId, streamId: 's-live' };
      const now = Date.now();
      await store.enqueue(task, now);
      const results = failResults();
      const ran = holdOwnerRead(task.taskId, ['run', 'node', 'boot'], {
        // the sweep has read the dead node's attempt; it goes back and a live node starts it
        after: async () => {
          expect(await store.release({ partition: p, taskId: task.taskId, attempt: 1, nonce: 'n-dead' })).toMatchObject({ kind: 'released' });
          expect(await store.start(p, task.taskId, 0, live, 'n-live', Date.now())).toMatchObject({ attempt: 1 });
        },
      });
      expect(await store.start(p, task.taskId, 0, dead, 'n-dead', now)).toMatchObject({ attempt: 1 });
      const owner: PartitionOwner = env.t.node.owner.get(p)!;
      await owner.failDeadNodeAttempts();
      expect(ran()).toBe(true);
      const h = await env.t.node.redis.hgetall(env.t.node.keys.task(p, task.taskId));
      expect(h).toMatchObject({ state: 'running', attempt: '1', nonce: 'n-live' });
      expect(h.errType).toBeUndefined();
      expect(await env.t.node.redis.zscore(env.t.node.keys.inflight(p), task.taskId)).not.toBeNull();
      expectResults(results, 'not-due');
      // the attempt of the dead node instance itself still fails
      expect(await store.release({ partition: p, taskId: task.taskId, attempt: 1, nonce: 'n-live' })).toMatchObject({ kind: 'released' });
      expect(await store.start(p, task.taskId, 0, dead, 'n-dead-2', Date.now())).toMatchObject({ attempt: 1 });
      await owner.failDeadNodeAttempts();
      expect(results[1]).toMatchObject({ kind: 'retry', attempt: 2 });
      expect(await env.t.node.redis.hget(env.t.node.keys.task(p, task.taskId), 'errType')).toBe('worker_lost');
    }, 20_000);
  });
});

describe('failTask with an owner\'s reason', () => {
  const fx = useTaskStore(redis, 'ofail');
  const newTask = taskBuilder();
  const failure = { message: 'attempt timed out', type: 'timeout', nonRetryable: false, retryAfterMs: 0 };
  const LEASE = 'n0:1';

  /** A task started at `now` by `store` on testSlot (n1/b1), under the lease LEASE. */
  async function running(store: TaskStore, over: Parameters<typeof newTask>[0], now: number) {
    const t = newTask(over);
    await store.enqueue(t, now);
    expect(await store.start(t.partition, t.taskId, 0, testSlot, 'nonce-1', now)).toMatchObject({ attempt: 1 });
    await fx.client.set(fx.keys.lease(t.partition), LEASE);
    return { t, a: { partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' } };
  }

  it('refuses a timeout of an attempt that is not due, and changes nothing', async () => {
    const now = Date.now();
    const { t, a } = await running(fx.store, { heartbeatTimeout: 1000 }, now);
    const inflight = fx.keys.inflight(t.partition);
    const before = await fx.client.hgetall(fx.keys.task(t.partition, t.taskId));
    expect(await fx.store.fail(a, failure, now + 999, LEASE, { kind: 'due' })).toEqual({ kind: 'not-due' });
    expect(await fx.client.hgetall(fx.keys.task(t.partition, t.taskId))).toEqual(before);
    expect(await fx.client.zscore(inflight, t.taskId)).toBe(String(now + 1000));
    // due: it fails, and the same call run again answers as the first did
    const first = await fx.store.fail(a, failure, now + 1000, LEASE, { kind: 'due' });
    expect(first).toMatchObject({ kind: 'retry', attempt: 2 });
    expect(await fx.store.fail(a, failure, now + 1100, LEASE, { kind: 'due' })).toEqual(first);
    expect(await fx.client.zscore(inflight, t.taskId)).toBeNull();
  });

  it('refuses a timeout of an attempt without timeouts, and of one whose inflight entry is gone', async () => {
    const now = Date.now();
    const { t, a } = await running(fx.store, {}, now);
    expect(await fx.store.fail(a, failure, now + 60_000, LEASE, { kind: 'due' })).toEqual({ kind: 'not-due' });
    await fx.client.zrem(fx.keys.inflight(t.partition), t.taskId);
    expect(await fx.store.fail(a, failure, now + 60_000, LEASE, { kind: 'due' })).toEqual({ kind: 'not-due' });
    expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'state')).toBe('running');
    // a gateway's own slot fails it as before: no reason to check
    expect(await fx.store.fail(a, failure, now + 60_000)).toMatchObject({ kind: 'retry', attempt: 2 });
  });

  it('drops the inflight entry of a task that is gone, in the script', async () => {
    const now = Date.now();
    const { t, a } = await running(fx.store, { heartbeatTimeout: 100 }, now);
    await fx.client.del(fx.keys.task(t.partition, t.taskId));
    expect(await fx.store.fail({ ...a, attempt: 0, nonce: '' }, failure, now + 200, LEASE, { kind: 'due' })).toEqual({ kind: 'not-found' });
    expect(await fx.client.zscore(fx.keys.inflight(t.partition), t.taskId)).toBeNull();
  });

  describe.each([1, 2])('layout %i', (layout) => {
    const storeWriting = () => new Store(fx.client, fx.keys, 60_000, 60_000, undefined, () => layout);

    it('fails a worker-lost attempt only on the node instance the owner names', async () => {
      const now = Date.now();
      const { t, a } = await running(storeWriting(), {}, now);
      const lost = { message: 'worker lost: node n1 is gone', type: 'worker_lost', nonRetryable: false, retryAfterMs: 0 };
      expect(await fx.store.fail(a, lost, now, LEASE, { kind: 'node-lost', node: 'n1', boot: 'b0' })).toEqual({ kind: 'not-due' });
      expect(await fx.store.fail(a, lost, now, LEASE, { kind: 'node-lost', node: 'n2', boot: 'b1' })).toEqual({ kind: 'not-due' });
      expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'state')).toBe('running');
      expect(await fx.store.fail(a, lost, now, LEASE, { kind: 'node-lost', node: 'n1', boot: 'b1' })).toMatchObject({ kind: 'retry', attempt: 2 });
      expect(await fx.client.hget(fx.keys.task(t.partition, t.taskId), 'errType')).toBe('worker_lost');
    });
  });
});
