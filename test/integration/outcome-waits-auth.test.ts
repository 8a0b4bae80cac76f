/**
 * WaitOutcome and ConsumeOutcomes with auth on, against a real node and
 * redis-server: a full long-poll gate answers a foreign task id as it answers
 * a missing one (docs/security.md: task ids cannot be probed), and a
 * tenant's outcome group skipping another tenant's backlog still answers at
 * its wait_ms instead of reading the whole backlog in one call.
 */
import { ClientError, Status, createClient } from 'nice-grpc';
import { ExternalTaskServiceDefinition, MatchingServiceDefinition, type pb } from '../../src/wire';
import { bearer as md, startAuthNode, type AuthNode } from '../helpers/auth-node';
import { useEmbeddedRedis } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
const TOK = {
  clientA: 'client-acme-0123456789', clientB: 'client-globex-0123456789',
  workerA: 'worker-acme-0123456789', workerB: 'worker-globex-0123456789',
};
let t: AuthNode;

beforeAll(async () => {
  t = await startAuthNode(redis.url, 'outauth', {
    workers: [{ token: TOK.workerA, tenants: ['acme'] }, { token: TOK.workerB, tenants: ['globex'] }],
    clients: [{ token: TOK.clientA, tenants: ['acme'] }, { token: TOK.clientB, tenants: ['globex'] }],
  }, { 'cluster.partitions': 1, 'limits.maxLongPolls': 1 });
});
afterAll(() => t?.close());

const matching = () => createClient(MatchingServiceDefinition, t.channel);
const external = () => createClient(ExternalTaskServiceDefinition, t.channel);
const step = (tenant: string, flowId: string): pb.IStepSpec => ({
  tenant, flow_id: flowId, flow_type: 'order', step_type: 'charge', step_execution_id: 's1', input: Buffer.from('in'),
});

async function failure(call: Promise<unknown>): Promise<ClientError> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof ClientError)) throw new Error(`expected a ClientError, got ${String(err)}`);
  return err;
}

/** Enqueues one Step per flow id and completes each through the fetch surface, in order. */
async function completeSteps(tenant: string, flowIds: string[], client: string, worker: string): Promise<string[]> {
  const { results } = await matching().enqueueSteps({ steps: flowIds.map((f) => step(tenant, f)) }, md(client));
  const ids = results.map((r) => String(r.task_id));
  const pending = new Set(ids);
  while (pending.size > 0) {
    const { tasks } = await external().fetchAndLock({
      worker_id: 'w', topics: [{ tenant, flow_type: 'order', step_type: 'charge' }], max_tasks: 100, wait_ms: 500,
    }, md(worker));
    for (const id of ids.filter((i) => tasks.some((t) => t.task_id === i))) {
      await external().complete({ task_id: id, worker_id: 'w' }, md(worker));
      pending.delete(id);
    }
  }
  return ids;
}

it('with the long-poll gate full, a foreign task id answers as a missing one does', async () => {
  const [foreign] = (await matching().enqueueSteps({ steps: [step('globex', 'gate')] }, md(TOK.clientB))).results.map((r) => r.task_id);
  // globex's own wait holds the only place.
  const holder = matching().waitOutcome({ task_id: foreign, wait_ms: 1500 }, md(TOK.clientB));
  await sleep(150);
  const missing = '0-0123456789abcdef01234567';
  const answers = [];
  for (const id of [foreign!, missing]) {
    const err = await failure(matching().waitOutcome({ task_id: id, wait_ms: 500 }, md(TOK.clientA)));
    answers.push([Status[err.code], err.details.replace(id, '<id>')]);
  }
  expect(answers[0]).toEqual(answers[1]);
  expect(answers[0]![0]).toBe('RESOURCE_EXHAUSTED');
  expect((await holder).outcome).toBeFalsy();
  // With the gate free, both are NOT_FOUND for acme, and globex still sees its own task.
  for (const id of [foreign!, missing]) {
    const err = await failure(matching().waitOutcome({ task_id: id, wait_ms: 100 }, md(TOK.clientA)));
    expect([Status[err.code], err.details]).toEqual(['NOT_FOUND', expect.stringContaining('ZD_TASK_NOT_FOUND')]);
  }
  expect((await matching().waitOutcome({ task_id: foreign, wait_ms: 0 }, md(TOK.clientB))).outcome).toBeFalsy();
});

it("a tenant's group skips another tenant's backlog over several calls, each answering by its wait_ms", async () => {
  const consume = (ack: string[] = []) =>
    matching().consumeOutcomes({ tenant: 'acme', group: 'engine', consumer: 'c', max_count: 1, wait_ms: 0, ack }, md(TOK.clientA));
  expect((await consume()).outcomes).toEqual([]); // creates the group before the outcomes exist
  const backlog = 20;
  await completeSteps('globex', Array.from({ length: backlog }, (_, i) => `g${i}`), TOK.clientB, TOK.workerB);
  const [own] = await completeSteps('acme', ['a0'], TOK.clientA, TOK.workerA);
  // wait_ms 0: one read of one entry per call, never the whole foreign backlog at once.
  const answers: number[] = [];
  let got: pb.IOutcome[] = [];
  while (got.length === 0 && answers.length <= backlog + 1) {
    got = (await consume()).outcomes;
    answers.push(got.length);
  }
  expect(got.map((o) => o.task_id)).toEqual([own]);
  expect(answers.length).toBeGreaterThan(backlog / 2);
  expect(answers.slice(0, -1).every((n) => n === 0)).toBe(true);
});
