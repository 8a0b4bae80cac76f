/**
 * docs/fetch.md "Two budgets that never meet": a fetch worker's Fail spends
 * only its own `retries`, fetchable again after `retry_timeout_ms`. Its
 * `failure` is the common Failure message, whose `non_retryable` and
 * `retry_after_ms` belong to the step budget of slot streams. Fail does not
 * read them, so one set is refused, named, rather than dropped: a worker that
 * marks a failure non-retryable must not see the task handed out again.
 */
import { Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { failureOf, fetchClients, step, topic, type ExternalClient } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let external: ExternalClient;

afterEach(() => t?.close());

it('refuses a Fail whose failure sets non_retryable or retry_after_ms, naming the field, and changes nothing', async () => {
  t = await startTestNode(redis.url, uniquePrefix('failfields'));
  ({ external } = fetchClients(t));
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  expect((await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1 })).tasks.map((x) => x.task_id)).toEqual([id]);

  const cases: [pb.IFailure, string][] = [
    [{ message: 'bad data', non_retryable: true }, 'failure.non_retryable'],
    [{ message: 'upstream 503', retry_after_ms: 5000 }, 'failure.retry_after_ms'],
  ];
  for (const [failure, field] of cases) {
    const err = await failureOf(external.fail({ task_id: id, worker_id: 'A', failure, retries: 3 }));
    expect(err.code).toBe(Status.INVALID_ARGUMENT);
    expect(err.details).toMatch(new RegExp(`^ZD_INVALID_ARGUMENT: ${field.replace('.', '\\.')}: `));
  }
  // Still locked by A: no retry was queued, nothing is fetchable.
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.LOCKED);
  expect((await external.fetchAndLock({ worker_id: 'B', topics: [topic()], wait_ms: 1 })).tasks).toEqual([]);
  // A Complete with a result but has_result unset is refused too: taken, its result would be dropped.
  const unmarked = await failureOf(external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('out') }));
  expect(unmarked.code).toBe(Status.INVALID_ARGUMENT);
  expect(unmarked.details).toMatch(/^ZD_INVALID_ARGUMENT: has_result: /);
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.LOCKED);
  expect((await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'bad data' }, retries: 0 })).terminal).toBe(true);
});
