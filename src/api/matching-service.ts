/**
 * MatchingService: producers, engines and operators (DESIGN §4, §6, §8).
 */
import { AbortError } from 'abort-controller-x';
import { LRUCache } from 'lru-cache';
import type { CallContext } from 'nice-grpc';
import { principalOf, requireTaskTenant, requireTenant, type Principal } from '../auth/auth';
import type { Config } from '../config';
import { invalidArgument, zdError } from '../errors';
import type { Membership } from '../cluster/membership';
import type { RpcSettlement } from '../gateway/slot';
import type { EnqueueBinding } from '../gateway/gateway';
import type { OutcomeBell } from '../gateway/outcome-bell';
import type { Metrics } from '../metrics/registry';
import type { Keys } from '../store/keys';
import { parseQueueName, partitionOf, partitionOfTaskId } from '../store/keys';
import { OutcomeStore, outcomeFromFields, parseOutcomeId, type StoredOutcome } from '../store/outcomes';
import { connectionEpoch, waitForReplicas, type RedisClient } from '../store/redis';
import type { CancelledAttempt, NewTask, OutcomeStatusName, TaskStore } from '../store/task-store';
import { MAX_TIMER_MS, type Clock } from '../util/clock';
import { within } from '../util/within';
import { pb } from '../wire';
import { outcomeToWire, taskToWire } from './mappers';
import type { LongPollGate } from './long-polls';
import type { EnqueueStreams } from './enqueue-stream';
import type { Logger } from '../util/logger';
import { outcomeGroupHandlers } from './outcome-groups';
import { outcomeGroupKey } from '../store/outcome-groups';
import { toNewTask } from './step-spec';
import { optionalId, requireBytes, requireCount, requireDuration, requireId, requireName } from './validation';
import { RESPONSE_BYTES_MAX, splitAtBytes } from './response-budget';

/** What the service needs from the node. */
export interface MatchingDeps {
  config: Config;
  redis: RedisClient;
  keys: Keys;
  store: TaskStore;
  outcomes: OutcomeStore;
  bell: OutcomeBell;
  membership: Membership;
  metrics: Metrics;
  clock: Clock;
  /** A task was enqueued: tell its partition's owner (`sticky`: the app worker to try first). */
  taskEnqueued(t: NewTask, sticky: string): void;
  /** Runs an RPC on this node or routes it to the node with the sticky worker or capacity. */
  invokeRpc(
    r: { tenant: string; flowId: string; flowType: string; rpcName: string; input: Buffer; sticky: string; waitMs: number; runMs: number; arrivedAt?: number },
    signal: AbortSignal,
  ): Promise<RpcSettlement>;
  /** A task that already existed may be ready: tell its owner to look. */
  taskReady(partition: number, queue: string, taskId: string, readyAt: number): void;
  /** Cancel running attempts wherever their slots are. */
  cancelAttempts(attempts: CancelledAttempt[], reason: string): void;
  outcomeWritten(partition: number, taskId: string, status: OutcomeStatusName, count?: number): void;
  /** The node's bound on waiting calls (limits.maxLongPolls). */
  longPolls?: LongPollGate;
  /** Sync match at enqueue: a new Step starts in an idle slot of this node bound before the enqueue script. */
  enqueueStarts?: EnqueueStarts;
  /** The node's open EnqueueStream calls (ended on drain). */
  enqueueStreams: EnqueueStreams;
  /** A long-lived call's principal now: its token re-checked against the current tokens files. */
  recheckPrincipal(ctx: CallContext): Principal;
  log: Logger;
}

export interface EnqueueStarts {
  /** An idle slot for a new Step, when one may take it now (else it goes through placement). */
  bind(t: NewTask, now: number): EnqueueBinding | undefined;
  /** The script started the task in the bound slot; `sticky`: the slot's worker is the flow's sticky one. */
  started(b: EnqueueBinding, t: NewTask, deadlineAt: number, now: number, sticky: boolean): void;
  /** The script did not start it: the slot serves others. */
  release(b: EnqueueBinding): void;
  /** The script failed: return the task if it started, then free the slot. */
  abandon(b: EnqueueBinding, t: NewTask): Promise<void>;
}

const DEFAULT_CONSUME_COUNT = 100;
/** How long an InvokeRpc waits for Redis to name its flow's remembered worker (at most half its dispatch window). */
const STICKY_LOOKUP_MS = 250;
/** When the owner of a cancelled queued Step looks at its queue again, having dropped its head. */
const CANCELLED_LOOK_AGAIN_MS = 1000;
/** A waiting ConsumeOutcomes reads every partition at least this often, rings or not. */
const FULL_LOOK_MS = 1000;
const MAX_CONSUME_COUNT = 1000;
/** Outcome ids one AckOutcomes, or one ConsumeOutcomes' `ack`, may carry. */
const MAX_ACK_IDS = MAX_CONSUME_COUNT * 10;
/** Consumers whose last claim of stale outcomes a node remembers. */
export const LAST_CLAIM_ENTRIES = 10_000;
/** Running attempts per partition DescribeQueues reads the queue of (one HGET each). */
const DESCRIBE_RUNNING_MAX = 10_000;
/** How long an enqueue waits for redis.waitReplicas replicas to confirm it. */
const WAIT_REPLICAS_MS = 1000;

/**
 * An outcome's wire size beyond ENTRY_OVERHEAD_BYTES: its output, and in UTF-8 bytes (up to
 * three a character) the text callers choose — flow and step execution ids of up to 512
 * characters, a fetch worker's id, an error message of up to 4096 — which a count of
 * characters put at a third of what the answer carries.
 */
/** What an answer of these outcomes carries, as splitAtBytes counts it, and the largest of them. */
function answerBytes(found: readonly StoredOutcome[]): { bytes: number; largest: number } {
  let bytes = 0;
  let largest = 0;
  for (const o of found) {
    const n = outcomeTextBytes(o);
    bytes += n;
    largest = Math.max(largest, n);
  }
  return { bytes, largest };
}

function outcomeTextBytes(o: StoredOutcome): number {
  return o.output.length + Buffer.byteLength(o.flowId) + Buffer.byteLength(o.stepExecutionId) + Buffer.byteLength(o.appWorkerId) +
    (o.error ? Buffer.byteLength(o.error.message) + Buffer.byteLength(o.error.type) : 0);
}

export function matchingService(d: MatchingDeps) {
  const c = d.config;
  // When each (group, consumer) last claimed stale outcomes: bounded, since consumer
  // names come from clients (one per engine process, often a new one per restart). An
  // evicted entry only makes that consumer's next call claim a little early.
  const lastClaim = new LRUCache<string, number>({ max: LAST_CLAIM_ENTRIES });
  // Groups with outcomes an answer here could not carry (marked stale): the next call of any of
  // their consumers on this node claims at once, not only the one that read them past the bound.
  const claimAtOnce = new LRUCache<string, true>({ max: LAST_CLAIM_ENTRIES });

  /**
   * With redis.waitReplicas, outcomes are answered only once that many replicas hold them. One
   * read off a primary a failover is leaving behind (a SENTINEL FAILOVER's old primary takes
   * writes until it is repointed) goes with that primary: its task runs again, and the engine
   * saw two outcomes of it. Not confirmed: UNAVAILABLE, and the group's next call gets them.
   */
  async function confirmReplicated(group: string, consumer: string, found: StoredOutcome[], epoch: { of: number[]; was: string }): Promise<void> {
    const ids = found.map((o) => parseOutcomeId(o.outcomeId, c.cluster.partitions)!);
    const partitions = [...new Set(ids.map((i) => i.partition))];
    let reason: string;
    try {
      const acked = await d.outcomes.replicated(partitions, c.redis.waitReplicas, WAIT_REPLICAS_MS);
      // Over the partitions it was taken for: on a Cluster the mark names each one's primary.
      if (d.outcomes.connectionEpoch(epoch.of) !== epoch.was) {
        reason = 'the connection to Redis changed (re-established, or a slot moved to another primary) between the read of outcomes and its WAIT for redis.waitReplicas replicas';
      } else if (acked < c.redis.waitReplicas) {
        reason = `the outcomes read reached ${acked} of the ${c.redis.waitReplicas} replicas redis.waitReplicas asks for within ${WAIT_REPLICAS_MS} ms`;
      } else return;
    } catch (err) {
      await redeliverSoon(group, consumer, ids);
      throw err;
    }
    await redeliverSoon(group, consumer, ids);
    throw zdError('ZD_STORE_UNAVAILABLE', { reason });
  }

  /**
   * WaitOutcome's outcome, with redis.waitReplicas, once that many replicas hold it. Read off a
   * primary a failover is leaving behind, it went with that primary: the task ran again, and the
   * engine saw a second outcome of it. Not confirmed: UNAVAILABLE, and the caller asks again.
   */
  async function confirmedOutcome(partition: number, taskId: string): Promise<Record<string, Buffer>> {
    const r = await d.outcomes.readDoneConfirmed(partition, taskId, c.redis.waitReplicas, WAIT_REPLICAS_MS);
    if (!r.done) throw zdError('ZD_TASK_NOT_FOUND', { taskId });
    if (!r.sameConnection) {
      throw zdError('ZD_STORE_UNAVAILABLE', {
        reason: 'the connection to Redis changed (re-established, or a slot moved to another primary) between the read of the outcome and its WAIT for redis.waitReplicas replicas',
      });
    }
    if (r.acked < c.redis.waitReplicas) {
      throw zdError('ZD_STORE_UNAVAILABLE', {
        reason: `the outcome read reached ${r.acked} of the ${c.redis.waitReplicas} replicas redis.waitReplicas asks for within ${WAIT_REPLICAS_MS} ms`,
      });
    }
    return r.done;
  }

  /** Read but not answered: to the group's next call at once, not after redeliver_after_ms (best effort: Redis may be away). */
  async function redeliverSoon(group: string, consumer: string, ids: { partition: number; streamId: string }[]): Promise<void> {
    claimAtOnce.set(group, true);
    await d.outcomes.deliverAgainSoon(group, consumer, ids).catch(() => undefined);
  }

  async function enqueue(tasks: NewTask[]): Promise<pb.IEnqueueStepResponse[]> {
    const now = d.clock.now();
    const starts = d.enqueueStarts;
    const bound = starts ? tasks.map((t) => starts.bind(t, now)) : [];
    let results;
    const waits = c.redis.waitReplicas > 0;
    const keys = waits ? tasks.map((t) => d.keys.task(t.partition, t.taskId)) : [];
    // Taken before the write is sent: see below.
    const epoch = waits ? connectionEpoch(d.store.enqueueRedis, keys) : '';
    try {
      results = await d.store.enqueueMany(tasks, now, bound.map((b) => b?.start));
      // Replicated before any worker sees it: a Step starts only once its enqueue is as durable as configured.
      if (waits) {
        // On the enqueue connection: WAIT counts the writes of its own connection, and blocks it.
        const acked = await waitForReplicas(d.store.enqueueRedis, keys, c.redis.waitReplicas, WAIT_REPLICAS_MS);
        // A WAIT that ioredis sent (again) on a newer connection than the write's, or to a
        // primary its slot moved to since, counted no write of ours: after a failover the
        // write may be on the old primary only. Not acknowledged; the retry is idempotent
        // and WAITs on the connection it writes on.
        if (connectionEpoch(d.store.enqueueRedis, keys) !== epoch) {
          throw zdError('ZD_STORE_UNAVAILABLE', {
            reason: 'the connection to Redis changed (re-established, or the slot moved to another primary) between the enqueue and its WAIT for redis.waitReplicas replicas',
          });
        }
        // Fewer replicas than asked for: not acknowledged (a retry finds the Step and rings again).
        if (acked < c.redis.waitReplicas) {
          throw zdError('ZD_STORE_UNAVAILABLE', {
            reason: `the enqueue reached ${acked} of the ${c.redis.waitReplicas} replicas redis.waitReplicas asks for within ${WAIT_REPLICAS_MS} ms`,
          });
        }
      }
    } catch (err) {
      // Whether the script started any of them is unknown: each goes back to
      // its queue if it did (a release by its start nonce), then the slot is free.
      bound.forEach((b, i) => b && void starts!.abandon(b, tasks[i]!));
      throw err;
    }
    return results.map(({ result, rememberedSticky, startedDeadlineAt, queued }, i) => {
      const t = tasks[i]!;
      const b = bound[i];
      d.metrics.tasksEnqueued.inc({ result });
      // The script starts a Step of a flow with a sticky worker only in that worker's slot.
      if (b && startedDeadlineAt !== undefined) starts!.started(b, t, startedDeadlineAt, now, !!(t.stickyWorkerId || rememberedSticky));
      else if (b) starts!.release(b);
      if (result === 'created' && startedDeadlineAt === undefined) d.taskEnqueued(t, t.stickyWorkerId || rememberedSticky);
      // A retried enqueue rings the owner again: the first one may have committed
      // on a node that died before its notice went out. A ring for a task that
      // is not queued any more costs one refused offer. It names the queue the task
      // is in: a repeat with another flow or step type must not reach that one's workers.
      else if (queued) d.taskReady(t.partition, queued.queue, t.taskId, Math.max(queued.readyAt, now));
      return { task_id: t.taskId, created: result === 'created', partition: t.partition };
    });
  }

  /**
   * Acks outcomes in a group. Nothing acked may mean no such group (a tenant's group acked
   * without its tenant, a typo): that matched nothing and is no success, or the engine's
   * outcomes come back at every redelivery. `named`: the group as the request named it.
   */
  async function ackInGroup(
    group: string, named: string, tenant: string | undefined, ids: { partition: number; streamId: string }[], reading = false,
  ): Promise<number> {
    const acked = await d.outcomes.ack(group, ids);
    if (acked === 0 && !(await d.outcomes.hasGroup(group, ids.map((i) => i.partition)))) {
      // A group an operator dropped under a live consumer: the acks it carries are of outcomes
      // handed out before the drop. The read makes the group again (docs/operations.md: the
      // consumer is not broken by the drop); refused, its every retry was refused the same.
      if (reading && (await d.outcomes.wasDropped(group))) {
        d.log.info({ group, acks: ids.length }, 'acks for a dropped outcome group set aside; the read makes it again');
        return 0;
      }
      throw zdError('ZD_OUTCOME_GROUP_NOT_FOUND', { group: tenant ? `${named} of tenant ${tenant}` : named });
    }
    return acked;
  }

  /** EnqueueSteps (and each EnqueueStream request): validate and authorise every Step, then enqueue them together. */
  async function enqueueBatch(principal: Principal, steps: pb.IStepSpec[]): Promise<pb.IEnqueueStepResponse[]> {
    if (steps.length === 0) throw invalidArgument('steps', 'must hold at least one Step');
    if (steps.length > c.limits.maxBatch) {
      throw invalidArgument('steps', `holds ${steps.length} Steps; the limit is ${c.limits.maxBatch} (limits.maxBatch)`);
    }
    // Validate all before writing any: a bad entry writes nothing.
    const tasks = steps.map((s, i) => toNewTask(s, `steps[${i}]`, c));
    // Authorise all before writing any: a batch with one foreign tenant writes nothing.
    for (const t of tasks) requireTenant(principal, t.tenant);
    return enqueue(tasks);
  }

  /** The tenant of a live task, else of its retained outcome; undefined when neither exists. */
  async function tenantOfTask(p: Principal, partition: number, taskId: string): Promise<string | undefined> {
    if (p.allTenants) return undefined; // nothing to check: skip the reads
    const live = await d.store.readTenant(partition, taskId);
    if (live !== null) return live;
    const done = await d.store.readDone(partition, taskId);
    return done?.tenant?.toString();
  }

  /** The tenant a ConsumeOutcomes/AckOutcomes call reads for ('' = all), checked against the principal. */
  function outcomeTenant(p: Principal, raw: unknown): string {
    const tenant = raw ? requireName('tenant', raw, c.matching.maxQueueLength, 'matching.maxQueueLength') : '';
    if (tenant) requireTenant(p, tenant);
    else if (!p.allTenants) throw zdError('ZD_PERMISSION_DENIED', { tenant: '"" (every tenant): set tenant to one the credential covers' });
    return tenant;
  }

  function taskRef(taskId: unknown): { taskId: string; partition: number } {
    const id = requireId('task_id', taskId, 64);
    const partition = partitionOfTaskId(id, c.cluster.partitions);
    if (partition === undefined) throw invalidArgument('task_id', 'is not a zdmatch task id');
    return { taskId: id, partition };
  }

  return {
    async enqueueStep(req: pb.EnqueueStepRequest, ctx: CallContext): Promise<pb.IEnqueueStepResponse> {
      const principal = principalOf(ctx);
      const task = toNewTask(req.step, 'step', c);
      requireTenant(principal, task.tenant);
      const [r] = await enqueue([task]);
      return r!;
    },

    async enqueueSteps(req: pb.EnqueueStepsRequest, ctx: CallContext): Promise<pb.IEnqueueStepsResponse> {
      return { results: await enqueueBatch(principalOf(ctx), req.steps) };
    },

    enqueueStream: d.enqueueStreams.handler({ enqueueSteps: enqueueBatch, principal: d.recheckPrincipal, log: d.log }),

    async getTask(req: pb.GetTaskRequest, ctx: CallContext): Promise<pb.IGetTaskResponse> {
      const principal = principalOf(ctx);
      const { taskId, partition } = taskRef(req.task_id);
      const h = await d.store.readTask(partition, taskId);
      if (h) {
        requireTaskTenant(principal, h.tenant?.toString() ?? '', taskId);
        return { task: taskToWire(taskId, partition, h) };
      }
      const done = await d.store.readDone(partition, taskId);
      if (!done) throw zdError('ZD_TASK_NOT_FOUND', { taskId });
      requireTaskTenant(principal, done.tenant?.toString() ?? '', taskId);
      const o = outcomeFromFields(partition, done.outcomeId?.toString() ?? '', done);
      return {
        task: {
          task_id: taskId, partition, state: pb.TaskState.DONE, tenant: o.tenant, flow_id: o.flowId,
          flow_type: o.flowType, step_type: o.stepType, step_execution_id: o.stepExecutionId, attempt: o.attempt,
          app_worker_id: o.appWorkerId, enqueued_at_ms: o.enqueuedAt, outcome: outcomeToWire(o),
        },
      };
    },

    async waitOutcome(req: pb.WaitOutcomeRequest, ctx: CallContext): Promise<pb.IWaitOutcomeResponse> {
      const principal = principalOf(ctx);
      const { taskId, partition } = taskRef(req.task_id);
      const waitMs = requireDuration('wait_ms', req.wait_ms, c.limits.maxWait);
      // The gate comes before the tenant check: a full gate must answer a foreign task id as it answers a
      // missing one (both TOO_MANY_LONG_POLLS), or the difference tells which ids exist.
      const release = d.longPolls?.enter(waitMs);
      let sub: ReturnType<OutcomeBell['subscribe']> | undefined;
      try {
        requireTaskTenant(principal, await tenantOfTask(principal, partition, taskId), taskId);
        sub = d.bell.subscribe(taskId, ctx.signal);
        const deadline = d.clock.now() + waitMs;
        for (;;) {
          // The caller has gone: a wait on an aborted signal returns at once, so looping on would read without pause.
          if (ctx.signal.aborted) throw new AbortError();
          let done = await d.store.readDone(partition, taskId);
          // The task may end between the two reads: look at the outcome again before saying NOT_FOUND.
          if (!done && !(await d.redis.exists(d.keys.task(partition, taskId)))) {
            done = await d.store.readDone(partition, taskId);
            if (!done) throw zdError('ZD_TASK_NOT_FOUND', { taskId });
          }
          if (done) {
            // The task may have been unknown at the first check (created since): check the outcome's tenant too.
            requireTaskTenant(principal, done.tenant?.toString() ?? '', taskId);
            if (c.redis.waitReplicas > 0) done = await confirmedOutcome(partition, taskId);
            return { outcome: outcomeToWire(outcomeFromFields(partition, done.outcomeId?.toString() ?? '', done)) };
          }
          const left = deadline - d.clock.now();
          if (left <= 0 || d.longPolls?.closed) return {};
          // A ring may come from a peer that wrote it; re-check at most every second regardless.
          await sub.wait(Math.min(left, 1000));
        }
      } finally {
        sub?.close();
        release?.();
      }
    },

    async consumeOutcomes(req: pb.ConsumeOutcomesRequest, ctx: CallContext): Promise<pb.IConsumeOutcomesResponse> {
      const principal = principalOf(ctx);
      const tenant = outcomeTenant(principal, req.tenant);
      const group = outcomeGroupKey(tenant, requireName('group', req.group, c.matching.maxQueueLength, 'matching.maxQueueLength'));
      const consumer = requireName('consumer', req.consumer, c.matching.maxQueueLength, 'matching.maxQueueLength');
      const count = requireCount('max_count', req.max_count, MAX_CONSUME_COUNT, DEFAULT_CONSUME_COUNT);
      const waitMs = requireDuration('wait_ms', req.wait_ms, c.limits.maxWait);
      const redeliverAfter = requireDuration('redeliver_after_ms', req.redeliver_after_ms) || c.outcomes.redeliverAfter;
      // The same bound as AckOutcomes': the acks ride along, they are no way around it.
      if (req.ack.length > MAX_ACK_IDS) throw invalidArgument('ack', `holds more than ${MAX_ACK_IDS} ids`);
      const acks = req.ack.map((id, i) => {
        const parsed = parseOutcomeId(id, c.cluster.partitions);
        if (!parsed) throw invalidArgument(`ack[${i}]`, 'is not an outcome id');
        return parsed;
      });
      const release = d.longPolls?.enter(waitMs);
      const all = Array.from({ length: c.cluster.partitions }, (_, p) => p);
      const sub = d.bell.subscribe(undefined, ctx.signal);
      try {
        // The acks first, as AckOutcomes: acks of a group that does not exist match nothing, and
        // the read would have made that group (one the engine never meant, a typo) and answered OK.
        if (acks.length > 0) await ackInGroup(group, req.group, tenant, acks, true);
        // Once the call reads: a refused typo leaves no note of a group nobody made.
        d.outcomes.noteRead(group);
        await d.outcomes.ensureGroup(group);
        const deadline = d.clock.now() + waitMs;
        // The first read covers every partition; one woken by rings, those that rang, but every
        // partition again once a second: rings for some partitions must not hide, for the whole
        // wait, an outcome whose ring was lost (a peer's doorbell) in another.
        let targets = all;
        let fullLookAt = d.clock.now();
        sub.takeRung();
        for (;;) {
          // The caller has gone: a wait on an aborted signal returns at once, and every read would
          // hand outcomes to a consumer nobody answers for.
          if (ctx.signal.aborted) throw new AbortError();
          const now = d.clock.now();
          // Taken before the reads: a WAIT counts their writes only on the connection that made them.
          const epoch = { of: all, was: c.redis.waitReplicas > 0 ? d.outcomes.connectionEpoch(all) : '' };
          let found: Awaited<ReturnType<OutcomeStore['readNew']>> = [];
          const claimKey = `${group}\0${consumer}`;
          if (claimAtOnce.delete(group) || now - (lastClaim.get(claimKey) ?? 0) >= Math.max(100, redeliverAfter / 2)) {
            lastClaim.set(claimKey, now);
            found = await d.outcomes.claimStale(group, consumer, redeliverAfter, count, all, RESPONSE_BYTES_MAX);
            // A full claim may have left more stale ones behind (a dead consumer's backlog): the group's
            // next call claims again at once, not half a redeliver_after_ms later per batch.
            // (or it stopped at the bytes, with no room for one more as large as its largest)
            const claimed = answerBytes(found);
            if (found.length >= count || claimed.bytes + claimed.largest > RESPONSE_BYTES_MAX) claimAtOnce.set(group, true);
          }
          const room = RESPONSE_BYTES_MAX - answerBytes(found).bytes;
          if (found.length < count && room > 0) {
            // Stale ones claimed already are answered when the read of new ones fails (a Cluster
            // primary out of reach): claimed for this consumer, they would wait out redeliver_after_ms.
            const fresh = await d.outcomes.readNew(group, consumer, count - found.length, targets, room).catch((err: unknown) => {
              if (found.length === 0) throw err;
              d.log.warn({ group, err: (err as Error).message }, 'outcome read failed: answering the stale outcomes claimed');
              return [];
            });
            found = found.concat(fresh);
          }
          if (ctx.signal.aborted && found.length > 0) {
            // Read as the caller left: handed to the group's next call, not left until redeliver_after_ms.
            await d.outcomes.deliverAgainSoon(group, consumer, found.map((o) => parseOutcomeId(o.outcomeId, c.cluster.partitions)!));
            claimAtOnce.set(group, true);
            throw new AbortError();
          }
          if (tenant) {
            // A tenant's group reads the shared outcome streams: other tenants' entries are none of its
            // business, so they are acked in this group at once (trimming still sees them acked) and dropped.
            const others = found.filter((o) => o.tenant !== tenant);
            if (others.length > 0) {
              await d.outcomes.ack(group, others.map((o) => parseOutcomeId(o.outcomeId, c.cluster.partitions)!));
              found = found.filter((o) => o.tenant === tenant);
              // Read on at once (more may follow the foreign entries), but not past the caller's wait: a long
              // foreign backlog is skipped over several calls, each answering empty at its deadline.
              if (found.length === 0) {
                if (d.clock.now() >= deadline || d.longPolls?.closed) return { outcomes: [] };
                continue;
              }
            }
          }
          if (found.length > 0) {
            if (c.redis.waitReplicas > 0) await confirmReplicated(group, consumer, found, epoch);
            // Read past what one answer can carry: the rest go to the next call's claim.
            const [answer, over] = splitAtBytes(found, outcomeTextBytes);
            if (over.length > 0) {
              await d.outcomes.deliverAgainSoon(group, consumer, over.map((o) => parseOutcomeId(o.outcomeId, c.cluster.partitions)!));
              claimAtOnce.set(group, true);
            }
            return { outcomes: answer.map(outcomeToWire) };
          }
          const left = deadline - d.clock.now();
          if (left <= 0 || d.longPolls?.closed) return { outcomes: [] };
          // Each ring names its partition; the once-a-second look (no ring) reads them all.
          const rang = await sub.wait(Math.min(left, Math.max(0, fullLookAt + FULL_LOOK_MS - d.clock.now())));
          const rung = sub.takeRung();
          targets = rang && rung && rung.length > 0 && d.clock.now() - fullLookAt < FULL_LOOK_MS ? rung : all;
          if (targets === all) fullLookAt = d.clock.now();
        }
      } finally {
        sub.close();
        release?.();
      }
    },

    async ackOutcomes(req: pb.AckOutcomesRequest, ctx: CallContext): Promise<pb.IAckOutcomesResponse> {
      const tenant = outcomeTenant(principalOf(ctx), req.tenant);
      const group = outcomeGroupKey(tenant, requireName('group', req.group, c.matching.maxQueueLength, 'matching.maxQueueLength'));
      if (req.outcome_ids.length === 0) throw invalidArgument('outcome_ids', 'must hold at least one id');
      if (req.outcome_ids.length > MAX_ACK_IDS) throw invalidArgument('outcome_ids', `holds more than ${MAX_ACK_IDS} ids`);
      const ids = req.outcome_ids.map((id, i) => {
        const parsed = parseOutcomeId(id, c.cluster.partitions);
        if (!parsed) throw invalidArgument(`outcome_ids[${i}]`, 'is not an outcome id');
        return parsed;
      });
      return { acked: await ackInGroup(group, req.group, tenant, ids) };
    },

    async cancelFlow(req: pb.CancelFlowRequest, ctx: CallContext): Promise<pb.ICancelFlowResponse> {
      const tenant = requireName('tenant', req.tenant, c.matching.maxQueueLength, 'matching.maxQueueLength');
      const flowId = requireId('flow_id', req.flow_id);
      const reason = optionalId('reason', req.reason, 1024) || 'flow cancelled';
      requireTenant(principalOf(ctx), tenant);
      const p = partitionOf(tenant, flowId, c.cluster.partitions);
      const r = await d.store.cancelFlow(p, tenant, flowId, reason, d.clock.now());
      if (r.running.length > 0) d.cancelAttempts(r.running, reason);
      for (const id of r.queued) d.outcomeWritten(p, id, 'CANCELLED');
      // Their owner drops their heads: a notice of a time to come says "not ready now" (on a queue no
      // stream slot serves, nothing would offer a stale head away, and it counted as a queued Step).
      for (const [i, id] of r.queued.entries()) {
        const queue = r.queuedIn[i];
        if (queue) d.taskReady(p, queue, id, d.clock.now() + CANCELLED_LOOK_AGAIN_MS);
      }
      for (const a of r.running) d.outcomeWritten(p, a.taskId, 'CANCELLED');
      return { cancelled_queued: r.queued.length, cancelled_running: r.running.length };
    },

    async describeQueues(req: pb.DescribeQueuesRequest, ctx: CallContext): Promise<pb.IDescribeQueuesResponse> {
      const tenant = requireName('tenant', req.tenant, c.matching.maxQueueLength, 'matching.maxQueueLength');
      const flowType = req.flow_type ? requireName('flow_type', req.flow_type, c.matching.maxFlowTypeLength, 'matching.maxFlowTypeLength') : '';
      requireTenant(principalOf(ctx), tenant);
      const now = d.clock.now();
      const byQueue = new Map<string, pb.IQueueInfo>();
      await Promise.all(Array.from({ length: c.cluster.partitions }, async (_, p) => {
        const names = (await d.redis.smembers(d.keys.queues(p))).filter((n) => {
          const q = parseQueueName(n);
          return q.tenant === tenant && (!flowType || q.flowType === flowType);
        });
        await Promise.all(names.map(async (n) => {
          const key = d.keys.queue(p, n);
          const [ready, delayed, oldest] = await Promise.all([
            d.redis.zcount(key, '-inf', now), d.redis.zcount(key, `(${now}`, '+inf'), d.redis.zrange(key, 0, 0, 'WITHSCORES'),
          ]);
          const q = parseQueueName(n);
          const info = byQueue.get(n) ?? { tenant: q.tenant, flow_type: q.flowType, step_type: q.stepType, ready: 0, delayed: 0, oldest_ready_at_ms: 0 };
          info.ready = Number(info.ready) + ready;
          info.delayed = Number(info.delayed) + delayed;
          if (ready > 0 && oldest.length === 2) {
            const at = Number(oldest[1]);
            if (!info.oldest_ready_at_ms || at < Number(info.oldest_ready_at_ms)) info.oldest_ready_at_ms = at;
          }
          byQueue.set(n, info);
        }));
        // Running: the attempts in stream slots, by the queue their task came from.
        const inflight = await d.redis.zrange(d.keys.inflight(p), 0, DESCRIBE_RUNNING_MAX - 1);
        const queueOf = await Promise.all(inflight.map((id) => d.redis.hget(d.keys.task(p, id), 'queue')));
        for (const n of queueOf) {
          if (!n) continue;
          const q = parseQueueName(n);
          if (q.tenant !== tenant || (flowType && q.flowType !== flowType)) continue;
          const info = byQueue.get(n) ?? { tenant: q.tenant, flow_type: q.flowType, step_type: q.stepType, ready: 0, delayed: 0, oldest_ready_at_ms: 0 };
          info.running = Number(info.running ?? 0) + 1;
          byQueue.set(n, info);
        }
      }));
      const queues = [...byQueue.values()].sort((a, b) => `${a.flow_type}:${a.step_type}`.localeCompare(`${b.flow_type}:${b.step_type}`));
      return { queues };
    },

    async describeCluster(_req: pb.DescribeClusterRequest, ctx: CallContext): Promise<pb.IDescribeClusterResponse> {
      // The auth middleware already refused non-operators; kept here so the handler fails closed on its own.
      if (!principalOf(ctx).operator) throw zdError('ZD_OPERATOR_SCOPE_REQUIRED', { method: 'DescribeCluster' });
      const n = c.cluster.partitions;
      const leases = await Promise.all(Array.from({ length: n }, (_, p) => d.redis.get(d.keys.lease(p))));
      const owned = new Map<string, number>();
      const partitionOwners = leases.map((l, p) => {
        const m = l ? /^(.*):(\d+)$/.exec(l) : null;
        if (m) owned.set(m[1]!, (owned.get(m[1]!) ?? 0) + 1);
        return { partition: p, owner: m?.[1] ?? '', epoch: Number(m?.[2] ?? 0) };
      });
      const nodes = d.membership.live().map((m) => ({
        node_id: m.nodeId, address: m.address, last_heartbeat_ms: m.lastHeartbeat,
        owned_partitions: owned.get(m.nodeId) ?? 0, live: true,
      }));
      return { partitions: n, nodes, partition_owners: partitionOwners };
    },

    async invokeRpc(req: pb.InvokeRpcRequest, ctx: CallContext): Promise<pb.IInvokeRpcResponse> {
      const m = c.matching;
      const tenant = requireName('tenant', req.tenant, m.maxQueueLength, 'matching.maxQueueLength');
      const flowId = requireId('flow_id', req.flow_id);
      const flowType = requireName('flow_type', req.flow_type, m.maxFlowTypeLength, 'matching.maxFlowTypeLength');
      const rpcName = requireName('rpc_name', req.rpc_name, m.maxQueueLength, 'matching.maxQueueLength');
      const input = requireBytes('input', req.input, c.limits.maxPayloadBytes);
      // At most what a timer holds: the run budget arms one, and Node fires a longer one at once.
      const timeout = requireDuration('timeout_ms', req.timeout_ms, MAX_TIMER_MS);
      requireTenant(principalOf(ctx), tenant);
      let sticky = optionalId('sticky_worker_id', req.sticky_worker_id, m.maxQueueLength);
      // dispatchWait bounds finding a worker; the caller's timeout (else limits.maxWait) the whole call
      const runMs = timeout > 0 ? timeout : c.limits.maxWait;
      const waitMs = Math.min(runMs, m.dispatchWait);
      const arrived = d.clock.now();
      if (!sticky) {
        // The flow's remembered worker is affinity, not correctness: a Redis that does not answer
        // (frozen, a Cluster primary down) costs it, never the caller's deadline or the call.
        const p = partitionOf(tenant, flowId, c.cluster.partitions);
        const lookup = d.redis.get(d.keys.sticky(p, tenant, flowId)).catch(() => null);
        sticky = (await within(lookup, Math.min(STICKY_LOOKUP_MS, Math.floor(waitMs / 2)))) ?? '';
      }
      // Both windows count from the call's arrival: the lookup's time comes off them.
      const r = await d.invokeRpc({ tenant, flowId, flowType, rpcName, input, sticky, waitMs, runMs, arrivedAt: arrived }, ctx.signal);
      // A caller that went away is answered nothing: its call is no UNAVAILABLE (the alert reads those as workers missing).
      if (!ctx.signal.aborted) d.metrics.rpcs.inc({ result: r.kind });
      if (r.kind === 'not-found') throw zdError('ZD_RPC_NOT_FOUND', { rpcName, flowType });
      if (r.kind === 'unavailable') throw zdError('ZD_RPC_UNAVAILABLE', { rpcName, reason: r.reason });
      return r.output
        ? { output: r.output, app_worker_id: r.appWorkerId }
        : { failure: { message: r.failure?.message ?? '', type: r.failure?.type ?? '', non_retryable: r.failure?.nonRetryable ?? false }, app_worker_id: r.appWorkerId };
    },

    ...outcomeGroupHandlers(d),
  };
}
