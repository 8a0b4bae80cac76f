/**
 * Issue 7: bearer tokens bound to tenants on every surface (gRPC streams,
 * MatchingService, ExternalTaskService, OperatorService, HTTP fetch routes),
 * token rotation by rewriting the files, fail-closed reloads, and the SDKs'
 * credentials (a failing credential never reaches the server).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ClientError, Metadata, Status, createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { ZdNode } from '../../src/node/node';
import { Client } from '../../src/sdk/client';
import { CredentialError } from '../../src/sdk/common';
import { FetchClient } from '../../src/sdk/fetch';
import { Worker } from '../../src/sdk/worker';
import {
  ExternalTaskServiceDefinition, MatchingServiceDefinition, OperatorServiceDefinition, WorkerTaskServiceDefinition, pb,
} from '../../src/wire';
import { Channel } from '../../src/util/channel';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { captureLogs } from '../helpers/logs';
import { startTestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

const TOK = {
  workerA: 'worker-acme-0123456789',
  workerB: 'worker-globex-0123456789',
  clientA: 'client-acme-0123456789',
  clientB: 'client-globex-0123456789',
  clientAll: 'client-all-tenants-0123456789',
  operator: 'operator-0123456789abcdef',
};
const sha = (t: string) => createHash('sha256').update(t).digest('hex');

function workerFile(extra = ''): string {
  return `tokens:
  - { name: acme-workers, sha256: ${sha(TOK.workerA)}, tenants: [acme] }
  - { name: globex-workers, token: "${TOK.workerB}", tenants: [globex] }
${extra}`;
}
function clientFile(extra = ''): string {
  return `tokens:
  - { name: acme-engine, sha256: ${sha(TOK.clientA)}, tenants: [acme] }
  - { name: globex-engine, token: "${TOK.clientB}", tenants: [globex] }
  - { name: all, token: "${TOK.clientAll}", tenants: ["*"] }
  - { name: ops, token: "${TOK.operator}", operator: true }
${extra}`;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zd-sec-'));
const workerTokens = path.join(dir, 'workers.yaml');
const clientTokens = path.join(dir, 'clients.yaml');
const { logger, lines: logLines } = captureLogs('info');
let node: ZdNode;
let channel: ReturnType<typeof createChannel>;
const md = (token?: string) => (token ? Metadata({ authorization: `Bearer ${token}` }) : Metadata());

/** Writes a file by rename, as a secrets manager rotates it. */
function rotate(file: string, text: string): void {
  const tmp = `${file}.tmp-${Math.random().toString(16).slice(2)}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

beforeAll(async () => {
  fs.writeFileSync(workerTokens, workerFile());
  fs.writeFileSync(clientTokens, clientFile());
  ({ node, channel } = await startTestNode(redis.url, uniquePrefix('sec'), {
    'cluster.partitions': 4, 'drain.timeout': '1s',
    'auth.enabled': true, 'auth.workerTokensFile': workerTokens, 'auth.clientTokensFile': clientTokens, 'auth.reloadInterval': '200ms',
    'matching.syncMatchWait': '50ms', 'fetch.wait': '100ms',
  }, { logger }));
});
afterAll(async () => {
  channel?.close();
  await node?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const matching = () => createClient(MatchingServiceDefinition, channel);
const external = () => createClient(ExternalTaskServiceDefinition, channel);
const operator = () => createClient(OperatorServiceDefinition, channel);
const workers = () => createClient(WorkerTaskServiceDefinition, channel);

async function failure(call: Promise<unknown>): Promise<ClientError> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof ClientError)) throw new Error(`expected a ClientError, got ${String(err)}`);
  return err;
}
async function expectCode(call: Promise<unknown>, status: Status, code: string): Promise<void> {
  const err = await failure(call);
  expect([Status[err.code], err.details]).toEqual([Status[status], expect.stringContaining(code)]);
}

let seq = 0;
const stepOf = (tenant: string, over: Partial<pb.IStepSpec> = {}): pb.IStepSpec => ({
  tenant, flow_id: `f${++seq}`, flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in'), ...over,
});
const topicOf = (tenant: string) => ({ tenant, flow_type: 'order', step_type: 'charge' });

async function http(pathname: string, body: unknown, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://${node.httpAddress}${pathname}`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('authentication', () => {
  it('answers the gRPC health service without a token (probes send none)', async () => {
    const health = createClient(HealthDefinition, channel);
    expect((await health.check({ service: '' })).status).toBe(1); // SERVING
  });

  it('refuses every surface without a token, or with an unknown one', async () => {
    for (const token of [undefined, 'not-a-known-token-at-all']) {
      const metadata = md(token);
      await expectCode(matching().enqueueStep({ step: stepOf('acme') }, { metadata }), Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED');
      await expectCode(matching().describeCluster({}, { metadata }), Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED');
      await expectCode(external().fetchAndLock({ worker_id: 'w', topics: [topicOf('acme')], wait_ms: 1 }, { metadata }), Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED');
      await expectCode(operator().listTerminalTasks({ tenant: 'acme' }, { metadata }), Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED');
      const slot = openSlot(workers(), registerFrame({ tenant: 'acme' }), metadata);
      await expectCode(slot.next(), Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED');
      const r = await http('/v1/external-tasks/fetch-and-lock', { workerId: 'w', topics: [topicOf('acme')] }, token);
      expect([r.status, r.body.code]).toEqual([401, 'ZD_UNAUTHENTICATED']);
    }
  });

  it('keeps the token kinds apart: a worker token is no client token and vice versa', async () => {
    await expectCode(matching().enqueueStep({ step: stepOf('acme') }, { metadata: md(TOK.workerA) }), Status.PERMISSION_DENIED, 'ZD_WRONG_CREDENTIAL_KIND');
    await expectCode(external().fetchAndLock({ worker_id: 'w', topics: [topicOf('acme')], wait_ms: 1 }, { metadata: md(TOK.clientA) }), Status.PERMISSION_DENIED, 'ZD_WRONG_CREDENTIAL_KIND');
    const r = await http('/v1/external-tasks/fetch-and-lock', { workerId: 'w', topics: [topicOf('acme')] }, TOK.clientAll);
    expect([r.status, r.body.code]).toEqual([403, 'ZD_WRONG_CREDENTIAL_KIND']);
  });

  it('gives OperatorService, DescribeCluster and the outcome group methods to the operator scope only', async () => {
    for (const t of [TOK.clientA, TOK.clientAll]) {
      await expectCode(matching().describeCluster({}, { metadata: md(t) }), Status.PERMISSION_DENIED, 'ZD_OPERATOR_SCOPE_REQUIRED');
      await expectCode(matching().listOutcomeGroups({}, { metadata: md(t) }), Status.PERMISSION_DENIED, 'ZD_OPERATOR_SCOPE_REQUIRED');
      await expectCode(matching().dropOutcomeGroup({ group: 'g', force: true }, { metadata: md(t) }), Status.PERMISSION_DENIED, 'ZD_OPERATOR_SCOPE_REQUIRED');
      await expectCode(operator().listTerminalTasks({ tenant: 'acme' }, { metadata: md(t) }), Status.PERMISSION_DENIED, 'ZD_OPERATOR_SCOPE_REQUIRED');
    }
    await expectCode(operator().listTerminalTasks({ tenant: 'acme' }, { metadata: md(TOK.workerA) }), Status.PERMISSION_DENIED, 'ZD_WRONG_CREDENTIAL_KIND');
    expect((await matching().describeCluster({}, { metadata: md(TOK.operator) })).partitions).toBe(4);
    expect((await matching().listOutcomeGroups({}, { metadata: md(TOK.operator) })).groups).toBeInstanceOf(Array);
    expect((await operator().listTerminalTasks({ tenant: 'globex' }, { metadata: md(TOK.operator) })).tasks).toEqual([]);
  });

  it('gives the operator scope every tenant for the operator methods only: an operator token without tenants acts for none elsewhere', async () => {
    const metadata = md(TOK.operator);
    await expectCode(matching().enqueueStep({ step: stepOf('acme') }, { metadata }), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    await expectCode(matching().describeQueues({ tenant: 'acme' }, { metadata }), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    await expectCode(matching().cancelFlow({ tenant: 'globex', flow_id: 'f' }, { metadata }), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    // an all-tenants outcome group needs a token covering every tenant, which the operator scope is not
    await expectCode(matching().consumeOutcomes({ group: 'ops-all', consumer: 'c', max_count: 1, wait_ms: 1 }, { metadata }), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    const probe = stepOf('globex', { flow_type: 'ops-probe' });
    const { task_id } = await matching().enqueueStep({ step: probe }, { metadata: md(TOK.clientB) });
    await expectCode(matching().getTask({ task_id }, { metadata }), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    await matching().cancelFlow({ tenant: 'globex', flow_id: probe.flow_id! }, { metadata: md(TOK.clientB) });
  });
});

describe('tenant isolation: a token of acme cannot act for globex', () => {
  const A = () => ({ metadata: md(TOK.clientA) });
  const B = () => ({ metadata: md(TOK.clientB) });

  it('WorkerTaskService: cannot register a worker for globex; can for acme', async () => {
    const foreign = openSlot(workers(), registerFrame({ tenant: 'globex' }), md(TOK.workerA));
    await expectCode(foreign.next(), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    const own = openSlot(workers(), registerFrame({ tenant: 'acme' }), md(TOK.workerA));
    expect((await own.next()).frame).toBe('registered');
    own.reset();
  });

  it('MatchingService: cannot enqueue to globex (one foreign Step refuses the whole batch), describe its queues, cancel its flows or invoke its RPCs', async () => {
    await expectCode(matching().enqueueStep({ step: stepOf('globex') }, A()), Status.PERMISSION_DENIED, 'tenant globex');
    await expectCode(matching().enqueueSteps({ steps: [stepOf('acme'), stepOf('globex')] }, A()), Status.PERMISSION_DENIED, 'tenant globex');
    expect((await matching().describeQueues({ tenant: 'acme' }, A())).queues).toEqual([]);
    await expectCode(matching().describeQueues({ tenant: 'globex' }, A()), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    await expectCode(matching().cancelFlow({ tenant: 'globex', flow_id: 'x' }, A()), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    await expectCode(matching().invokeRpc({ tenant: 'globex', flow_id: 'x', flow_type: 'order', rpc_name: 'peek', timeout_ms: 100 }, A()), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    // the batch wrote nothing
    expect((await matching().describeQueues({ tenant: 'acme' }, A())).queues).toEqual([]);
  });

  it('GetTask and WaitOutcome: a task of globex is NOT_FOUND for acme (no probing of ids)', async () => {
    const { task_id } = await matching().enqueueStep({ step: stepOf('globex', { flow_type: 'probe' }) }, B());
    expect((await matching().getTask({ task_id }, B())).task?.tenant).toBe('globex');
    await expectCode(matching().getTask({ task_id }, A()), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    await expectCode(matching().waitOutcome({ task_id, wait_ms: 50 }, A()), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    await matching().cancelFlow({ tenant: 'globex', flow_id: `f${seq}` }, B());
    // ended: the retained outcome is globex's too
    await expectCode(matching().getTask({ task_id }, A()), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    await expectCode(matching().waitOutcome({ task_id, wait_ms: 50 }, A()), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    expect((await matching().waitOutcome({ task_id, wait_ms: 50 }, B())).outcome?.status).toBe(pb.OutcomeStatus.CANCELLED);
  });

  it('fetch surface (gRPC and HTTP): cannot fetch globex topics, nor complete, fail, extend or unlock its tasks', async () => {
    const ft = 'fetchiso';
    const { task_id } = await matching().enqueueStep({ step: stepOf('globex', { flow_type: ft }) }, B());
    const wB = { metadata: md(TOK.workerB) };
    const wA = { metadata: md(TOK.workerA) };
    await expectCode(external().fetchAndLock({ worker_id: 'a', topics: [{ tenant: 'globex', flow_type: ft, step_type: 'charge' }], wait_ms: 1 }, wA), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    const mixed = await http('/v1/external-tasks/fetch-and-lock', { workerId: 'a', topics: [{ tenant: 'acme', flowType: ft, stepType: 'charge' }, { tenant: 'globex', flowType: ft, stepType: 'charge' }], waitMs: 1 }, TOK.workerA);
    expect([mixed.status, mixed.body.code]).toEqual([403, 'ZD_PERMISSION_DENIED']);
    const got = await external().fetchAndLock({ worker_id: 'b', topics: [{ tenant: 'globex', flow_type: ft, step_type: 'charge' }], wait_ms: 2000 }, wB);
    expect(got.tasks.map((t) => t.task_id)).toEqual([task_id]);
    // acme's worker, even naming globex's worker id, cannot touch it
    await expectCode(external().complete({ task_id, worker_id: 'b' }, wA), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    await expectCode(external().fail({ task_id, worker_id: 'b', retries: 0 }, wA), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    await expectCode(external().extendLock({ task_id, worker_id: 'b', lock_duration_ms: 1000 }, wA), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    await expectCode(external().unlock({ task_id, worker_id: 'b' }, wA), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    for (const route of ['complete', 'failure', 'extend-lock', 'unlock']) {
      const r = await http(`/v1/external-tasks/${task_id}/${route}`, route === 'failure' ? { workerId: 'b', retries: 0 } : { workerId: 'b' }, TOK.workerA);
      expect([route, r.status, r.body.code]).toEqual([route, 404, 'ZD_TASK_NOT_FOUND']);
    }
    // untouched: still locked by b, who completes it
    expect((await matching().getTask({ task_id }, B())).task?.state).toBe(pb.TaskState.LOCKED);
    const done = await http(`/v1/external-tasks/${task_id}/complete`, { workerId: 'b', result: Buffer.from('ok').toString('base64') }, TOK.workerB);
    expect(done.status).toBe(200);
    // ended: its tenant is read from the retained outcome, so acme still cannot tell it from a missing task
    await expectCode(external().complete({ task_id, worker_id: 'b' }, wA), Status.NOT_FOUND, 'ZD_TASK_NOT_FOUND');
    const late = await http(`/v1/external-tasks/${task_id}/unlock`, { workerId: 'b' }, TOK.workerA);
    expect([late.status, late.body.code]).toEqual([404, 'ZD_TASK_NOT_FOUND']);
    await expectCode(external().unlock({ task_id, worker_id: 'b' }, wB), Status.FAILED_PRECONDITION, 'ZD_TERMINAL');
  });

  it('worker streams: a stream of acme cannot settle a task held by a globex stream', async () => {
    const ft = 'streamiso';
    const b = openSlot(workers(), registerFrame({ tenant: 'globex', flow_types: [ft], app_worker_id: 'wb' }), md(TOK.workerB));
    const a = openSlot(workers(), registerFrame({ tenant: 'acme', flow_types: [ft], app_worker_id: 'wa' }), md(TOK.workerA));
    expect((await b.next()).frame).toBe('registered');
    expect((await a.next()).frame).toBe('registered');
    const { task_id } = await matching().enqueueStep({ step: stepOf('globex', { flow_type: ft }) }, B());
    const task = (await b.nextOf('step_task')).step_task!;
    a.send({ step_result: { task_token: task.task_token, output: Buffer.from('stolen') } });
    const ack = (await a.nextOf('result_ack')).result_ack!;
    expect(ack.verdict).toBe(pb.ResultVerdict.REFUSED_STALE);
    expect((await matching().getTask({ task_id }, B())).task?.state).toBe(pb.TaskState.RUNNING);
    b.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await b.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    a.reset();
    b.reset();
  });

  it('outcomes: a group of acme reads acme outcomes only; an all-tenants group needs a token covering every tenant', async () => {
    await expectCode(matching().consumeOutcomes({ group: 'g', consumer: 'c' }, A()), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    await expectCode(matching().consumeOutcomes({ group: 'g', consumer: 'c', tenant: 'globex' }, A()), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    await expectCode(matching().ackOutcomes({ group: 'g', outcome_ids: ['0-1-1'], tenant: 'globex' }, A()), Status.PERMISSION_DENIED, 'ZD_PERMISSION_DENIED');
    // one outcome of each tenant (cancelled flows), plus those of the tests above
    const a1 = await matching().enqueueStep({ step: stepOf('acme', { flow_type: 'outs' }) }, A());
    await matching().cancelFlow({ tenant: 'acme', flow_id: `f${seq}` }, A());
    const b1 = await matching().enqueueStep({ step: stepOf('globex', { flow_type: 'outs' }) }, B());
    await matching().cancelFlow({ tenant: 'globex', flow_id: `f${seq}` }, B());
    const seenA = (await matching().consumeOutcomes({ group: 'engine', consumer: 'c', tenant: 'acme', max_count: 1000, wait_ms: 200 }, A())).outcomes;
    expect(seenA.length).toBeGreaterThan(0);
    expect(seenA.every((o) => o.tenant === 'acme')).toBe(true);
    expect(seenA.map((o) => o.task_id)).toContain(a1.task_id);
    // the same group name under globex is another group: it sees globex's outcomes, and acme's are not in it
    const seenB = (await matching().consumeOutcomes({ group: 'engine', consumer: 'c', tenant: 'globex', max_count: 1000, wait_ms: 200 }, B())).outcomes;
    expect(seenB.every((o) => o.tenant === 'globex')).toBe(true);
    expect(seenB.map((o) => o.task_id)).toContain(b1.task_id);
    const acked = await matching().ackOutcomes({ group: 'engine', tenant: 'acme', outcome_ids: seenA.map((o) => o.outcome_id ?? '') }, A());
    expect(acked.acked).toBe(seenA.length);
    // an all-tenants token reads every tenant without a tenant field
    const all = (await matching().consumeOutcomes({ group: 'everything', consumer: 'c', max_count: 1000 }, { metadata: md(TOK.clientAll) })).outcomes;
    expect(new Set(all.map((o) => o.tenant))).toEqual(new Set(['acme', 'globex']));
  });
});

describe('token rotation and reloads', () => {
  const ROT_OLD = 'rotating-old-token-000000';
  const ROT_NEW = 'rotating-new-token-111111';
  const W_OLD = 'worker-old-token-000000000';
  const W_NEW = 'worker-new-token-111111111';

  async function workerAccepted(token: string): Promise<boolean> {
    const err = await external().fetchAndLock({ worker_id: 'probe', topics: [{ tenant: 'acme', flow_type: 'probe', step_type: 'probe' }], wait_ms: 1 }, { metadata: md(token) })
      .then(() => undefined, (e: unknown) => e);
    if (err === undefined) return true;
    if (err instanceof ClientError && err.code === Status.UNAUTHENTICATED) return false;
    throw err;
  }

  async function accepted(token: string): Promise<boolean> {
    const err = await matching().describeQueues({ tenant: 'acme' }, { metadata: md(token) }).then(() => undefined, (e: unknown) => e);
    if (err === undefined) return true;
    if (err instanceof ClientError && err.code === Status.UNAUTHENTICATED) return false;
    throw err;
  }

  it('rewriting the file refuses the old token and accepts the new one, without a restart; open streams keep working until they reconnect', async () => {
    rotate(clientTokens, clientFile(`  - { name: rot, token: "${ROT_OLD}", tenants: [acme] }\n`));
    rotate(workerTokens, workerFile(`  - { name: wrot, token: "${W_OLD}", tenants: [acme] }\n`));
    await waitFor(() => accepted(ROT_OLD), { timeoutMs: 5000 });
    // each file reloads on its own: the worker token is in force too before a stream uses it
    await waitFor(() => workerAccepted(W_OLD), { timeoutMs: 5000 });
    // a stream opened with the old worker token
    const stream = openSlot(workers(), registerFrame({ tenant: 'acme', flow_types: ['rot'], app_worker_id: 'wrot' }), md(W_OLD));
    expect((await stream.next()).frame).toBe('registered');

    rotate(clientTokens, clientFile(`  - { name: rot, token: "${ROT_NEW}", tenants: [acme] }\n`));
    rotate(workerTokens, workerFile(`  - { name: wrot, token: "${W_NEW}", tenants: [acme] }\n`));
    await waitFor(async () => !(await accepted(ROT_OLD)), { timeoutMs: 5000 });
    expect(await accepted(ROT_NEW)).toBe(true);
    // each file reloads on its own: wait for the worker file too
    await waitFor(async () => !(await workerAccepted(W_OLD)), { timeoutMs: 5000 });
    // a new stream with the old token is refused …
    const late = openSlot(workers(), registerFrame({ tenant: 'acme', flow_types: ['rot'] }), md(W_OLD));
    await expectCode(late.next(), Status.UNAUTHENTICATED, 'ZD_UNAUTHENTICATED');
    // … the open one still gets work and completes it
    const { task_id } = await matching().enqueueStep({ step: stepOf('acme', { flow_type: 'rot' }) }, { metadata: md(ROT_NEW) });
    const task = (await stream.nextOf('step_task')).step_task!;
    expect(task.task_id).toBe(task_id);
    stream.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    expect((await stream.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
    stream.reset();
  });

  it('an enqueue stream checks every request: a foreign tenant is refused, and a revoked token stops it at its next request', async () => {
    const ROT = 'enqueue-stream-token-2222222';
    rotate(clientTokens, clientFile(`  - { name: es, token: "${ROT}", tenants: [acme] }\n`));
    await waitFor(() => accepted(ROT), { timeoutMs: 5000 });
    const requests = new Channel<pb.IEnqueueStreamRequest>();
    const answers = matching().enqueueStream(requests, { metadata: md(ROT) })[Symbol.asyncIterator]();
    const es = { flow_type: 'es-flow' }; // a flow type no other test reads
    requests.push({ request_id: 1, steps: [stepOf('acme', es)] });
    const ok = (await answers.next()).value as pb.EnqueueStreamResponse;
    expect(ok.error).toBeFalsy();
    expect(ok.results[0]!.created).toBe(true);
    requests.push({ request_id: 2, steps: [stepOf('acme', es), stepOf('globex', es)] });
    const foreign = (await answers.next()).value as pb.EnqueueStreamResponse;
    expect(foreign.error).toMatchObject({ code: Status.PERMISSION_DENIED });
    expect(foreign.error!.message).toMatch(/^ZD_PERMISSION_DENIED/);
    // revoked while the stream is open
    rotate(clientTokens, clientFile());
    await waitFor(async () => !(await accepted(ROT)), { timeoutMs: 5000 });
    requests.push({ request_id: 3, steps: [stepOf('acme', es)] });
    const revoked = (await answers.next()).value as pb.EnqueueStreamResponse;
    expect(Number(revoked.request_id)).toBe(3);
    expect(revoked.error).toMatchObject({ code: Status.UNAUTHENTICATED });
    requests.close();
    expect((await answers.next()).done).toBe(true);
  });

  it('an invalid or unreadable file fails closed with an ERROR log, and recovers once fixed', async () => {
    expect(await accepted(TOK.clientA)).toBe(true);
    rotate(clientTokens, 'tokens: [ { token: short } ]\n');
    await waitFor(async () => !(await accepted(TOK.clientA)), { timeoutMs: 5000 });
    expect(logLines.some((l) => l.level === 50 && String(l.msg).includes('client tokens file is unreadable or invalid'))).toBe(true);
    // workers are unaffected: their file is fine
    expect((await external().fetchAndLock({ worker_id: 'w', topics: [topicOf('acme')], wait_ms: 1 }, { metadata: md(TOK.workerA) })).tasks).toEqual([]);
    fs.rmSync(clientTokens);
    await waitFor(() => logLines.some((l) => l.level === 50 && l.err === 'ENOENT'), { timeoutMs: 5000 });
    expect(await accepted(TOK.clientA)).toBe(false);
    rotate(clientTokens, clientFile());
    await waitFor(() => accepted(TOK.clientA), { timeoutMs: 5000 });
  });
});

describe('SDK credentials', () => {
  /** A TCP server that counts connections and never answers: a call reaching it would show. */
  async function countingServer(): Promise<{ address: string; connections: () => number; close: () => Promise<void> }> {
    let n = 0;
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => {
      n++;
      sockets.add(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    return {
      address: `127.0.0.1:${port}`, connections: () => n,
      close: () => new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
    };
  }

  it('a failing credential fails the call before it contacts the server (Client, FetchClient, Worker)', async () => {
    const srv = await countingServer();
    try {
      const failing = [() => { throw new Error('vault down'); }, { file: path.join(dir, 'missing-token') }, async () => ''];
      for (const credential of failing) {
        const client = new Client({ address: srv.address, credential, defaultTimeoutMs: 2000 });
        await expect(client.describeQueues('acme')).rejects.toBeInstanceOf(CredentialError);
        client.close();
        const fc = new FetchClient({ address: srv.address, workerId: 'w', credential, defaultTimeoutMs: 2000 });
        await expect(fc.fetchAndLock({ topics: [{ tenant: 'acme', flowType: 'a', stepType: 'b' }] })).rejects.toBeInstanceOf(CredentialError);
        fc.close();
      }
      const worker = new Worker({
        address: srv.address, tenant: 'acme', maxConcurrentTasks: 2, credential: () => { throw new Error('vault down'); },
        flowTypes: { order: { steps: { charge: async () => 'x' } } }, logger: { debug() {}, info() {}, warn() {}, error() {} },
        reconnectBackoff: { initialMs: 20, maxMs: 50 },
      });
      const running = worker.start().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
      await worker.stop();
      await running;
      expect(srv.connections()).toBe(0);
    } finally {
      await srv.close();
    }
  });

  it('a { file } credential is re-read when the file changes (Client, FetchClient and Worker against the real node)', async () => {
    const file = path.join(dir, 'sdk-token');
    fs.writeFileSync(file, `${TOK.clientA}\n`);
    const client = new Client({ address: node.apiAddress, credential: { file } });
    try {
      expect(await client.describeQueues('acme')).toEqual(expect.any(Array));
      fs.writeFileSync(file, 'nonsense-token-9999999999\n');
      await expect(client.describeQueues('acme')).rejects.toMatchObject({ code: 'ZD_UNAUTHENTICATED' });
      fs.writeFileSync(file, TOK.clientAll);
      expect(await client.describeQueues('globex')).toEqual(expect.any(Array));
    } finally {
      client.close();
    }
    const wfile = path.join(dir, 'sdk-worker-token');
    fs.writeFileSync(wfile, TOK.workerA);
    const fc = new FetchClient({ address: node.apiAddress, workerId: 'w', credential: { file: wfile } });
    expect(await fc.fetchAndLock({ topics: [{ tenant: 'acme', flowType: 'sdkf', stepType: 'x' }], waitMs: 1 })).toEqual([]);
    fc.close();
    const worker = new Worker({
      address: node.apiAddress, tenant: 'acme', maxConcurrentTasks: 1, credential: { file: wfile },
      flowTypes: { sdkw: { steps: { charge: async () => 'ok' } } }, logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const running = worker.start();
    await worker.waitPullRegistered();
    await worker.stop();
    await running;
  });
});
