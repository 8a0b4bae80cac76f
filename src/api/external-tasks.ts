/**
 * The fetch-and-lock surface (DESIGN §7), transport-free: gRPC
 * (external-service.ts) and HTTP/JSON (external-http.ts) validate into the
 * same requests and call this. Workers name topics, never partitions; the
 * surface walks the partitions and finds tasks from their ids.
 *
 * Long poll: subscribe to the topics' doorbell, then claim; when nothing was
 * claimed, wait for a ring, for the next due time the claim reported (a retry
 * timeout passing, a lock expiring), or for the end of the wait — whichever
 * comes first — and claim again. A fetch whose caller has gone claims nothing.
 */
import type { Config } from '../config';
import { zdError, type ZdError } from '../errors';
import type { FetchBell } from '../gateway/fetch-bell';
import type { LockVerdict } from '../store/codes';
import type { ClaimedTask, FetchStore, TerminalTaskRecord } from '../store/fetch-store';
import type { OutcomeStatusName } from '../store/task-store';
import { formatOutcomeId } from '../store/outcomes';
import { MAX_TIMER_MS, type Clock } from '../util/clock';
import type { Logger } from '../util/logger';
import type { FailInput, FetchRequest, TaskRef } from './external-validation';
import type { LongPollGate } from './long-polls';
import { splitAtBytes } from './response-budget';

/**
 * A claimed task's wire size beyond ENTRY_OVERHEAD_BYTES: its input, and in UTF-8 bytes (up
 * to three a character) its flow and step execution ids of up to 512 characters each, which
 * the flat overhead alone put at a third of what a batch of such tasks carries.
 */
function claimedBytes(t: ClaimedTask): number {
  return t.input.length + Buffer.byteLength(t.flowId) + Buffer.byteLength(t.stepExecutionId);
}

export interface ExternalTasksDeps {
  config: Config;
  store: FetchStore;
  bell: FetchBell;
  clock: Clock;
  log: Logger;
  /** A task of `queue` is offerable to stream slots at `readyAt` (now or later): tell its partition's owner. */
  taskReady(partition: number, queue: string, taskId: string, readyAt: number): void;
  /** A task of `queue` is fetchable at `readyAt` in `partition`: wake the fetches waiting on it, on this node and its peers. */
  fetchable(queue: string, readyAt: number, partition: number): void;
  /** An outcome was written (doorbell of WaitOutcome / ConsumeOutcomes). */
  outcomeWritten(partition: number, taskId: string, status: OutcomeStatusName, count?: number): void;
  /** The node's bound on waiting calls (limits.maxLongPolls). */
  longPolls?: LongPollGate;
}

/** Test seams; unset in production. */
export interface ExternalTasksHooks {
  /**
   * Runs after a claim found nothing and before the fetch waits: a test parks
   * a task here to force the lost-wakeup interleaving deterministically.
   */
  beforeWait?: (round: number) => Promise<void> | void;
  /** Runs after a claim took tasks, before they are returned (a test makes the caller leave here). */
  afterClaim?: (tasks: ClaimedTask[]) => Promise<void> | void;
}

/** Shortest sleep between claims when the queues report something already due that the claim did not take. */
const MIN_RECHECK_MS = 25;
/** How long past its wait a fetch gives a claim Redis has not answered. */
const CLAIM_GRACE_MS = 1000;
/**
 * How long a partition whose claim failed is looked at after the others, and not at all once
 * a fetch has claimed something elsewhere: on a Redis Cluster a slot mid-migration refuses
 * every script (TRYAGAIN) for as long as it moves, and each claim there spends the client's
 * retries (seconds) before it fails.
 */
const CLAIM_FAILED_LAST_MS = 10_000;
/** Failed partitions after which a claim on a Redis Cluster stops looking (answering what it has). */
const MAX_FAILED_PARTITIONS = 2;

export function verdictError(taskId: string, v: LockVerdict): ZdError {
  switch (v) {
    case 'not-found':
      return zdError('ZD_TASK_NOT_FOUND', { taskId });
    case 'locked-by-other':
      return zdError('ZD_LOCKED_BY_OTHER', { taskId });
    case 'lock-expired':
      return zdError('ZD_LOCK_EXPIRED', { taskId });
    case 'terminal':
      return zdError('ZD_TERMINAL', { taskId });
  }
}

export class ExternalTasks {
  hooks: ExternalTasksHooks = {};
  private readonly c: Config;
  /** The last claim queued per set of topics (claimInTurn). */
  private readonly claimTurns = new Map<string, Promise<void>>();
  /** When a claim last failed in each partition (CLAIM_FAILED_LAST_MS); at most one entry per partition. */
  private readonly claimFailedAt = new Map<number, number>();

  constructor(private readonly d: ExternalTasksDeps) {
    this.c = d.config;
  }

  /** Its `faults` are a test seam. */
  get store(): FetchStore {
    return this.d.store;
  }

  // ---- worker calls ---------------------------------------------------------

  async fetchAndLock(r: FetchRequest, signal: AbortSignal): Promise<ClaimedTask[]> {
    const topics = r.topics.map((t) => t.queue);
    const queues = [...new Set(topics)];
    const turnKey = [...queues].sort().join('\n');
    const release = this.d.longPolls?.enter(r.waitMs);
    this.d.bell.noteFetch(queues);
    // Subscribe before the first claim query: a task parked between the query and the wait still wakes us.
    const sub = this.d.bell.subscribe(topics, signal);
    try {
      const deadline = this.d.clock.now() + r.waitMs;
      for (let round = 0; ; round++) {
        if (signal.aborted) return [];
        const claimed = await this.claimWithin(r, queues, turnKey, signal, deadline);
        if (!claimed) return [];
        const { tasks, nextDue } = claimed;
        if (tasks.length > 0) {
          if (this.hooks.afterClaim) await this.hooks.afterClaim(tasks);
          // Claimed past what one answer can carry: those go back at once, unseen.
          const [answer, over] = splitAtBytes(tasks, claimedBytes);
          if (over.length > 0) await this.unlockClaimed(r.workerId, over);
          return answer;
        }
        if (this.hooks.beforeWait) await this.hooks.beforeWait(round);
        const now = this.d.clock.now();
        const left = deadline - now;
        if (left <= 0 || signal.aborted || this.d.longPolls?.closed) return [];
        await sub.wait(Math.min(left, Math.max(MIN_RECHECK_MS, nextDue - now)));
      }
    } finally {
      sub.close();
      release?.();
    }
  }

  /**
   * A claim, or undefined once the fetch's wait is over (and a grace) while Redis has not
   * answered: a wait ends in an empty list, never a hang (DESIGN §7). What the claim locks
   * when Redis answers after all goes back at once: nobody will see it.
   */
  private async claimWithin(
    r: FetchRequest, queues: string[], turnKey: string, signal: AbortSignal, deadline: number,
  ): Promise<{ tasks: ClaimedTask[]; nextDue: number } | undefined> {
    const claim = this.claimInTurn(r, queues, turnKey, signal);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.min(MAX_TIMER_MS, Math.max(0, deadline - this.d.clock.now()) + CLAIM_GRACE_MS));
    });
    try {
      const first = await Promise.race([claim, late]);
      if (first) return first;
    } finally {
      clearTimeout(timer);
    }
    this.d.log.warn({ workerId: r.workerId, queues }, 'fetch claim unanswered past its wait: answering empty');
    void claim.then((c) => (c.tasks.length > 0 ? this.unlockClaimed(r.workerId, c.tasks) : undefined), () => undefined);
    return undefined;
  }

  /** The tenant of a task (live, else its retained outcome); undefined when neither exists (authorisation, docs/security.md). */
  async tenantOf(ref: TaskRef): Promise<string | undefined> {
    const live = await this.d.store.readTenant(ref.partition, ref.taskId);
    if (live !== null) return live;
    return (await this.d.store.readDone(ref.partition, ref.taskId))?.tenant?.toString();
  }

  /** Tasks claimed for a response that could not be written go back at once. */
  async unlockClaimed(workerId: string, tasks: ClaimedTask[]): Promise<void> {
    await Promise.all(tasks.map(async (t) => {
      try {
        const r = await this.d.store.unlock(t.partition, t.taskId, workerId, this.d.clock.now());
        if (r.kind === 'ok') this.ready(t.partition, r.queue, t.taskId, r.readyAt);
      } catch (err) {
        // Not lost: the lock lapses after its duration and the task is fetchable again.
        this.d.log.warn({ taskId: t.taskId, err: (err as Error).message }, 'unlock of an undelivered fetch failed');
      }
    }));
  }

  async complete(ref: TaskRef, workerId: string, result: Buffer | undefined, idempotencyKey: string): Promise<void> {
    const r = await this.d.store.complete(ref.partition, ref.taskId, workerId, result, idempotencyKey, this.d.clock.now());
    if (r.kind === 'refused') throw verdictError(ref.taskId, r.verdict);
    if (!r.absorbed) this.d.outcomeWritten(ref.partition, ref.taskId, 'COMPLETED');
  }

  /** Returns whether the task turned terminal. */
  async fail(ref: TaskRef, workerId: string, f: FailInput): Promise<boolean> {
    const r = await this.d.store.fail(
      ref.partition, ref.taskId, workerId, f.message, f.type, f.retries, f.retryTimeoutMs, this.d.clock.now(),
    );
    if (r.kind === 'refused') throw verdictError(ref.taskId, r.verdict);
    if (!r.terminal) this.ready(ref.partition, r.queue, ref.taskId, r.readyAt);
    return r.terminal;
  }

  async extendLock(ref: TaskRef, workerId: string, lockMs: number): Promise<number> {
    const r = await this.d.store.extend(ref.partition, ref.taskId, workerId, lockMs, this.d.clock.now());
    if (r.kind === 'refused') throw verdictError(ref.taskId, r.verdict);
    // The owner and the waiting fetches were told when the fetch's lock lapses; a shorter lock lapses sooner.
    // An expired lock is a slot's head again at once (DESIGN §4), not at the owner's next backlog pass, and
    // a fetch that saw the old lockUntil as its queue's next due time claims it then, not at the end of its wait.
    this.ready(ref.partition, r.queue, ref.taskId, r.lockUntil);
    return r.lockUntil;
  }

  async unlock(ref: TaskRef, workerId: string): Promise<void> {
    const r = await this.d.store.unlock(ref.partition, ref.taskId, workerId, this.d.clock.now());
    if (r.kind === 'refused') throw verdictError(ref.taskId, r.verdict);
    this.ready(ref.partition, r.queue, ref.taskId, r.readyAt);
  }

  // ---- operators ------------------------------------------------------------

  /**
   * The oldest `limit` matching terminal tasks over all partitions; `incomplete`
   * when some partition held more entries than one listing reads, so matching
   * tasks (older ones than some listed, too) may be missing.
   */
  async listTerminal(
    tenant: string, flowType: string, stepType: string, limit: number,
  ): Promise<{ tasks: TerminalTaskRecord[]; incomplete: boolean }> {
    const matches = (t: TerminalTaskRecord) => t.tenant === tenant && (!flowType || t.flowType === flowType) && (!stepType || t.stepType === stepType);
    const all = await Promise.all(
      Array.from({ length: this.c.cluster.partitions }, (_, p) => this.d.store.listTerminal(p, limit, matches)),
    );
    const partial = all.filter((r) => !r.complete).length;
    if (partial > 0) this.d.log.warn({ tenant, partitions: partial }, 'terminal listing read its scan limit in some partitions: matching tasks may be missing');
    const tasks = all.flatMap((r) => r.tasks)
      .sort((a, b) => a.terminalAt - b.terminalAt || a.taskId.localeCompare(b.taskId))
      .slice(0, limit);
    return { tasks, incomplete: partial > 0 };
  }

  async retryTerminal(ref: TaskRef, retries: number): Promise<void> {
    const now = this.d.clock.now();
    const r = await this.d.store.retryTerminal(ref.partition, ref.taskId, retries, now);
    if (r.kind === 'not-found') throw zdError('ZD_TASK_NOT_FOUND', { taskId: ref.taskId });
    if (r.kind === 'not-terminal') throw zdError('ZD_NOT_TERMINAL', { taskId: ref.taskId, state: r.state });
    this.ready(ref.partition, r.queue, ref.taskId, now);
  }

  async abandonTerminal(ref: TaskRef, reason: string): Promise<string> {
    const r = await this.d.store.abandonTerminal(ref.partition, ref.taskId, reason, this.d.clock.now());
    if (r.kind === 'not-found') throw zdError('ZD_TASK_NOT_FOUND', { taskId: ref.taskId });
    if (r.kind === 'not-terminal') throw zdError('ZD_NOT_TERMINAL', { taskId: ref.taskId, state: r.state });
    this.d.outcomeWritten(ref.partition, ref.taskId, 'FAILED');
    return formatOutcomeId(ref.partition, r.outcomeId);
  }

  // ---- internals ------------------------------------------------------------

  /**
   * Claims of the same topics on this node run one after another. A ring wakes
   * every fetch waiting on its topic: run at once, each peeked the partition the
   * task went to and called its claim script, and all but the first found it
   * taken. In turn, the first claim's hints (nothing left due there) let the
   * others skip the partition without a call to Redis.
   */
  private claimInTurn(
    r: FetchRequest, queues: string[], key: string, signal: AbortSignal,
  ): Promise<{ tasks: ClaimedTask[]; nextDue: number }> {
    const before = this.claimTurns.get(key) ?? Promise.resolve();
    // A caller gone while it waited its turn claims nothing (DESIGN §7).
    const run = before.then(() => (signal.aborted ? { tasks: [], nextDue: Infinity } : this.claim(r, queues)));
    const done = run.then(() => undefined, () => undefined);
    this.claimTurns.set(key, done);
    void done.then(() => {
      if (this.claimTurns.get(key) === done) this.claimTurns.delete(key);
    });
    return run;
  }

  /** A task is fetchable (now or at readyAt): ring the topic's fetches and tell the stream path's owner. */
  private ready(partition: number, queue: string, taskId: string, readyAt: number): void {
    this.d.fetchable(queue, readyAt, partition);
    this.d.taskReady(partition, queue, taskId, readyAt);
  }

  /**
   * One claim across every partition. A peek (the lowest score of each
   * partition's queue, all in one pipelined round; none where the node knows
   * nothing is due yet) finds the partitions with something due; claim scripts
   * then run only there, oldest first, until maxTasks are claimed. `nextDue` is
   * the earliest future score seen or known.
   */
  private async claim(r: FetchRequest, queues: string[]): Promise<{ tasks: ClaimedTask[]; nextDue: number }> {
    const hints = this.d.bell.hints;
    const mark = hints.begin(queues);
    const now = this.d.clock.now();
    let nextDue = Infinity;
    // Partitions whose queue is known to hold nothing due yet are not peeked (fetch-hints.ts).
    const asked: { p: number; queue: string }[] = [];
    for (let p = 0; p < this.c.cluster.partitions; p++) {
      for (const queue of queues) {
        const quietUntil = hints.quietUntil(queue, p, now);
        if (quietUntil === undefined) asked.push({ p, queue });
        else nextDue = Math.min(nextDue, quietUntil);
      }
    }
    const peeks = await Promise.all(asked.map(async ({ p, queue }) => ({ p, queue, score: await this.d.store.firstScore(p, queue) })));
    const due = new Map<number, { queues: string[]; scores: number[]; oldest: number }>();
    for (const { p, queue, score } of peeks) {
      if (score === undefined || score > now) {
        hints.quiet(queue, p, mark, now, score ?? Infinity);
        if (score !== undefined) nextDue = Math.min(nextDue, score);
        continue;
      }
      const e = due.get(p) ?? { queues: [], scores: [], oldest: score };
      // Oldest queue first: the claim script takes what is due queue by queue, in the order given, so
      // a backlog of the topic named first would keep an older task of another topic waiting behind it.
      const at = e.scores.findIndex((s) => s > score);
      const i = at < 0 ? e.scores.length : at;
      e.queues.splice(i, 0, queue);
      e.scores.splice(i, 0, score);
      e.oldest = Math.min(e.oldest, score);
      due.set(p, e);
    }
    const tasks: ClaimedTask[] = [];
    // Oldest first; partitions whose claim failed lately after the rest.
    const failedLately = (p: number) => now - (this.claimFailedAt.get(p) ?? -Infinity) < CLAIM_FAILED_LAST_MS;
    const order = [...due].sort((a, b) => Number(failedLately(a[0])) - Number(failedLately(b[0])) || a[1].oldest - b[1].oldest);
    let failure: unknown;
    let failures = 0;
    // A single Redis fails for every partition at once; a Cluster may fail one slot (migrating) alone.
    const maxFailures = this.d.store.redis.isCluster ? MAX_FAILED_PARTITIONS : 1;
    for (const [p, e] of order) {
      const left = r.maxTasks - tasks.length;
      if (left <= 0) break;
      // What was claimed is answered now, not after this partition's retries.
      if (tasks.length > 0 && failedLately(p)) break;
      let res: Awaited<ReturnType<FetchStore['lock']>>;
      try {
        res = await this.d.store.lock(p, e.queues, r.workerId, r.lockMs, left, this.c.fetch.maxLockExpiries, this.d.clock.now());
        this.claimFailedAt.delete(p);
      } catch (err) {
        // One partition out of reach (its slot migrating, its primary failing over) must not keep
        // the due tasks of the others from the fetch: they are claimed, and this partition is
        // looked at next time. Tasks claimed here already are answered, never thrown away with
        // the error: locked in this worker's name, they would sit out a lock nobody holds and
        // count a lock expiry when claimed again. Nothing claimed anywhere: the fetch fails.
        this.claimFailedAt.set(p, this.d.clock.now());
        this.d.log.warn({ partition: p, claimed: tasks.length, err: (err as Error).message }, 'fetch claim failed in a partition: claiming in the others');
        failure ??= err;
        // Bounded: one Redis failing fails every partition alike, and so does a Cluster that lost a
        // primary for the partitions there; each failed call may have spent seconds on retries.
        if (++failures >= maxFailures) break;
        continue;
      }
      nextDue = Math.min(nextDue, res.nextDue);
      // Nothing due left there: the claims behind this one need not look (claimInTurn).
      const after = this.d.clock.now();
      if (res.nextDue > after) for (const queue of e.queues) hints.quiet(queue, p, mark, after, res.nextDue);
      for (const t of res.tasks) {
        tasks.push(t);
        // The stream path's owner learns when this lock lapses (DESIGN §4: an expired lock is a head again).
        this.d.taskReady(p, t.queue, t.taskId, t.lockUntil);
      }
      if (res.terminal.length > 0) {
        this.d.log.warn({ partition: p, taskIds: res.terminal.map((x) => x.taskId) }, 'fetch tasks turned terminal: lock expired too often');
        // Its lapsed lock made each of them a head of the owner's again. Terminal, it is no backlog (DESIGN §6):
        // a notice of a time to come makes the owner drop the head (and look at the queue again then). Without
        // one, on a queue no slot serves, nothing offers it away and it counts as a queued Step for ever.
        const later = this.d.clock.now() + r.lockMs;
        for (const x of res.terminal) this.d.taskReady(p, x.queue, x.taskId, later);
      }
      // Leftovers of a completion that stopped after its outcome, deleted instead: the owner drops their heads too.
      for (const x of res.ended) this.d.taskReady(p, x.queue, x.taskId, this.d.clock.now() + r.lockMs);
    }
    if (tasks.length === 0 && failure !== undefined) throw failure;
    return { tasks, nextDue };
  }
}
