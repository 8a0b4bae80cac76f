/**
 * The HTTP/JSON fetch routes (and their gRPC twins) with auth on, against a real
 * node and redis-server: the answers a foreign tenant's worker gets must not tell it
 * which task ids exist (docs/security.md: "a task of a tenant the token does
 * not cover answers ZD_TASK_NOT_FOUND, so task ids cannot be probed"), and a
 * caller that goes away mid-body is no server error.
 */
import net from 'node:net';
import { createClient } from 'nice-grpc';
import { ExternalTaskServiceDefinition, MatchingServiceDefinition, pb } from '../../src/wire';
import { failureOf } from '../helpers/fetch';
import { bearer as md, startAuthNode, type AuthNode } from '../helpers/auth-node';
import { useEmbeddedRedis } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
const TOK = {
  workerA: 'worker-acme-0123456789', workerB: 'worker-globex-0123456789', clientB: 'client-globex-0123456789',
};
let t: AuthNode;

beforeAll(async () => {
  t = await startAuthNode(redis.url, 'httpauth', {
    workers: [{ token: TOK.workerA, tenants: ['acme'] }, { token: TOK.workerB, tenants: ['globex'] }],
    clients: [{ token: TOK.clientB, tenants: ['globex'] }],
  }, { 'limits.maxPayloadBytes': 1024 });
});
afterAll(() => t?.close());

const matching = () => createClient(MatchingServiceDefinition, t.channel);

async function http(pathname: string, body: unknown, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://${t.node.httpAddress}${pathname}`, {
    method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it('answers a bad field the same for a foreign task as for a missing one: task ids cannot be probed', async () => {
  const { task_id } = await matching().enqueueStep({
    step: { tenant: 'globex', flow_id: 'probe', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in') },
  }, md(TOK.clientB));
  const fetched = await http('/v1/external-tasks/fetch-and-lock', { workerId: 'b', topics: [{ tenant: 'globex', flowType: 'order', stepType: 'charge' }], waitMs: 2000 }, TOK.workerB);
  expect((fetched.body.tasks as { taskId: string }[]).map((x) => x.taskId)).toEqual([task_id]);
  const missing = '3-0123456789abcdef01234567';
  const cases: [string, Record<string, unknown>][] = [
    ['extend-lock', { workerId: 'b', lockDurationMs: 600_001 }],
    ['complete', { workerId: 'b', result: 'not base64!' }],
    ['complete', { workerId: 'b', result: Buffer.alloc(1025).toString('base64') }],
    ['complete', { workerId: 'b', idempotencyKey: 'bad\u0001key' }],
    ['failure', { workerId: 'b', retries: -1 }],
    ['failure', { workerId: 'b', failure: { message: 42 }, retries: 1 }],
    ['failure', { workerId: 'b', failure: 'oops', retries: 1 }],
  ];
  const answers = [];
  for (const [route, body] of cases) {
    const foreign = await http(`/v1/external-tasks/${task_id}/${route}`, body, TOK.workerA);
    const none = await http(`/v1/external-tasks/${missing}/${route}`, body, TOK.workerA);
    answers.push({ route, fields: Object.keys(body).join(','), foreign: [foreign.status, foreign.body.code], missing: [none.status, none.body.code] });
  }
  // One answer for both (the field's error, as the gRPC surface gives): whether the foreign id exists stays unknown.
  expect(answers.filter((a) => a.foreign[0] !== a.missing[0] || a.foreign[1] !== a.missing[1])).toEqual([]);
  expect(answers.every((a) => a.foreign[0] === 400 && a.foreign[1] === 'ZD_INVALID_ARGUMENT')).toBe(true);
  // Nothing changed: still locked by b, who completes it.
  expect((await matching().getTask({ task_id }, md(TOK.clientB))).task?.state).toBe(pb.TaskState.LOCKED);
  expect((await http(`/v1/external-tasks/${task_id}/complete`, { workerId: 'b' }, TOK.workerB)).status).toBe(200);
});

it('over gRPC too, a bad field is answered the same for a foreign task as for a missing one, and changes nothing', async () => {
  const { task_id } = await matching().enqueueStep({
    step: { tenant: 'globex', flow_id: 'probe-grpc', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in') },
  }, md(TOK.clientB));
  const external = createClient(ExternalTaskServiceDefinition, t.channel);
  const fetched = await external.fetchAndLock({ worker_id: 'b', topics: [{ tenant: 'globex', flow_type: 'order', step_type: 'charge' }], wait_ms: 2000 }, md(TOK.workerB));
  expect(fetched.tasks.map((x) => x.task_id)).toEqual([task_id]);
  const missing = '3-0123456789abcdef01234567';
  const cases: [string, (id: string) => Promise<unknown>][] = [
    ['extendLock lock_duration_ms', (id) => external.extendLock({ task_id: id, worker_id: 'b', lock_duration_ms: 600_001 }, md(TOK.workerA))],
    ['complete idempotency_key', (id) => external.complete({ task_id: id, worker_id: 'b', idempotency_key: 'bad\u0001key' }, md(TOK.workerA))],
    ['complete has_result', (id) => external.complete({ task_id: id, worker_id: 'b', result: Buffer.from('r') }, md(TOK.workerA))],
    ['fail retries', (id) => external.fail({ task_id: id, worker_id: 'b', failure: { message: 'm' }, retries: -1 }, md(TOK.workerA))],
    ['fail retry_timeout_ms', (id) => external.fail({ task_id: id, worker_id: 'b', retries: 1, retry_timeout_ms: 366 * 86_400_000 + 1 }, md(TOK.workerA))],
    ['fail failure.non_retryable', (id) => external.fail({ task_id: id, worker_id: 'b', failure: { message: 'm', non_retryable: true }, retries: 1 }, md(TOK.workerA))],
  ];
  const answers = [];
  for (const [what, call] of cases) {
    const foreign = await failureOf(call(task_id));
    const none = await failureOf(call(missing));
    answers.push({ what, foreign: foreign.details.split(':')[0], missing: none.details.split(':')[0] });
  }
  expect(answers.filter((a) => a.foreign !== a.missing)).toEqual([]);
  expect(answers.every((a) => a.foreign === 'ZD_INVALID_ARGUMENT')).toBe(true);
  expect((await matching().getTask({ task_id }, md(TOK.clientB))).task?.state).toBe(pb.TaskState.LOCKED);
  await external.complete({ task_id, worker_id: 'b' }, md(TOK.workerB));
});

it('a caller that goes away in the middle of its body is no server error (no ERROR log), and the node serves on', async () => {
  const [host, port] = t.node.httpAddress.split(':');
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve, reject) => {
      const s = net.connect(Number(port), host, () => {
        s.write(`POST /v1/external-tasks/fetch-and-lock HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOK.workerA}\r\n`
          + 'content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"workerId": "a", ');
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 100);
      });
      s.on('error', reject);
    });
  }
  await sleep(300); // the server sees the resets
  const errors = t.logs.filter((l) => Number(l.level) >= 50);
  expect(errors.map((l) => l.msg)).toEqual([]);
  const r = await http('/v1/external-tasks/fetch-and-lock', { workerId: 'a', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 }, TOK.workerA);
  expect([r.status, r.body]).toEqual([200, { tasks: [] }]);
});

it('answers a missing or unknown token with 401 and a Bearer challenge', async () => {
  const answers = [];
  for (const authorization of [undefined, 'Bearer not-a-known-token-at-all', `Bearer ${TOK.clientB}`]) {
    const res = await fetch(`http://${t.node.httpAddress}/v1/external-tasks/fetch-and-lock`, {
      method: 'POST', body: JSON.stringify({ workerId: 'a', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 }),
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    });
    answers.push([res.status, res.headers.get('www-authenticate'), ((await res.json()) as { code: string }).code]);
  }
  expect(answers).toEqual([
    [401, 'Bearer realm="zdmatch"', 'ZD_UNAUTHENTICATED'],
    [401, 'Bearer realm="zdmatch"', 'ZD_UNAUTHENTICATED'],
    // A known token of the wrong kind is authenticated: 403, no challenge.
    [403, null, 'ZD_WRONG_CREDENTIAL_KIND'],
  ]);
});
