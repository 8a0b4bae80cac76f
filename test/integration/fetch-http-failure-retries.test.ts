/**
 * docs/fetch.md: `Fail(taskId, workerId, failure, retries, retryTimeout)`,
 * where `retries = 0` makes the task terminal. Over HTTP/JSON a body can leave
 * `retries` out, and a dropped field must not quietly take a value that ends
 * the task (the reason a misspelt `retryCount` is refused): a failure without
 * `retries` is a 400 naming the field, and the task stays locked by its worker.
 * So is a `failure` that is no object: read as an empty one, the task would be
 * retried with no message at all.
 */
import { pb } from '../../src/wire';
import { step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('httpfailretries'));
});
afterEach(() => t.close());

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://${t.node.httpAddress}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it('refuses a failure that leaves out retries, naming it, and leaves the task locked by its worker', async () => {
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await post('/v1/external-tasks/fetch-and-lock', {
    workerId: 'A', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1,
  });
  expect((got.body.tasks as { taskId: string }[]).map((x) => x.taskId)).toEqual([id]);

  for (const body of [
    { workerId: 'A', failure: { message: 'upstream 503' }, retryTimeoutMs: 1000 },
    { workerId: 'A', failure: { message: 'upstream 503' }, retries: null },
    { workerId: 'A', failure: { message: 'upstream 503' }, retries: '' },
  ]) {
    const r = await post(`/v1/external-tasks/${id}/failure`, body);
    expect(r).toMatchObject({ status: 400, body: { code: 'ZD_INVALID_ARGUMENT' } });
    expect(r.body.message).toMatch(/^retries: is required/);
  }
  // Nothing changed: neither terminal nor queued again, still A's to finish.
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.LOCKED);
  expect(await post(`/v1/external-tasks/${id}/failure`, { workerId: 'A', failure: { message: 'upstream 503' }, retries: 2 }))
    .toEqual({ status: 200, body: { terminal: false } });
});

it('refuses a failure that is no object (an array, a string), naming it, and leaves the task locked by its worker', async () => {
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  await post('/v1/external-tasks/fetch-and-lock', {
    workerId: 'A', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1,
  });
  for (const failure of [['upstream 503', 'Io'], 'upstream 503']) {
    const r = await post(`/v1/external-tasks/${id}/failure`, { workerId: 'A', failure, retries: 2 });
    expect(r).toMatchObject({ status: 400, body: { code: 'ZD_INVALID_ARGUMENT' } });
    expect(r.body.message).toMatch(/^failure: must be an object/);
  }
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.LOCKED);
});
