/**
 * ExternalTaskService (fetch-and-lock workers) and OperatorService (terminal
 * tasks) over gRPC: wire messages → validated requests → ExternalTasks.
 */
import { AbortError } from 'abort-controller-x';
import type { CallContext } from 'nice-grpc';
import { principalOf, requireTaskTenant, requireTenant, type Principal } from '../auth/auth';
import type { Config } from '../config';
import { invalidArgument, zdError } from '../errors';
import type { ClaimedTask, TerminalTaskRecord } from '../store/fetch-store';
import type { pb } from '../wire';
import type { ExternalTasks } from './external-tasks';
import { splitAtBytes } from './response-budget';
import {
  idempotencyKeyOf, lockDurationOf, parseFail, parseFetch, resultOf, taskRefOf, workerIdOf, type FetchRequest, type TaskRef,
} from './external-validation';
import { optionalId, requireCount, requireName } from './validation';

const DEFAULT_LIST = 100;
const MAX_LIST = 1000;

export function lockedTaskToWire(t: ClaimedTask): pb.ILockedTask {
  return {
    task_id: t.taskId, topic: { tenant: t.tenant, flow_type: t.flowType, step_type: t.stepType }, flow_id: t.flowId,
    step_execution_id: t.stepExecutionId, input: t.input, lock_until_ms: t.lockUntil, retries: t.retries, attempt: t.attempt,
  };
}

const bytes = (b: Uint8Array | null | undefined): Buffer =>
  b ? Buffer.from(b.buffer, b.byteOffset, b.byteLength) : Buffer.alloc(0);

/** Every topic of a fetch must be of a tenant the worker token covers (shared with HTTP). */
export function authorizeFetch(p: Principal, r: FetchRequest): void {
  for (const t of r.topics) requireTenant(p, t.tenant);
}

/** A task mutation: a task of a tenant the token does not cover is NOT_FOUND (shared with HTTP). */
export async function authorizeTask(p: Principal, surface: ExternalTasks, ref: TaskRef): Promise<void> {
  if (p.allTenants) return;
  requireTaskTenant(p, await surface.tenantOf(ref), ref.taskId);
}

export function externalTaskService(surface: ExternalTasks, c: Config) {
  return {
    async fetchAndLock(req: pb.FetchAndLockRequest, ctx: CallContext): Promise<pb.IFetchAndLockResponse> {
      const r = parseFetch('grpc', {
        workerId: req.worker_id, maxTasks: req.max_tasks, lockDurationMs: req.lock_duration_ms, waitMs: req.wait_ms,
        topics: req.topics.map((t) => ({ tenant: t.tenant, flowType: t.flow_type, stepType: t.step_type })),
      }, c);
      authorizeFetch(principalOf(ctx), r);
      const tasks = await surface.fetchAndLock(r, ctx.signal);
      if (ctx.signal.aborted) {
        // The caller went away while we claimed: nobody will see these locks, so give them back now.
        await surface.unlockClaimed(r.workerId, tasks);
        throw new AbortError();
      }
      return { tasks: tasks.map(lockedTaskToWire) };
    },

    async complete(req: pb.CompleteRequest, ctx: CallContext): Promise<pb.ICompleteResponse> {
      const ref = taskRefOf('grpc', req.task_id, c);
      const workerId = workerIdOf('grpc', req.worker_id, c);
      const result = req.has_result ? resultOf('grpc', bytes(req.result), c) : undefined;
      if (!req.has_result && req.result.length > 0) throw invalidArgument('has_result', 'must be true when result is set');
      const key = idempotencyKeyOf('grpc', req.idempotency_key);
      await authorizeTask(principalOf(ctx), surface, ref);
      await surface.complete(ref, workerId, result, key);
      return {};
    },

    async fail(req: pb.FailRequest, ctx: CallContext): Promise<pb.IFailResponse> {
      const ref = taskRefOf('grpc', req.task_id, c);
      const workerId = workerIdOf('grpc', req.worker_id, c);
      const f = parseFail('grpc', req.failure, req.retries, req.retry_timeout_ms);
      // The step budget's fields of the common Failure (DESIGN §6: the budgets never meet). Dropped, a
      // non-retryable failure would be handed out again, as HTTP refuses a field its route does not read.
      if (req.failure?.non_retryable) {
        throw invalidArgument('failure.non_retryable', 'is not read by Fail: retries = 0 makes the task terminal');
      }
      if (Number(req.failure?.retry_after_ms ?? 0) > 0) {
        throw invalidArgument('failure.retry_after_ms', 'is not read by Fail: retry_timeout_ms sets when the task is fetchable again');
      }
      await authorizeTask(principalOf(ctx), surface, ref);
      return { terminal: await surface.fail(ref, workerId, f) };
    },

    async extendLock(req: pb.ExtendLockRequest, ctx: CallContext): Promise<pb.IExtendLockResponse> {
      const ref = taskRefOf('grpc', req.task_id, c);
      const workerId = workerIdOf('grpc', req.worker_id, c);
      const lockMs = lockDurationOf('grpc', req.lock_duration_ms, c);
      await authorizeTask(principalOf(ctx), surface, ref);
      return { lock_until_ms: await surface.extendLock(ref, workerId, lockMs) };
    },

    async unlock(req: pb.UnlockRequest, ctx: CallContext): Promise<pb.IUnlockResponse> {
      const ref = taskRefOf('grpc', req.task_id, c);
      const workerId = workerIdOf('grpc', req.worker_id, c);
      await authorizeTask(principalOf(ctx), surface, ref);
      await surface.unlock(ref, workerId);
      return {};
    },
  };
}

export function terminalTaskToWire(t: TerminalTaskRecord): pb.ITerminalTask {
  return {
    task_id: t.taskId, topic: { tenant: t.tenant, flow_type: t.flowType, step_type: t.stepType }, flow_id: t.flowId,
    step_execution_id: t.stepExecutionId, attempt: t.attempt, reason: t.reason, terminal_at_ms: t.terminalAt,
    last_error: t.errMsg || t.errType ? { message: t.errMsg, type: t.errType } : null, lock_expiries: t.lockExpiries,
    partition: t.partition,
  };
}

/** A terminal task's wire size beyond ENTRY_OVERHEAD_BYTES: its text, in UTF-8 bytes. */
function terminalTextBytes(t: TerminalTaskRecord): number {
  return Buffer.byteLength(t.flowId) + Buffer.byteLength(t.stepExecutionId) + Buffer.byteLength(t.reason) +
    Buffer.byteLength(t.errMsg) + Buffer.byteLength(t.errType);
}

/** The auth middleware refuses non-operators already; each handler checks again so it fails closed on its own. */
function requireOperator(ctx: CallContext, method: string): void {
  if (!principalOf(ctx).operator) throw zdError('ZD_OPERATOR_SCOPE_REQUIRED', { method });
}

export function operatorService(surface: ExternalTasks, c: Config) {
  const m = c.matching;
  return {
    async listTerminalTasks(req: pb.ListTerminalTasksRequest, ctx: CallContext): Promise<pb.IListTerminalTasksResponse> {
      requireOperator(ctx, 'ListTerminalTasks');
      const tenant = requireName('tenant', req.tenant, m.maxQueueLength, 'matching.maxQueueLength');
      const flowType = req.flow_type ? requireName('flow_type', req.flow_type, m.maxFlowTypeLength, 'matching.maxFlowTypeLength') : '';
      const stepType = req.step_type ? requireName('step_type', req.step_type, m.maxQueueLength, 'matching.maxQueueLength') : '';
      const limit = requireCount('limit', req.limit, MAX_LIST, DEFAULT_LIST);
      // At most what one gRPC answer carries: a thousand tasks with long non-ASCII ids and errors
      // (up to three bytes a character) would pass 4 MiB and the operator's client refuse them all.
      const listed = await surface.listTerminal(tenant, flowType, stepType, limit);
      const [shown] = splitAtBytes(listed.tasks, terminalTextBytes);
      return { tasks: shown.map(terminalTaskToWire), incomplete: listed.incomplete };
    },

    async retryTerminalTask(req: pb.RetryTerminalTaskRequest, ctx: CallContext): Promise<pb.IRetryTerminalTaskResponse> {
      requireOperator(ctx, 'RetryTerminalTask');
      const ref = taskRefOf('grpc', req.task_id, c);
      if (req.retries < 0) throw invalidArgument('retries', 'must not be negative');
      await surface.retryTerminal(ref, req.retries);
      return {};
    },

    async abandonTerminalTask(req: pb.AbandonTerminalTaskRequest, ctx: CallContext): Promise<pb.IAbandonTerminalTaskResponse> {
      requireOperator(ctx, 'AbandonTerminalTask');
      const ref = taskRefOf('grpc', req.task_id, c);
      const reason = optionalId('reason', req.reason, 1024) || 'abandoned by an operator';
      return { outcome_id: await surface.abandonTerminal(ref, reason) };
    },
  };
}
