/**
 * The fetch surface as HTTP/JSON, driven with curl — a real HTTP client that
 * is not ours — against a real node and redis-server (docs/fetch.md).
 */
import { execFile } from 'node:child_process';
import { pb } from '../../src/wire';
import { sleep, step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('http'), { 'limits.maxPayloadBytes': 1024 });
});
afterEach(() => t.close());

interface CurlResult {
  status: number;
  body: Record<string, unknown>;
  raw: string;
}

/** `curl -X <method> http://<node>/<path> --data-binary <body>`; resolves with the status and the parsed body. */
function curl(path: string, body?: unknown, opts: { method?: string; raw?: string; maxTime?: number } = {}): Promise<CurlResult> {
  const args = ['-sS', '-X', opts.method ?? 'POST', '-H', 'content-type: application/json', '-w', '\n%{http_code}'];
  if (opts.maxTime) args.push('--max-time', String(opts.maxTime));
  const data = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
  if (data !== undefined) args.push('--data-binary', '@-'); // the body on stdin
  args.push(`http://${t.node.httpAddress}${path}`);
  return new Promise((resolve, reject) => {
    const child = execFile('curl', args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && !opts.maxTime) return reject(new Error(`curl failed: ${stderr || err.message}`));
      const i = stdout.lastIndexOf('\n');
      const raw = stdout.slice(0, i);
      const status = Number(stdout.slice(i + 1));
      let parsed: Record<string, unknown> = {};
      try {
        parsed = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        parsed = {};
      }
      resolve({ status, body: parsed, raw });
    });
    child.stdin!.end(data ?? '');
  });
}

const topic = { tenant: 'acme', flowType: 'order', stepType: 'charge' };
const FETCH = '/v1/external-tasks/fetch-and-lock';

async function enqueued(over: Partial<pb.IStepSpec> = {}): Promise<string> {
  return (await t.matching.enqueueStep({ step: step(over) })).task_id;
}

async function fetchOne(workerId = 'A', extra: Record<string, unknown> = {}) {
  const r = await curl(FETCH, { workerId, topics: [topic], waitMs: 1, ...extra });
  expect(r.status).toBe(200);
  return (r.body.tasks as Record<string, unknown>[])[0];
}

it('fetches with base64 payloads and completes with a base64 result', async () => {
  const id = await enqueued({ input: Buffer.from([0, 1, 2, 255]) });
  const task = await fetchOne('A', { lockDurationMs: 5000, maxTasks: 5 });
  expect(task).toMatchObject({
    taskId: id, topic, flowId: 'f1', stepExecutionId: 's1', input: Buffer.from([0, 1, 2, 255]).toString('base64'), attempt: 1, retries: 0,
  });
  expect(task!.lockUntilMs).toBeGreaterThan(Date.now() + 4000);
  const done = await curl(`/v1/external-tasks/${id}/complete`, { workerId: 'A', result: Buffer.from('out').toString('base64'), idempotencyKey: 'k1' });
  expect(done).toMatchObject({ status: 200, body: {} });
  const o = (await t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
  expect(Buffer.from(o.output!).toString()).toBe('out');
});

it('absorbs a repeated completion that carries the same idempotencyKey; another key is TERMINAL', async () => {
  const id = await enqueued();
  await fetchOne('A', { lockDurationMs: 5000 });
  const complete = (key: string) => curl(`/v1/external-tasks/${id}/complete`, { workerId: 'A', result: Buffer.from('out').toString('base64'), idempotencyKey: key });
  expect(await complete('k1')).toMatchObject({ status: 200, body: {} });
  // The reply was lost and the worker sends it again: success, not a second outcome.
  expect(await complete('k1')).toMatchObject({ status: 200, body: {} });
  expect(await complete('k2')).toMatchObject({ status: 422, body: { code: 'ZD_TERMINAL' } });
  const r = await t.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 10, wait_ms: 300 });
  expect((r.outcomes ?? []).filter((o) => o.task_id === id)).toHaveLength(1);
});

it('completes with an empty result as a result: the outcome carries no output, not the input', async () => {
  const id = await enqueued({ input: Buffer.from('in') });
  await fetchOne('A');
  expect(await curl(`/v1/external-tasks/${id}/complete`, { workerId: 'A', result: '' })).toMatchObject({ status: 200, body: {} });
  const o = (await t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
  expect(Buffer.from(o.output ?? []).toString()).toBe('');
});

it('answers each of the four verdicts with its own status and {code, message}', async () => {
  const id = await enqueued();
  await fetchOne('A', { lockDurationMs: 300 });
  const cases: [string, string, number, string][] = [];
  const locked = await curl(`/v1/external-tasks/${id}/complete`, { workerId: 'B' });
  cases.push(['locked', String(locked.body.code), locked.status, String(locked.body.message)]);
  await sleep(400);
  const expired = await curl(`/v1/external-tasks/${id}/extend-lock`, { workerId: 'A', lockDurationMs: 1000 });
  cases.push(['expired', String(expired.body.code), expired.status, String(expired.body.message)]);
  await fetchOne('A');
  const fail = await curl(`/v1/external-tasks/${id}/failure`, { workerId: 'A', failure: { message: 'nope', type: 'X' }, retries: 0 });
  expect(fail).toMatchObject({ status: 200, body: { terminal: true } });
  const terminal = await curl(`/v1/external-tasks/${id}/unlock`, { workerId: 'A' });
  cases.push(['terminal', String(terminal.body.code), terminal.status, String(terminal.body.message)]);
  const missing = await curl('/v1/external-tasks/3-0123456789abcdef01234567/complete', { workerId: 'A' });
  cases.push(['missing', String(missing.body.code), missing.status, String(missing.body.message)]);
  expect(cases.map((c) => c.slice(0, 3))).toEqual([
    ['locked', 'ZD_LOCKED_BY_OTHER', 409],
    ['expired', 'ZD_LOCK_EXPIRED', 410],
    ['terminal', 'ZD_TERMINAL', 422],
    ['missing', 'ZD_TASK_NOT_FOUND', 404],
  ]);
  expect(cases[0]![3]).toBe(`task ${id} is locked by another worker`);
  // never the payload on a failure path
  for (const c of [locked, expired, terminal, missing]) expect(Object.keys(c.body).sort()).toEqual(['code', 'message']);
});

it.each<[string, Record<string, unknown>, string]>([
  ['maxTasks', { maxTasks: 101 }, 'maxTasks: 101 exceeds the ceiling of 100 (fetch.maxMaxTasks)'],
  ['lockDurationMs', { lockDurationMs: 600_001 }, 'lockDurationMs: 600001 ms exceeds the ceiling of 600000 ms (fetch.maxLockDuration)'],
  ['waitMs', { waitMs: 60_001 }, 'waitMs: 60001 ms exceeds the ceiling of 60000 ms (fetch.maxWait)'],
  ['waitMs as a decimal string past 2^53', { waitMs: '99999999999999999999' }, 'waitMs: 99999999999999999999 ms exceeds the ceiling of 60000 ms (fetch.maxWait)'],
  ['maxTasks past 2^53', { maxTasks: 1e20 }, 'maxTasks: 100000000000000000000 exceeds the ceiling of 100 (fetch.maxMaxTasks)'],
  ['topics[0].flowType', { topics: [{ tenant: 'acme', flowType: '', stepType: 'charge' }] }, 'topics[0].flowType: is required'],
  ['maxTasks as text', { maxTasks: 'ten' }, 'maxTasks: must be a non-negative whole number'],
  ['workerId as a number', { workerId: 42 }, 'workerId: must be a string'],
  ['topics as one object', { topics: topic }, 'topics: must be an array of topics {tenant, flowType, stepType}'],
  ['topics[0] as a string', { topics: ['acme:order:charge'] }, 'topics[0]: must be an object {tenant, flowType, stepType}'],
  ['topics[1] as null', { topics: [topic, null] }, 'topics[1]: must be an object {tenant, flowType, stepType}'],
  ['topics[0].tenant as a number', { topics: [{ ...topic, tenant: 7 }] }, 'topics[0].tenant: must be a string'],
  ['topics[0].stepType as an array', { topics: [{ ...topic, stepType: ['charge'] }] }, 'topics[0].stepType: must be a string'],
])('rejects %s with 400 naming the field', async (_n, over, message) => {
  const id = await enqueued();
  const r = await curl(FETCH, { workerId: 'A', topics: [topic], waitMs: 1, ...over });
  expect(r).toMatchObject({ status: 400, body: { code: 'ZD_INVALID_ARGUMENT', message } });
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.QUEUED);
});

it('names a string field sent as another JSON type as such on the task routes, and changes nothing', async () => {
  const id = await enqueued();
  await fetchOne();
  const path = (route: string) => `/v1/external-tasks/${id}/${route}`;
  const answers = [
    await curl(path('complete'), { workerId: 'A', idempotencyKey: 12345 }),
    await curl(path('complete'), { workerId: { id: 'A' } }),
    await curl(path('unlock'), { workerId: true }),
  ];
  expect(answers.map((r) => [r.status, r.body.message])).toEqual([
    [400, 'idempotencyKey: must be a string'],
    [400, 'workerId: must be a string'],
    [400, 'workerId: must be a string'],
  ]);
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.LOCKED);
});

it('refuses a field a route does not read, named, and changes nothing', async () => {
  const fields = (f: string) => `is not a field of this request (its fields: ${f})`;
  const id = await enqueued();
  // A misspelt lock duration would have been a lock of the default 30 s.
  expect(await curl(FETCH, { workerId: 'A', topics: [topic], lock_duration_ms: 300_000 })).toMatchObject({ status: 400, body: {
    code: 'ZD_INVALID_ARGUMENT', message: `lock_duration_ms: ${fields('workerId, topics, maxTasks, lockDurationMs, waitMs')}`,
  } });
  expect(await curl(FETCH, { workerId: 'A', topics: [{ ...topic, flow_type: 'order' }] })).toMatchObject({ status: 400, body: {
    message: `topics[0].flow_type: ${fields('tenant, flowType, stepType')}`,
  } });
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.QUEUED);
  await fetchOne();
  const path = (route: string) => `/v1/external-tasks/${id}/${route}`;
  // A misspelt retry count would have made the task terminal.
  expect(await curl(path('failure'), { workerId: 'A', retryCount: 3 })).toMatchObject({ status: 400, body: {
    message: `retryCount: ${fields('workerId, failure, retries, retryTimeoutMs')}`,
  } });
  expect(await curl(path('failure'), { workerId: 'A', failure: { message: 'x', kind: 'y' }, retries: 1 })).toMatchObject({ status: 400, body: {
    message: `failure.kind: ${fields('message, type')}`,
  } });
  expect(await curl(path('extend-lock'), { workerId: 'A', lockDuration: 600_000 })).toMatchObject({ status: 400, body: {
    message: `lockDuration: ${fields('workerId, lockDurationMs')}`,
  } });
  expect(await curl(path('complete'), { workerId: 'A', output: 'aGk=' })).toMatchObject({ status: 400, body: {
    message: `output: ${fields('workerId, result, idempotencyKey')}`,
  } });
  expect(await curl(path('unlock'), { workerId: 'A', force: true })).toMatchObject({ status: 400, body: { message: `force: ${fields('workerId')}` } });
  // Still locked by A: no failure, extension, completion or unlock landed.
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.LOCKED);
});

it('refuses a member named twice in one object, naming it, and changes nothing', async () => {
  // JSON.parse keeps the last; a proxy or another parser may read the first.
  const twice = (name: string) => ({ status: 400, body: { code: 'ZD_INVALID_ARGUMENT', message: `${name}: is given twice; each member of a JSON object is named once` } });
  const id = await enqueued();
  expect(await curl(FETCH, undefined, { raw: '{"workerId":"A","workerId":"B","topics":[{"tenant":"acme","flowType":"order","stepType":"charge"}],"waitMs":1}' }))
    .toMatchObject(twice('workerId'));
  expect(await curl(FETCH, undefined, { raw: '{"workerId":"A","topics":[{"tenant":"acme","flowType":"order","stepType":"charge","tenant":"other"}],"waitMs":1}' }))
    .toMatchObject(twice('topics[0].tenant'));
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.QUEUED);
  await fetchOne();
  const path = (route: string) => `/v1/external-tasks/${id}/${route}`;
  // Read as the last one, this would have made the task terminal.
  expect(await curl(path('failure'), undefined, { raw: '{"workerId":"A","retries":3,"failure":{"message":"m","message":"n"},"retries":0}' }))
    .toMatchObject(twice('failure.message'));
  expect(await curl(path('failure'), undefined, { raw: '{"workerId":"A","retries":3,"retries":0}' })).toMatchObject(twice('retries'));
  expect((await t.matching.getTask({ task_id: id })).task).toMatchObject({ state: pb.TaskState.LOCKED, last_error: null });
  // The same name in different objects, or a value equal to a name, is no repeat.
  expect(await curl(path('failure'), undefined, { raw: '{"workerId":"A","failure":{"message":"workerId","type":"message"},"retries":3}' }))
    .toMatchObject({ status: 200, body: { terminal: false } });
});

it('refuses bad JSON, oversized bodies, bad base64, unknown routes and other methods', async () => {
  const badJson = await curl(FETCH, undefined, { raw: '{"workerId": "A",' });
  expect(badJson.status).toBe(400);
  expect(badJson.body).toMatchObject({ code: 'ZD_INVALID_ARGUMENT' });
  expect(String(badJson.body.message)).toMatch(/^body: is not valid JSON \(/);
  expect((await curl(FETCH, undefined, { raw: '[1,2]' })).body).toMatchObject({ code: 'ZD_INVALID_ARGUMENT', message: 'body: must be a JSON object' });

  const id = await enqueued();
  await fetchOne();
  const big = await curl(`/v1/external-tasks/${id}/complete`, { workerId: 'A', result: 'A'.repeat(200_000) });
  expect(big).toMatchObject({ status: 413, body: { code: 'ZD_BODY_TOO_LARGE' } });
  const notB64 = await curl(`/v1/external-tasks/${id}/complete`, { workerId: 'A', result: 'not base64!' });
  expect(notB64).toMatchObject({ status: 400, body: { message: 'result: must be a base64 string' } });
  const tooBig = await curl(`/v1/external-tasks/${id}/complete`, { workerId: 'A', result: Buffer.alloc(1025).toString('base64') });
  expect(tooBig).toMatchObject({ status: 400, body: { message: 'result: is 1025 bytes; the limit is 1024 (limits.maxPayloadBytes)' } });
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.LOCKED);

  expect(await curl('/v1/external-tasks/x/frobnicate', {})).toMatchObject({ status: 404, body: { code: 'ZD_UNKNOWN_ROUTE' } });
  expect(await curl(FETCH, undefined, { method: 'GET' })).toMatchObject({ status: 405, body: { code: 'ZD_METHOD_NOT_ALLOWED' } });
});

it('fails with retries, extends and unlocks', async () => {
  const id = await enqueued();
  await fetchOne('A', { lockDurationMs: 2000 });
  const ext = await curl(`/v1/external-tasks/${id}/extend-lock`, { workerId: 'A', lockDurationMs: 60_000 });
  expect(ext.status).toBe(200);
  expect(ext.body.lockUntilMs).toBeGreaterThan(Date.now() + 50_000);
  expect(await curl(`/v1/external-tasks/${id}/unlock`, { workerId: 'A' })).toMatchObject({ status: 200, body: {} });
  await fetchOne('B');
  const failed = await curl(`/v1/external-tasks/${id}/failure`, { workerId: 'B', failure: { message: 'later' }, retries: 2, retryTimeoutMs: 300 });
  expect(failed).toMatchObject({ status: 200, body: { terminal: false } });
  const again = await curl(FETCH, { workerId: 'C', topics: [topic], waitMs: 3000 });
  expect((again.body.tasks as { taskId: string; retries: number; attempt: number }[])[0]).toMatchObject({ taskId: id, retries: 2, attempt: 1 });
});

it('long-polls: a waiting curl is woken by an enqueue', async () => {
  const pending = curl(FETCH, { workerId: 'A', topics: [topic], waitMs: 10_000 });
  await sleep(300);
  const id = await enqueued();
  const r = await pending;
  expect(r.status).toBe(200);
  expect((r.body.tasks as { taskId: string }[]).map((x) => x.taskId)).toEqual([id]);
});

it('unlocks at once the tasks claimed for a response that could not be written', async () => {
  const surface = t.node.externalTasks!;
  const id = await enqueued();
  let hookDone!: () => void;
  const returned = new Promise<void>((r) => (hookDone = r));
  surface.hooks.afterClaim = async () => {
    await sleep(800); // curl gives up after 0.3s: the socket is gone when we answer
    hookDone();
  };
  const r = await curl(FETCH, { workerId: 'A', topics: [topic], waitMs: 5000, lockDurationMs: 60_000 }, { maxTime: 0.3 });
  expect(r.status).toBe(0);
  await returned;
  surface.hooks.afterClaim = undefined;
  // Waited for, not slept on (the unlock follows the failed write): well inside the 60-s lock either way.
  await waitFor(async () => (await t.matching.getTask({ task_id: id })).task!.state === pb.TaskState.QUEUED,
    { timeoutMs: 5000, description: 'the task unlocked' });
});
