/**
 * DESIGN §7, docs/fetch.md "the four verdicts": a task whose Complete
 * wrote its outcome and stopped before the delete has ended. It is re-offered
 * (the duplicate completion is absorbed by its idempotency key), but the other
 * worker mutations on it — Fail, ExtendLock, Unlock — must answer TERMINAL, not
 * succeed: a Fail that "worked" turned a COMPLETED task terminal and listed it
 * for operators (whose Abandon then answered NOT_FOUND), or queued it again
 * for more duplicate work.
 */
import { Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { fetchClients, failureOf, step, topic, type ExternalClient, type OperatorClient } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let external: ExternalClient;
let operator: OperatorClient;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('leftover'));
  ({ external, operator } = fetchClients(t));
});
afterEach(() => t.close());

const fetch = (over: Partial<pb.IFetchAndLockRequest> = {}) =>
  external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, ...over });

/** A's Complete writes the outcome and stops before the delete; once its held lock lapses, B fetches the leftover. */
async function leftoverHeldByB(): Promise<string> {
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  await fetch({ lock_duration_ms: 300 });
  const store = t.node.externalTasks!.store;
  store.faults.completeAfterOutcome = true;
  await failureOf(external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('r1'), has_result: true, idempotency_key: 'k' }));
  store.faults.completeAfterOutcome = false;
  const again = await fetch({ worker_id: 'B', wait_ms: 3000, lock_duration_ms: 10_000 });
  expect(again.tasks.map((x) => x.task_id)).toEqual([id]);
  return id;
}

const calls: [string, (id: string) => Promise<unknown>][] = [
  ['Fail with retries 0', (id) => external.fail({ task_id: id, worker_id: 'B', failure: { message: 'm' }, retries: 0 })],
  ['Fail with retries left', (id) => external.fail({ task_id: id, worker_id: 'B', failure: { message: 'm' }, retries: 2 })],
  ['ExtendLock', (id) => external.extendLock({ task_id: id, worker_id: 'B', lock_duration_ms: 60_000 })],
  ['Unlock', (id) => external.unlock({ task_id: id, worker_id: 'B' })],
];

it.each(calls)('%s on a task that already has its outcome answers TERMINAL, and the task stays ended', async (_name, call) => {
  const id = await leftoverHeldByB();
  const err = await failureOf(call(id));
  expect({ status: err.code, code: err.details.split(':')[0] }).toEqual({ status: Status.FAILED_PRECONDITION, code: 'ZD_TERMINAL' });
  // Not a terminal task for operators, not queued for more work: ended, with its one COMPLETED outcome.
  expect((await operator.listTerminalTasks({ tenant: 'acme' })).tasks).toEqual([]);
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.DONE);
  expect((await fetch({ worker_id: 'C', lock_duration_ms: 10_000 })).tasks).toEqual([]);
  const o = (await t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
  expect(await redis.command('XLEN', `${t.config.redis.keyPrefix}:{${id.split('-')[0]}}:out`)).toBe(1);
});
