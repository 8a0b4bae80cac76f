/**
 * Steps flowing through running nodes while a test moves Redis under them:
 * producers enqueueing (each Step retried, idempotently, until acknowledged),
 * two worker slots and a fetch worker (gRPC, or HTTP on every other node) per
 * node completing what they get, and
 * an engine consuming outcomes through the first node, acking each batch with
 * its next read. Every answer other than success is kept, with its code.
 * Every loop ends with `stop()`; the producers after `total` Steps.
 */
import { ClientError, Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { fetchClients } from './fetch';
import type { TestNode } from './node';
import { openSlot, registerFrame } from './raw-slot';
import { sleep, waitFor } from './wait';

/** An answer other than success: who got it, its code and details. */
export interface Refusal { who: string; code: Status | string; details: string }

/** The answer a client retries while Redis fails over or a slot moves (HTTP: 503 with that code). */
export const retryable = (r: Refusal): boolean =>
  (r.code === Status.UNAVAILABLE || r.code === 'http 503') && /^ZD_STORE_UNAVAILABLE: /.test(r.details);

class HttpRefusal extends Error {
  constructor(readonly refusal: Refusal) {
    super(`${refusal.who}: ${refusal.code} ${refusal.details}`);
  }
}

const httpRefusal = (who: string, status: number, body: { code?: string; message?: string }) =>
  new HttpRefusal({ who, code: `http ${status}`, details: `${body.code ?? '?'}: ${body.message ?? ''}` });

const refusalOf = (who: string, err: unknown): Refusal =>
  err instanceof ClientError ? { who, code: err.code, details: err.details } : { who, code: 'thrown', details: String(err) };

/** The task id inside a task token (partition.taskId.attempt.nonce…). */
const taskOfToken = (token: string) => token.split('.')[1] ?? token;

export interface Load {
  /** Acknowledged enqueues: task id → step execution id. */
  readonly acked: Map<string, string>;
  /** Outcome ids delivered per task id (a redelivery repeats its id). */
  readonly outcomes: Map<string, Set<string>>;
  readonly refusals: Refusal[];
  /**
   * Completions a fetch worker was refused because its lock is no longer there (the task not
   * found, or locked by another worker): Redis lost the lock with a primary, or the enqueue it
   * read before a replica had it. The worker gives the task up, as a real one would.
   */
  readonly lostLocks: Refusal[];
  /** A task handed to a worker slot or fetch worker while another one still held it: "task: holder, newcomer". */
  readonly doubles: string[];
  /** Resolves once all `total` Steps are acknowledged. */
  readonly produced: Promise<void>;
  /** Waits for an outcome of every acknowledged Step. */
  allOutcomes(timeoutMs: number): Promise<void>;
  /** Ends every loop. */
  stop(): Promise<void>;
  /**
   * The end of a run: all `total` Steps acknowledged, an outcome of each within `timeoutMs`, every
   * loop ended. With `audit`, every node's attempt audit looks twice first: an attempt whose
   * completion went with an old primary is retried.
   */
  finish(timeoutMs: number, opts?: { audit?: boolean }): Promise<void>;
}

export interface LoadOptions {
  /** How long a worker slot holds each task before its result (default 0). */
  holdMs?: number;
  /**
   * The engine's redeliver_after_ms (default: the node's, 30 s). An outcome read whose
   * reply a dropped connection lost is pending in the group, and comes again only after this.
   */
  redeliverAfterMs?: number;
}

/** Steps of flow type order: step type `s` for worker slots, `charge` for the fetch workers, alternating in pairs. */
export function startLoad(nodes: TestNode[], total: number, paceMs = 15, opts: LoadOptions = {}): Load {
  const stopping = new AbortController();
  const stop = stopping.signal;
  const refusals: Refusal[] = [];
  const lostLocks: Refusal[] = [];
  /** Records a refused completion; true when the worker's lock is gone, and retrying is no use. */
  const refusedCompletion = (r: Refusal): boolean => {
    const lost = /^ZD_(TASK_NOT_FOUND|LOCKED_BY_OTHER): /.test(r.details);
    (lost ? lostLocks : refusals).push(r);
    return lost;
  };
  const acked = new Map<string, string>();
  const outcomes = new Map<string, Set<string>>();
  /** What a worker slot last saw of each task (its StepTask, its ResultAck): said of a Step with no outcome. */
  const seen = new Map<string, string>();
  /** Who holds each task now: a slot from its StepTask to its ResultAck (or the stream's end), a fetch worker until its completion is answered. */
  const holders = new Map<string, string>();
  const doubles: string[] = [];
  const hold = (task: string, who: string) => {
    const other = holders.get(task);
    if (other !== undefined && other !== who) doubles.push(`${task}: ${other}, ${who}`);
    holders.set(task, who);
  };
  const letGo = (task: string, who: string) => {
    if (holders.get(task) === who) holders.delete(task);
  };
  const until = async (fn: () => Promise<void>) => {
    while (!stop.aborted) await fn();
  };

  const slotLoop = (t: TestNode, id: string) => until(async () => {
    const s = openSlot(t.worker, registerFrame({ app_worker_id: id }));
    const mine = new Set<string>();
    try {
      await s.nextOf('registered', 5000);
      while (!stop.aborted) {
        const f = await s.next(500).catch((e: Error) => (/no frame within/.test(e.message) ? undefined : Promise.reject(e)));
        if (f?.frame === 'result_ack') {
          const task = taskOfToken(f.result_ack!.task_token!);
          seen.set(task, `${id} result ${pb.ResultVerdict[f.result_ack!.verdict!]}`);
          letGo(task, id);
          mine.delete(task);
        }
        if (f?.frame !== 'step_task') continue;
        const task = f.step_task!.task_id!;
        seen.set(task, `${id} attempt ${f.step_task!.attempt}`);
        hold(task, id);
        mine.add(task);
        if (opts.holdMs) await sleep(opts.holdMs);
        s.send({ step_result: { task_token: f.step_task!.task_token, output: Buffer.from('ok') } });
      }
    } catch (err) {
      refusals.push(refusalOf(`slot ${id}`, err));
      await sleep(100);
    } finally {
      s.reset();
      for (const task of mine) letGo(task, id);
    }
  });

  const fetchLoop = (t: TestNode, id: string) => until(async () => {
    const { external } = fetchClients(t);
    try {
      const r = await external.fetchAndLock({
        worker_id: id, max_tasks: 5, lock_duration_ms: 20_000, wait_ms: 1000,
        topics: [{ tenant: 'acme', flow_type: 'order', step_type: 'charge' }],
      });
      for (const task of r.tasks) hold(task.task_id!, id);
      for (const task of r.tasks) {
        for (let i = 0; ; i++) {
          try {
            await external.complete({ task_id: task.task_id, worker_id: id, idempotency_key: `k-${task.task_id}` });
            break;
          } catch (err) {
            if (refusedCompletion(refusalOf(`complete ${id}`, err))) break;
            if (i >= 50) throw err;
            await sleep(100);
          }
        }
        letGo(task.task_id!, id);
      }
    } catch (err) {
      refusals.push(refusalOf(`fetch ${id}`, err));
      await sleep(100);
    }
  });

  /** The same over HTTP/JSON: an error answer is its status and `{code, message}`. */
  const httpFetchLoop = (t: TestNode, id: string) => until(async () => {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`http://${t.node.httpAddress}/v1/external-tasks/${path}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000),
      });
      const json = (await res.json()) as { tasks?: { taskId: string }[]; code?: string; message?: string };
      if (res.status !== 200) throw httpRefusal(`${path.split('/').pop()} ${id}`, res.status, json);
      return json;
    };
    try {
      const r = await post('fetch-and-lock', {
        workerId: id, maxTasks: 5, lockDurationMs: 20_000, waitMs: 1000, topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }],
      });
      for (const task of r.tasks ?? []) hold(task.taskId, id);
      for (const task of r.tasks ?? []) {
        for (let i = 0; ; i++) {
          try {
            await post(`${encodeURIComponent(task.taskId)}/complete`, { workerId: id, idempotencyKey: `k-${task.taskId}` });
            break;
          } catch (err) {
            if (refusedCompletion(err instanceof HttpRefusal ? err.refusal : refusalOf(`complete ${id}`, err))) break;
            if (i >= 50) throw err;
            await sleep(100);
          }
        }
        letGo(task.taskId, id);
      }
    } catch (err) {
      refusals.push(err instanceof HttpRefusal ? err.refusal : refusalOf(`fetch ${id}`, err));
      await sleep(100);
    }
  });

  let ack: string[] = [];
  const consumeLoop = until(async () => {
    try {
      const r = await nodes[0]!.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 200, wait_ms: 500, ack, redeliver_after_ms: opts.redeliverAfterMs });
      ack = r.outcomes.map((o) => o.outcome_id!);
      for (const o of r.outcomes) {
        if (o.status !== pb.OutcomeStatus.COMPLETED) refusals.push({ who: 'outcome', code: 'status', details: `${o.task_id}: ${o.status}` });
        const ids = outcomes.get(o.task_id!) ?? new Set<string>();
        ids.add(o.outcome_id!);
        outcomes.set(o.task_id!, ids);
      }
    } catch (err) {
      refusals.push(refusalOf('consume', err));
      await sleep(100);
    }
  });

  const produce = async (from: number, every: number) => {
    for (let i = from; i < total && !stop.aborted; i += every) {
      const step = {
        tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: i % 4 < 2 ? 's' : 'charge', step_execution_id: `x${i}`,
      };
      for (let tries = 0; ; tries++) {
        try {
          const r = await nodes[i % nodes.length]!.matching.enqueueStep({ step });
          acked.set(r.task_id!, step.step_execution_id);
          break;
        } catch (err) {
          refusals.push(refusalOf('enqueue', err));
          if (tries >= 100) throw err;
          await sleep(100);
        }
      }
      await sleep(paceMs);
    }
  };

  // Fetch workers over gRPC on even nodes, over HTTP on odd ones.
  const loops = [
    ...nodes.flatMap((t, n) => [slotLoop(t, `w${n}a`), slotLoop(t, `w${n}b`), n % 2 === 0 ? fetchLoop(t, `fw${n}`) : httpFetchLoop(t, `hw${n}`)]),
    consumeLoop,
  ];
  const produced = Promise.all([produce(0, 2), produce(1, 2)]).then(() => undefined);
  produced.catch(() => undefined);
  const missing = () => [...acked.keys()].filter((id) => !outcomes.has(id));

  const allOutcomes = async (timeoutMs: number) => {
    await waitFor(() => missing().length === 0, { timeoutMs, intervalMs: 200, description: 'an outcome for every acknowledged Step' })
      .catch(async (err: Error) => {
        // What Redis holds of each missing Step says where it stopped (queued, running, locked, gone).
        const states = await Promise.all(missing().slice(0, 5).map(async (id) => {
          const task = await nodes[0]!.matching.getTask({ task_id: id }).then((r) => r.task, (e: Error) => e.message);
          return `${id} (slots saw: ${seen.get(id) ?? 'nothing'}): ${JSON.stringify(task)}`;
        }));
        throw new Error(`${err.message}: ${missing().length} of ${acked.size} missing\n${states.join('\n')}`);
      });
  };
  const stopAll = async () => {
    stopping.abort();
    await Promise.all(loops);
  };

  return {
    acked, outcomes, refusals, lostLocks, doubles, produced, allOutcomes, stop: stopAll,
    async finish(timeoutMs, finishOpts = {}) {
      await produced;
      if (finishOpts.audit) {
        for (let look = 0; look < 2; look++) {
          await sleep(500);
          for (const t of nodes) await t.node.attemptAudit.runOnce();
        }
      }
      await allOutcomes(timeoutMs);
      await stopAll();
    },
  };
}

/**
 * What a live test holds Redis's faults to (DESIGN §11.1, §11.3): every acknowledged Step has
 * exactly one outcome (a redelivery repeats its outcome id, never a second one), no outcome
 * belongs to a Step never acknowledged, and callers were answered nothing but the retryable
 * store-unavailable refusal (no INTERNAL anywhere; a stream this test reset is not counted).
 */
export function expectOneOutcomeEach(load: Load, opts: { lostLocks?: 'allowed' } = {}): void {
  expect([...load.outcomes].filter(([, ids]) => ids.size !== 1)).toEqual([]);
  expect([...load.outcomes.keys()].filter((id) => !load.acked.has(id))).toEqual([]);
  expect(load.refusals.filter((r) => !retryable(r))).toEqual([]);
  if (opts.lostLocks !== 'allowed') expect(load.lostLocks).toEqual([]);
}

/** Waits until one of `nodes` holds the lease of every partition, as `get` reads it from Redis, and they own them all. */
export async function everyPartitionLeased(nodes: TestNode[], partitions: number, get: (key: string) => Promise<unknown>): Promise<void> {
  const ids = new Set(nodes.map((t) => t.node.nodeId));
  await waitFor(async () => {
    for (let p = 0; p < partitions; p++) {
      const lease = await get(nodes[0]!.node.keys.lease(p));
      if (typeof lease !== 'string' || !ids.has(lease.slice(0, lease.lastIndexOf(':')))) return false;
    }
    return nodes.reduce((n, t) => n + t.node.owner.owned().length, 0) === partitions;
  }, { timeoutMs: 15_000, description: 'every partition leased by one node' });
}
