/**
 * Typed wrappers over the task scripts: the only commit points of a task's
 * state (DESIGN §2). Each method is one script call on one partition, except
 * enqueueMany: one script call for a whole batch (per partition on a Redis
 * Cluster), and start and complete: the calls of one event-loop turn share one
 * script call the same way (call-batch.ts).
 */
import { isUtf8 } from 'node:buffer';
import type { RedisClient } from './redis';
import { Keys } from './keys';
import { refusalOf, type Refusal } from './codes';
import { hotScriptsFor, type ScriptReply } from './scripts';
import { readDone } from './outcomes';
import { CallBatch } from './call-batch';
import { decodeSpec, encodeSpec, readTaskTenant, spreadSpec, type SpecValues } from './task-spec';
import { spreadRun, TASK_LAYOUT } from './layout';
import { doneRetention, timedCall, type ObserveCall } from './observed-call';

/** A Step to enqueue: its spec (the values that never change) and where it goes. */
export interface NewTask extends SpecValues {
  partition: number;
  taskId: string;
  queue: string;
  input: Buffer;
  readyAt: number;
}

export type EnqueueResult = 'created' | 'exists' | 'ended';

export interface Enqueued {
  result: EnqueueResult;
  /** For a created task: the app worker id that last completed a Step of its flow ('' = none). */
  rememberedSticky: string;
  /** Set when the enqueue also started the task in the slot bound for it: its attempt deadline. */
  startedDeadlineAt?: number;
  /** For a task that exists and is queued: where it is queued (a repeat's own queue and readyAt count for nothing). */
  queued?: { queue: string; readyAt: number };
}

/** An idle slot bound to a Step being enqueued: the enqueue starts it there (sync match at enqueue). */
export interface EnqueueStart {
  slot: SlotIdentity;
  nonce: string;
}

/** Who takes an attempt: the slot that will run it. */
export interface SlotIdentity {
  appWorkerId: string;
  streamId: string;
  nodeId: string;
  bootId: string;
}

export interface StartedTask {
  taskId: string;
  attempt: number;
  nonce: string;
  input: Buffer;
  tenant: string;
  flowId: string;
  flowType: string;
  stepType: string;
  stepExecutionId: string;
  enqueuedAt: number;
  methodTimeout: number;
  heartbeatTimeout: number;
  flowDeadline: number;
  deadlineAt: number;
  startedAt: number;
}

export interface AttemptRef {
  partition: number;
  taskId: string;
  attempt: number;
  nonce: string;
}

/** A running attempt and the queue its task came from. */
export interface RunningAttempt extends AttemptRef {
  queue: string;
}

export interface FailureInfo {
  message: string;
  type: string;
  nonRetryable: boolean;
  retryAfterMs: number;
}

/**
 * Why an owner fails an attempt, which the fail script checks itself: the owner
 * found it from reads made before the call, and a heartbeat, or an end and a new
 * start, may land in between (DESIGN §2: the script is the only commit point).
 * - `due`: a method or heartbeat timeout; the attempt's inflight deadline has passed.
 * - `node-lost`: its node instance is gone; the running attempt started there.
 */
export type FailCondition =
  | { kind: 'due' }
  | { kind: 'node-lost'; node: string; boot: string };

/** A FailCondition as failTask-3.lua's ARGV[12]. */
function failConditionArg(c: FailCondition | undefined): string {
  if (!c) return '';
  return c.kind === 'due' ? 'due' : `lost\x1e${c.node}\x1e${c.boot}`;
}

/** An outcome's status, as the outcome stream and the done record hold it. */
export type OutcomeStatusName = 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

export type FailResult =
  /** `sticky`: the flow's sticky worker (the request's, else the remembered one), '' for none. */
  | { kind: 'retry'; readyAt: number; attempt: number; flowDeadline: number; sticky: string }
  | { kind: 'terminal'; outcomeId: string; status: 'FAILED' | 'TIMED_OUT' }
  | Refusal;

export interface CancelledAttempt {
  taskId: string;
  attempt: number;
  nonce: string;
  nodeId: string;
  streamId: string;
}

/** Tasks per enqueueTasks call: Redis runs nothing else while a script runs (≈ 15 µs a task). */
const ENQUEUE_CALL_MAX = 100;
/**
 * Tasks per startTasks or completeTasks call. Small on purpose: a full group
 * leaves at once, so Redis works on the first tasks of a turn while the node
 * still reads the rest. Large batches moved every slot in one convoy (node,
 * then Redis, then the worker, each idle while another worked): 8 ran 5-15 %
 * more Steps/s than 100 and than no batching, at 10-15 % less Redis and node
 * CPU per Step than no batching (docs/benchmarks.md).
 */
const BATCH_CALL_MAX = 8;

interface StartCall {
  partition: number;
  taskId: string;
  attempt: number;
  slot: SlotIdentity;
  nonce: string;
  now: number;
}

interface CompleteCall {
  a: AttemptRef;
  output: string | Buffer;
  now: number;
  /** Its worker is stopping: the flow's sticky entry naming it is cleared, not set. */
  stopping: boolean;
}

/**
 * A payload as a script argument. Valid UTF-8 (most payloads: JSON, text) goes
 * as a string, which ioredis writes back as the same bytes; a single Buffer
 * argument switches ioredis into a slower encoding of the whole command.
 */
export function payloadArg(b: Buffer): string | Buffer {
  return b.length === 0 ? '' : isUtf8(b) ? b.toString('utf8') : b;
}

function latest(calls: readonly { now: number }[]): number {
  let now = 0;
  for (const c of calls) if (c.now > now) now = c.now;
  return now;
}

function enqueued(r: ScriptReply): Enqueued {
  const code = Number(r[0]);
  if (code === 0) {
    const queue = String(r[1] ?? '');
    return queue === '' ? { result: 'exists', rememberedSticky: '' } : { result: 'exists', rememberedSticky: '', queued: { queue, readyAt: Number(r[2]) } };
  }
  if (code !== 1) return { result: 'ended', rememberedSticky: '' };
  const e: Enqueued = { result: 'created', rememberedSticky: String(r[1] ?? '') };
  const deadlineAt = String(r[2] ?? '');
  if (deadlineAt !== '') e.startedDeadlineAt = Number(deadlineAt);
  return e;
}

export class TaskStore {
  /** Starts and completions of one event-loop turn go as one script call per group (call-batch.ts). */
  private readonly starts: CallBatch<StartCall, ScriptReply>;
  private readonly completions: CallBatch<CompleteCall, ScriptReply>;

  constructor(
    readonly redis: RedisClient,
    readonly keys: Keys,
    private readonly retentionMs: number,
    /** How long a flow remembers the app worker that last completed one of its Steps. */
    private readonly stickyTtlMs: number,
    private readonly observe?: ObserveCall,
    /** The task layout to write at a start (layout.ts): a node passes what every live member reads. */
    private readonly layout: () => number = () => TASK_LAYOUT,
    /**
     * Where enqueues go: a connection of their own when they WAIT for replicas
     * (redis.waitReplicas), since WAIT holds its connection and counts its writes.
     */
    readonly enqueueRedis: RedisClient = redis,
  ) {
    // A Cluster script stays in one hash slot: one call per partition there. Node and
    // boot id are arguments a start call shares, so they are part of its group too.
    const cluster = redis.isCluster;
    this.starts = new CallBatch((calls) => this.startBatch(calls),
      (c) => `${cluster ? c.partition : ''}\0${c.slot.nodeId}\0${c.slot.bootId}`, BATCH_CALL_MAX);
    // A stopping worker's completions are a call of their own: the sticky TTL is one per call.
    this.completions = new CallBatch(
      (calls) => this.completeBatch(calls), (c) => (cluster ? 2 * c.a.partition : 0) + (c.stopping ? 1 : 0), BATCH_CALL_MAX,
    );
  }

  private timed<T>(command: string, call: Promise<T>): Promise<T> {
    return timedCall(this.observe, command, call);
  }

  private get retention(): number {
    return doneRetention(this.retentionMs);
  }

  async enqueue(t: NewTask, now: number): Promise<Enqueued> {
    const key = this.keys.task(t.partition, t.taskId);
    return enqueued(await this.timed('enqueueTask', this.enqueueRedis.zdEnqueueTask(key, ...this.taskValues(t, now))));
  }

  /**
   * A batch of enqueues (EnqueueSteps) in one enqueueTasks script call: one
   * command for Redis to parse and one Lua entry instead of one per task. A
   * Redis Cluster call must stay in one hash slot, so there the batch goes as
   * one call per partition. Tasks already committed stay committed when a
   * later one fails; the batch then rejects, once every call has answered (a caller that
   * gives back the slots bound to it must not do so while a start may still commit in one),
   * and a retry is idempotent.
   * `starts[i]`, when set, is an idle slot bound to task i: the script starts
   * the task there unless the flow remembers another sticky worker.
   */
  async enqueueMany(tasks: NewTask[], now: number, starts: readonly (EnqueueStart | undefined)[] = []): Promise<Enqueued[]> {
    const out = new Array<Enqueued>(tasks.length);
    const calls = await Promise.allSettled(this.enqueueGroups(tasks).map(async (idx) => {
      if (idx.length === 1 && !starts[idx[0]!]) {
        out[idx[0]!] = await this.enqueue(tasks[idx[0]!]!, now);
        return;
      }
      const first = tasks[idx[0]!]!;
      const args: (string | number | Buffer)[] = [this.keys.task(first.partition, first.taskId), now, this.layout()];
      for (const i of idx) {
        const s = starts[i];
        args.push(...this.taskValues(tasks[i]!, now));
        // an unbound task's values end with an empty worker id (enqueueTasks-1.lua)
        if (s && s.slot.appWorkerId !== '') args.push(s.slot.appWorkerId, s.slot.streamId, s.slot.nodeId, s.slot.bootId, s.nonce);
        else args.push('');
      }
      const r = (await this.timed('enqueueTasks', hotScriptsFor(this.enqueueRedis).enqueueTasks.call(this.enqueueRedis, args))) as ScriptReply;
      idx.forEach((i, k) => {
        if (r.length < 3 * (k + 1)) throw new Error(`enqueueTasks: ${r.length / 3} replies for ${idx.length} tasks`);
        out[i] = enqueued(r.slice(3 * k, 3 * k + 3));
      });
    }));
    const failed = calls.find((c): c is PromiseRejectedResult => c.status === 'rejected');
    if (failed) throw failed.reason;
    return out;
  }

  /** Indexes of `tasks` per script call: all together on one Redis, by partition on a Cluster; at most ENQUEUE_CALL_MAX each. */
  private enqueueGroups(tasks: NewTask[]): number[][] {
    const groups: number[][] = [];
    if (this.redis.isCluster) {
      const byPartition = new Map<number, number[]>();
      tasks.forEach((t, i) => {
        const g = byPartition.get(t.partition);
        if (g) g.push(i);
        else byPartition.set(t.partition, [i]);
      });
      groups.push(...byPartition.values());
    } else {
      groups.push(tasks.map((_, i) => i));
    }
    return groups.flatMap((g) => {
      const chunks: number[][] = [];
      for (let i = 0; i < g.length; i += ENQUEUE_CALL_MAX) chunks.push(g.slice(i, i + ENQUEUE_CALL_MAX));
      return chunks;
    });
  }

  /** A task's nine values as both enqueue scripts take them (includes/enqueue.lua). */
  private taskValues(t: NewTask, now: number): (string | number | Buffer)[] {
    return [
      this.keys.tag(t.partition), t.taskId, t.queue, Math.max(t.readyAt, now), t.flowDeadline, t.tenant, t.flowId,
      encodeSpec(t, now), payloadArg(t.input),
    ];
  }

  async start(
    partition: number, taskId: string, attempt: number, slot: SlotIdentity, nonce: string, now: number,
  ): Promise<StartedTask | Refusal> {
    const r = (await this.starts.add({ partition, taskId, attempt, slot, nonce, now })) as Buffer[] | number[];
    if (Number(r[0]) !== 1) return refusalOf(r as unknown[]);
    const b = r as Buffer[];
    const spec = decodeSpec(b[2]!);
    return {
      taskId, attempt: Number(b[4]!.toString()), nonce, startedAt: now,
      input: b[1]!,
      tenant: spec.tenant, flowId: spec.flowId, flowType: spec.flowType, stepType: spec.stepType,
      stepExecutionId: spec.seid, enqueuedAt: Number(spec.enqueuedAt), methodTimeout: Number(spec.methodTimeout),
      heartbeatTimeout: Number(spec.hbTimeout), flowDeadline: Number(spec.deadline), deadlineAt: Number(b[3]!.toString()),
    };
  }

  /**
   * One startTasks call (startTasks-1.lua). The calls share node and boot id (their
   * group) and the latest of their clocks: the calls of one turn are a millisecond
   * apart at most, and a later `now` only finds a task ready sooner.
   */
  private async startBatch(calls: StartCall[]): Promise<ScriptReply[]> {
    const first = calls[0]!;
    const args: (string | number)[] = [
      this.keys.task(first.partition, first.taskId), latest(calls), first.slot.nodeId, first.slot.bootId, this.layout(),
    ];
    // attempt 0: whichever attempt is queued (heads loaded from a queue scan do not know it)
    for (const c of calls) args.push(this.keys.tag(c.partition), c.taskId, c.attempt, c.slot.appWorkerId, c.slot.streamId, c.nonce);
    const flat = (await this.timed('startTasks', hotScriptsFor(this.redis).startTasks.call(this.redis, args, null))) as ScriptReply;
    if (flat.length !== 5 * calls.length) throw new Error(`startTasks: ${flat.length / 5} replies for ${calls.length} tasks`);
    const out = new Array<ScriptReply>(calls.length);
    for (let i = 0; i < calls.length; i++) out[i] = flat.slice(5 * i, 5 * i + 5);
    return out;
  }

  /** `stopping`: the worker is stopping (DESIGN §4: a draining worker's sticky entries are cleared). */
  async complete(a: AttemptRef, output: Buffer, now: number, stopping = false): Promise<{ kind: 'completed'; outcomeId: string } | Refusal> {
    const r = await this.completions.add({ a, output: payloadArg(output), now, stopping });
    if (Number(r[0]) === 1) return { kind: 'completed', outcomeId: String(r[1]) };
    return refusalOf(r);
  }

  /** One completeTasks call (completeTasks-1.lua), at the latest of the calls' clocks; its two values per task paired up. */
  private async completeBatch(calls: CompleteCall[]): Promise<ScriptReply[]> {
    const first = calls[0]!;
    const args: (string | number | Buffer)[] = [this.keys.task(first.a.partition, first.a.taskId), latest(calls), this.retention,
      first.stopping ? 0 : this.stickyTtlMs];
    for (const c of calls) args.push(this.keys.tag(c.a.partition), c.a.taskId, c.a.attempt, c.a.nonce, c.output);
    const flat = (await this.timed('completeTasks', hotScriptsFor(this.redis).completeTasks.call(this.redis, args))) as ScriptReply;
    if (flat.length !== 2 * calls.length) throw new Error(`completeTasks: ${flat.length / 2} replies for ${calls.length} tasks`);
    const out = new Array<ScriptReply>(calls.length);
    for (let i = 0; i < calls.length; i++) out[i] = [flat[2 * i], flat[2 * i + 1]];
    return out;
  }

  /**
   * `leaseToken` is set for owner-initiated failures (timeouts, dead nodes), '' for a gateway's own slot.
   * `condition`: an owner's reason, which the script checks; when it no longer holds, `not-due` and nothing changes.
   */
  async fail(a: AttemptRef, f: FailureInfo, now: number, leaseToken = '', condition?: FailCondition): Promise<FailResult> {
    const r = await this.timed('failTask', this.redis.zdFailTask(
      this.keys.task(a.partition, a.taskId), this.keys.inflight(a.partition), this.keys.lease(a.partition),
      this.keys.tag(a.partition), a.taskId, a.attempt, a.nonce, f.message, f.type, f.nonRetryable ? '1' : '0',
      f.retryAfterMs, now, this.retention, leaseToken, failConditionArg(condition),
    ));
    const code = Number(r[0]);
    if (code === 1) {
      return { kind: 'retry', readyAt: Number(r[1]), attempt: Number(r[2]), flowDeadline: Number(r[3] ?? 0), sticky: String(r[4] ?? '') };
    }
    if (code === 2) return { kind: 'terminal', outcomeId: String(r[1]), status: String(r[2]) === 'TIMED_OUT' ? 'TIMED_OUT' : 'FAILED' };
    return refusalOf(r);
  }

  /**
   * Removes `taskId` from a queue when its task hash is gone (dropStaleEntry-2.lua):
   * a start that found no task calls this, so that the entry does not come back with
   * the next refill of the queue's heads. True when an entry was removed.
   */
  async dropStaleEntry(partition: number, queue: string, taskId: string): Promise<boolean> {
    const r = await this.redis.zdDropStaleEntry(this.keys.task(partition, taskId), this.keys.queue(partition, queue), taskId);
    return Number(r) === 1;
  }

  async release(a: AttemptRef): Promise<{ kind: 'released'; readyAt: number; flowDeadline: number } | Refusal> {
    const r = await this.timed('releaseTask', this.redis.zdReleaseTask(
      this.keys.task(a.partition, a.taskId), this.keys.inflight(a.partition),
      this.keys.tag(a.partition), a.taskId, a.attempt, a.nonce,
    ));
    if (Number(r[0]) === 1) return { kind: 'released', readyAt: Number(r[1]), flowDeadline: Number(r[2] ?? 0) };
    return refusalOf(r);
  }

  async heartbeat(a: AttemptRef, now: number): Promise<{ kind: 'extended'; deadlineAt: number } | Refusal> {
    const r = await this.timed('heartbeatTask', this.redis.zdHeartbeatTask(
      this.keys.task(a.partition, a.taskId), this.keys.inflight(a.partition),
      this.keys.tag(a.partition), a.taskId, a.attempt, a.nonce, now,
    ));
    if (Number(r[0]) === 1) return { kind: 'extended', deadlineAt: Number(r[1]) };
    return refusalOf(r);
  }

  async cancelFlow(
    partition: number, tenant: string, flowId: string, reason: string, now: number,
  ): Promise<{ queued: string[]; queuedIn: string[]; running: CancelledAttempt[] }> {
    const r = (await this.timed('cancelFlow', this.redis.zdCancelFlow(
      this.keys.flow(partition, tenant, flowId), this.keys.inflight(partition),
      this.keys.tag(partition), reason, now, this.retention,
    ))) as [number, number, string[][], string[], string[]];
    return {
      queued: (r[3] ?? []).map(String),
      queuedIn: (r[4] ?? []).map(String),
      running: (r[2] ?? []).map((x) => ({
        taskId: x[0]!, attempt: Number(x[1]), nonce: x[2]!, nodeId: x[3]!, streamId: x[4]!,
      })),
    };
  }

  async timeout(
    partition: number, taskId: string, now: number, leaseToken: string,
  ): Promise<'timed-out' | 'not-due' | 'gone' | 'lease-moved'> {
    const r = (await this.timed('timeoutTask', this.redis.zdTimeoutTask(
      this.keys.task(partition, taskId), this.keys.deadlines(partition), this.keys.lease(partition),
      this.keys.tag(partition), taskId, now, this.retention, leaseToken,
    ))) as ScriptReply;
    const code = Number(r[0]);
    return code === 1 ? 'timed-out' : code === 0 ? 'not-due' : code === -5 ? 'lease-moved' : 'gone';
  }

  /** The task hash (binary-safe), its spec and running fields spread out into fields, or null. */
  async readTask(partition: number, taskId: string): Promise<Record<string, Buffer> | null> {
    const h = await this.redis.hgetallBuffer(this.keys.task(partition, taskId));
    return Object.keys(h).length === 0 ? null : spreadRun(spreadSpec(h));
  }

  /**
   * Whether each attempt still runs under its start nonce, as Redis holds it: one HMGET
   * each, pipelined per partition (a partition's keys share a hash slot).
   */
  async stillRunning(refs: AttemptRef[]): Promise<boolean[]> {
    const out = refs.map(() => false);
    const byPartition = new Map<number, number[]>();
    refs.forEach((r, i) => byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), i]));
    await Promise.all([...byPartition].map(async ([p, list]) => {
      const pipeline = this.redis.pipeline();
      for (const i of list) pipeline.hmget(this.keys.task(p, refs[i]!.taskId), 'state', 'nonce');
      const replies = (await pipeline.exec()) ?? [];
      list.forEach((i, j) => {
        const [err, f] = replies[j] ?? [];
        if (err) throw err;
        const [state, nonce] = (f ?? []) as (string | null)[];
        out[i] = state === 'running' && nonce === refs[i]!.nonce;
      });
    }));
    return out;
  }

  /** The tenant of a live task, or null when there is no such task. */
  readTenant(partition: number, taskId: string): Promise<string | null> {
    return readTaskTenant(this.redis, this.keys, partition, taskId);
  }

  /** The ended task's outcome fields (with outcomeId), or null. */
  readDone(partition: number, taskId: string): Promise<Record<string, Buffer> | null> {
    return readDone(this.redis, this.keys, partition, taskId);
  }
}
