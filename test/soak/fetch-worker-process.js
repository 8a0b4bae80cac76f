/**
 * A fetch-and-lock worker process of the chaos soak (chaos.test.ts): it
 * long-polls one node for tasks of the soak's fetch topic, over gRPC with the
 * built SDK's FetchClient (dist/) or over the node's HTTP/JSON routes, and
 * completes most of them, fails some (on the fetch budget), gives some back
 * (Unlock), extends some locks and lets some lapse (it sleeps past the lock,
 * then tries to complete anyway). It can be killed with SIGKILL mid-task.
 *
 * It tells its parent over IPC, each before it acts, what the parent needs to
 * check that no two workers held a task at once: every claim (task id and
 * lockUntil, as the node answered them, and when the fetch that made it was
 * sent and answered), every lock extended, every Complete
 * with the time it was first sent and whether it succeeded, every Fail or
 * Unlock with the time it was sent (`releasing`) and, once answered, whether
 * the node took it.
 *   node test/soak/fetch-worker-process.js <grpcAddress> <httpAddress> <workerId> <grpc|http> <lockMs>
 */
'use strict';
const path = require('node:path');
const { FetchClient } = require(path.join(__dirname, '..', '..', 'dist'));

const [grpcAddress, httpAddress, workerId, mode, lockArg] = process.argv.slice(2);
const LOCK_MS = Number(lockArg);
const WAIT_MS = 1000;
const TOPICS = [{ tenant: 'acme', flowType: 'order', stepType: 'fetchwork' }];
const VERDICTS = new Set(['ZD_LOCKED_BY_OTHER', 'ZD_LOCK_EXPIRED', 'ZD_TERMINAL', 'ZD_TASK_NOT_FOUND']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tell = (m) => process.send({ ...m, worker: workerId });

/** A verdict: the node answered, and refused. Anything else (a node down, Redis down) is a transport error. */
class Verdict extends Error {
  constructor(code) {
    super(code);
    this.code = code;
  }
}

/** The four calls, over gRPC; each resolves, throws a Verdict, or throws a transport error. */
function grpcSurface() {
  const client = new FetchClient({ address: grpcAddress, workerId, reconnectBackoff: { initialMs: 50, maxMs: 300 }, defaultTimeoutMs: 3000 });
  const wrap = async (fn) => {
    try {
      return await fn();
    } catch (err) {
      if (VERDICTS.has(err.code)) throw new Verdict(err.code);
      throw err;
    }
  };
  return {
    fetch: () => wrap(async () => (await client.fetchAndLock({ topics: TOPICS, maxTasks: 4, lockDurationMs: LOCK_MS, waitMs: WAIT_MS }))
      .map((t) => ({ taskId: t.taskId, lockUntil: t.lockUntil.getTime(), attempt: t.attempt }))),
    complete: (id, key) => wrap(() => client.complete(id, { result: Buffer.from(`fetched ${key}`), idempotencyKey: key })),
    fail: (id) => wrap(() => client.fail(id, { message: 'a failure the fetch budget takes', type: 'Soak', retries: 1000, retryTimeoutMs: 20 })),
    extend: (id) => wrap(async () => (await client.extendLock(id, LOCK_MS)).getTime()),
    unlock: (id) => wrap(() => client.unlock(id)),
  };
}

/** The same calls as HTTP/JSON. */
function httpSurface() {
  const post = async (route, body, timeoutMs = 3000) => {
    const res = await fetch(`http://${httpAddress}/v1/external-tasks/${route}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workerId, ...body }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const json = await res.json().catch(() => ({}));
    if (res.ok) return json;
    if (VERDICTS.has(json.code)) throw new Verdict(json.code);
    throw new Error(`${route}: HTTP ${res.status} ${json.code ?? ''} ${json.message ?? ''}`);
  };
  const task = (id) => encodeURIComponent(id);
  return {
    fetch: async () => (await post('fetch-and-lock', { topics: TOPICS, maxTasks: 4, lockDurationMs: LOCK_MS, waitMs: WAIT_MS }, WAIT_MS + 5000))
      .tasks.map((t) => ({ taskId: t.taskId, lockUntil: Number(t.lockUntilMs), attempt: t.attempt })),
    complete: (id, key) => post(`${task(id)}/complete`, { result: Buffer.from(`fetched ${key}`).toString('base64'), idempotencyKey: key }),
    fail: (id) => post(`${task(id)}/failure`, { failure: { message: 'a failure the fetch budget takes', type: 'Soak' }, retries: 1000, retryTimeoutMs: 20 }),
    extend: async (id) => Number((await post(`${task(id)}/extend-lock`, { lockDurationMs: LOCK_MS })).lockUntilMs),
    unlock: (id) => post(`${task(id)}/unlock`, {}),
  };
}

const surface = mode === 'http' ? httpSurface() : grpcSurface();

/**
 * Complete, retried with the same idempotency key while the node cannot be reached (a lost
 * reply, a node restarting), for up to 3 s. The parent hears the first send time: a
 * completion the node took was sent while the lock was live. The result is the key, so an
 * outcome names the claim whose Complete it holds (outcome-results.ts).
 */
async function complete(t) {
  const key = `${workerId}:${t.taskId}:${t.lockUntil}`;
  tell({ completing: t.taskId, claim: t.lockUntil, at: Date.now() });
  const until = Date.now() + 3000;
  for (let tries = 0; tries < 30; tries++) {
    try {
      await surface.complete(t.taskId, key);
      tell({ completed: t.taskId, claim: t.lockUntil });
      return;
    } catch (err) {
      if (err instanceof Verdict || Date.now() > until) return;
      await sleep(100);
    }
  }
}

/** Fail or Unlock: the lock is given back once the node takes it. */
async function release(t, how) {
  tell({ releasing: t.taskId, claim: t.lockUntil, at: Date.now() });
  try {
    await surface[how](t.taskId);
    tell({ released: t.taskId, claim: t.lockUntil, ok: true });
  } catch (err) {
    // A verdict: the node did not take it. A transport error: it may have.
    tell({ released: t.taskId, claim: t.lockUntil, ok: !(err instanceof Verdict) ? undefined : false });
  }
}

async function handle(t) {
  const dice = Math.random();
  if (dice < 0.03) {
    // Asleep past the lock: another worker may take the task meanwhile; this Complete must then be refused.
    await sleep(LOCK_MS + 200 + Math.floor(Math.random() * 300));
    await complete(t);
  } else if (dice < 0.08) {
    // A long run that extends its lock half-way and completes past the first lockUntil.
    await sleep(LOCK_MS / 2);
    try {
      const lockUntil = await surface.extend(t.taskId);
      tell({ extended: t.taskId, claim: t.lockUntil, lockUntil });
    } catch {
      return; // refused or lost: the lock lapses, the task is fetched again
    }
    await sleep(LOCK_MS * 0.8);
    await complete(t);
  } else if (dice < 0.10) {
    await release(t, 'unlock');
  } else if (dice > 0.96) {
    await sleep(Math.floor(Math.random() * 10));
    await release(t, 'fail');
  } else {
    // Most runs are short; a quarter hold the lock for most of its duration.
    await sleep(dice < 0.35 ? 300 + Math.floor(Math.random() * (LOCK_MS / 2)) : Math.floor(Math.random() * 20));
    await complete(t);
  }
}

async function main() {
  for (;;) {
    let tasks;
    const sent = Date.now();
    try {
      tasks = await surface.fetch();
    } catch {
      await sleep(100); // the node or Redis is down: poll again
      continue;
    }
    // Told before anything runs: a kill loses no claim the worker acted on. The node made
    // the claim between `sent` and `got` (fetch-claims.ts).
    const got = Date.now();
    for (const t of tasks) tell({ claimed: t.taskId, lockUntil: t.lockUntil, attempt: t.attempt, via: mode, sent, got });
    await Promise.all(tasks.map(handle));
  }
}

void main();
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
