/**
 * Typed wrappers over the fetch surface's scripts (DESIGN §7): claim, complete,
 * fail, extend, unlock, and the operators' terminal-task actions. Each method
 * is one script call on one partition; refused worker mutations come back as a
 * LockVerdict, never as success.
 */
import { Keys, parseQueueName } from './keys';
import { lockVerdictOf, ScriptCode, type LockVerdict } from './codes';
import type { RedisClient } from './redis';
import type { ScriptReply } from './scripts';
import { readDone } from './outcomes';
import { decodeSpec, readTaskTenant } from './task-spec';
import { doneRetention, timedCall, type ObserveCall } from './observed-call';

export interface ClaimedTask {
  partition: number;
  taskId: string;
  queue: string;
  tenant: string;
  flowType: string;
  stepType: string;
  flowId: string;
  stepExecutionId: string;
  input: Buffer;
  lockUntil: number;
  retries: number;
  attempt: number;
}

export interface ClaimResult {
  tasks: ClaimedTask[];
  /**
   * Lowest score left in the claimed queues: after now, nothing is due before it (a
   * retry becoming due, a lock expiring); at or before now, something due is left;
   * Infinity = the queues are empty.
   */
  nextDue: number;
  /** Tasks that turned terminal during the claim (lock expiries exceeded), with their queues. */
  terminal: { taskId: string; queue: string }[];
  /** Leftovers that had their outcome already, deleted instead of turning terminal, with their queues. */
  ended: { taskId: string; queue: string }[];
}

export type Verdict<T> = ({ kind: 'ok' } & T) | { kind: 'refused'; verdict: LockVerdict };

export interface TerminalTaskRecord {
  partition: number;
  taskId: string;
  tenant: string;
  flowType: string;
  stepType: string;
  flowId: string;
  stepExecutionId: string;
  attempt: number;
  reason: string;
  terminalAt: number;
  errMsg: string;
  errType: string;
  lockExpiries: number;
}

/** Test seams; never set in production. */
export interface FetchStoreFaults {
  /** Makes completeLocked fail right after writing the outcome, before deleting the task. */
  completeAfterOutcome?: boolean;
}

/** Terminal entries read per round trip by listTerminal, and at most per partition per listing. */
const TERMINAL_PAGE = 256;
export const TERMINAL_SCAN_MAX = 20_000;

export class FetchStore {
  /** Test seam (see FetchStoreFaults). */
  faults: FetchStoreFaults = {};

  constructor(
    readonly redis: RedisClient,
    readonly keys: Keys,
    private readonly retentionMs: number,
    /** Told how long each worker script took, as TaskStore tells of the matching path's (the Redis latency histogram). */
    private readonly observe?: ObserveCall,
  ) {}

  private timed<T>(command: string, call: Promise<T>): Promise<T> {
    return timedCall(this.observe, command, call);
  }

  private get retention(): number {
    return doneRetention(this.retentionMs);
  }

  /** The first (lowest-scored) entry of a queue in a partition: [score] or undefined. */
  async firstScore(partition: number, queue: string): Promise<number | undefined> {
    const r = await this.redis.zrange(this.keys.queue(partition, queue), 0, 0, 'WITHSCORES');
    return r.length === 2 ? Number(r[1]) : undefined;
  }

  async lock(
    partition: number, queues: string[], workerId: string, lockMs: number, max: number, maxExpiries: number, now: number,
  ): Promise<ClaimResult> {
    const r = (await this.timed('lockTasks', this.redis.zdLockTasksBuffer(
      this.keys.terminal(partition), this.keys.tag(partition), now, workerId, lockMs, max, maxExpiries, ...queues,
    ))) as unknown as [Buffer[][], Buffer | string, Buffer[][], Buffer[][]];
    const s = (b: Buffer | string | undefined) => (b === undefined ? '' : b.toString());
    const tasks = (r[0] ?? []).map((x): ClaimedTask => {
      const queue = s(x[1]);
      const q = parseQueueName(queue);
      return {
        partition, taskId: s(x[0]), queue, tenant: q.tenant, flowType: q.flowType, stepType: q.stepType,
        flowId: s(x[2]), stepExecutionId: s(x[3]), input: (x[4] as Buffer | undefined) ?? Buffer.alloc(0),
        lockUntil: Number(s(x[5])), retries: Number(s(x[6]) || 0), attempt: Number(s(x[7]) || 0),
      };
    });
    const next = s(r[1]);
    const refs = (xs: Buffer[][] | undefined) => (xs ?? []).map((x) => ({ taskId: s(x[0]), queue: s(x[1]) }));
    return { tasks, nextDue: next === '' ? Infinity : Number(next), terminal: refs(r[2]), ended: refs(r[3]) };
  }

  async complete(
    partition: number, taskId: string, workerId: string, result: Buffer | undefined, idempotencyKey: string, now: number,
  ): Promise<Verdict<{ outcomeId: string; absorbed: boolean }>> {
    const r = await this.timed('completeLocked', this.redis.zdCompleteLocked(
      this.keys.task(partition, taskId), this.keys.tag(partition), taskId, workerId, now,
      result ? '1' : '0', result ?? '', idempotencyKey, this.retention,
      this.faults.completeAfterOutcome ? 'after-outcome' : '',
    ));
    if (Number(r[0]) === 1) return { kind: 'ok', outcomeId: String(r[1]), absorbed: String(r[2]) === '1' };
    return { kind: 'refused', verdict: lockVerdictOf(r) };
  }

  async fail(
    partition: number, taskId: string, workerId: string, message: string, type: string, retries: number, retryTimeoutMs: number, now: number,
  ): Promise<Verdict<{ terminal: boolean; readyAt: number; queue: string }>> {
    const r = await this.timed('failLocked', this.redis.zdFailLocked(
      this.keys.task(partition, taskId), this.keys.tag(partition), taskId, workerId, now, message, type, retries, retryTimeoutMs,
    ));
    const code = Number(r[0]);
    if (code === 1) return { kind: 'ok', terminal: false, readyAt: Number(r[1]), queue: String(r[2]) };
    if (code === 2) return { kind: 'ok', terminal: true, readyAt: 0, queue: String(r[1]) };
    return { kind: 'refused', verdict: lockVerdictOf(r) };
  }

  async extend(
    partition: number, taskId: string, workerId: string, lockMs: number, now: number,
  ): Promise<Verdict<{ lockUntil: number; queue: string }>> {
    const r = await this.timed('extendLock',
      this.redis.zdExtendLock(this.keys.task(partition, taskId), this.keys.tag(partition), taskId, workerId, now, lockMs));
    if (Number(r[0]) === 1) return { kind: 'ok', lockUntil: Number(r[1]), queue: String(r[2]) };
    return { kind: 'refused', verdict: lockVerdictOf(r) };
  }

  async unlock(partition: number, taskId: string, workerId: string, now: number): Promise<Verdict<{ readyAt: number; queue: string }>> {
    const r = await this.timed('unlockTask', this.redis.zdUnlockTask(this.keys.task(partition, taskId), this.keys.tag(partition), taskId, workerId, now));
    if (Number(r[0]) === 1) return { kind: 'ok', readyAt: Number(r[1]), queue: String(r[2]) };
    return { kind: 'refused', verdict: lockVerdictOf(r) };
  }

  /** The tenant of a live task, or null when there is no such task. */
  readTenant(partition: number, taskId: string): Promise<string | null> {
    return readTaskTenant(this.redis, this.keys, partition, taskId);
  }

  /** The ended task's outcome fields (with outcomeId), or null. */
  readDone(partition: number, taskId: string): Promise<Record<string, Buffer> | null> {
    return readDone(this.redis, this.keys, partition, taskId);
  }

  // ---- operators ------------------------------------------------------------

  /**
   * The oldest `limit` terminal tasks of a partition that `matches` keeps, oldest
   * first. Read a page at a time: the set holds every tenant's, so a filter
   * applied after one cut would hide one tenant's tasks behind another's older
   * ones. At most TERMINAL_SCAN_MAX entries are read (`complete` false past it).
   */
  async listTerminal(
    partition: number, limit: number, matches: (r: TerminalTaskRecord) => boolean = () => true,
  ): Promise<{ tasks: TerminalTaskRecord[]; complete: boolean }> {
    const out: TerminalTaskRecord[] = [];
    for (let start = 0; start < TERMINAL_SCAN_MAX; start += TERMINAL_PAGE) {
      const count = Math.min(TERMINAL_PAGE, TERMINAL_SCAN_MAX - start);
      const page = await this.terminalPage(partition, start, count);
      for (const r of page.records) {
        if (!matches(r)) continue;
        out.push(r);
        if (out.length >= limit) return { tasks: out, complete: true };
      }
      if (page.entries < count) return { tasks: out, complete: true };
    }
    // The last page read may have been the set's end exactly.
    return { tasks: out, complete: (await this.redis.zcard(this.keys.terminal(partition))) <= TERMINAL_SCAN_MAX };
  }

  /** Entries `start`… of a partition's terminal set, as records (`entries`: how many the set gave). */
  private async terminalPage(partition: number, start: number, count: number): Promise<{ records: TerminalTaskRecord[]; entries: number }> {
    const ids = await this.redis.zrange(this.keys.terminal(partition), start, start + count - 1, 'WITHSCORES');
    const out: TerminalTaskRecord[] = [];
    const rows = await Promise.all(Array.from({ length: ids.length / 2 }, async (_, i) => {
      const f = await this.redis.hmgetBuffer(
        this.keys.task(partition, ids[i * 2]!), 'tenant', 'flowType', 'stepType', 'flowId', 'seid', 'attempt', 'termReason',
        'errMsg', 'errType', 'lockExpiries', 'state', 'spec',
      );
      const s = f.map((b) => b?.toString() ?? null);
      if (f[11]) {
        const spec = decodeSpec(f[11]);
        [s[0], s[1], s[2], s[3], s[4]] = [spec.tenant, spec.flowType, spec.stepType, spec.flowId, spec.seid];
      }
      return s;
    }));
    rows.forEach((f, i) => {
      if (f[10] !== 'terminal') return;
      out.push({
        partition, taskId: ids[i * 2]!, terminalAt: Number(ids[i * 2 + 1]), tenant: f[0] ?? '', flowType: f[1] ?? '',
        stepType: f[2] ?? '', flowId: f[3] ?? '', stepExecutionId: f[4] ?? '', attempt: Number(f[5] ?? 0), reason: f[6] ?? '',
        errMsg: f[7] ?? '', errType: f[8] ?? '', lockExpiries: Number(f[9] ?? 0),
      });
    });
    return { records: out, entries: ids.length / 2 };
  }

  async retryTerminal(
    partition: number, taskId: string, retries: number, now: number,
  ): Promise<{ kind: 'queued'; queue: string } | { kind: 'not-found' } | { kind: 'not-terminal'; state: string }> {
    const r = await this.redis.zdRetryTerminal(this.keys.task(partition, taskId), this.keys.tag(partition), taskId, now, retries);
    return this.operatorResult(r, () => ({ kind: 'queued' as const, queue: String(r[1]) }));
  }

  async abandonTerminal(
    partition: number, taskId: string, reason: string, now: number,
  ): Promise<{ kind: 'abandoned'; outcomeId: string } | { kind: 'not-found' } | { kind: 'not-terminal'; state: string }> {
    const r = await this.redis.zdAbandonTerminal(
      this.keys.task(partition, taskId), this.keys.tag(partition), taskId, now, reason, this.retention,
    );
    return this.operatorResult(r, () => ({ kind: 'abandoned' as const, outcomeId: String(r[1]) }));
  }

  private operatorResult<T>(r: ScriptReply, ok: () => T): T | { kind: 'not-found' } | { kind: 'not-terminal'; state: string } {
    const code = Number(r[0]);
    if (code === 1) return ok();
    if (code === ScriptCode.NotFound) return { kind: 'not-found' };
    if (code === ScriptCode.NotTerminal) return { kind: 'not-terminal', state: String(r[1]) };
    throw new Error(`unexpected script reply code ${code}`);
  }
}
