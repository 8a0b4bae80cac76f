/**
 * close() of the SDK clients ends the calls in flight, against a real node:
 * a closed FetchClient's long poll must not go on to lock a task nobody will
 * see, and a Client's long polls settle at once instead of at their wait.
 */
import { Client, FetchClient } from '../../src';
import { pb } from '../../src/wire';
import { step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('close'));
});
afterEach(async () => {
  await t.close();
});

/** How a call settled and how long after `from`. */
async function settled(call: Promise<unknown>, from: number): Promise<{ ms: number; error: unknown }> {
  const error = await call.then(() => null, (e: unknown) => e);
  return { ms: Date.now() - from, error };
}

it('FetchClient.close() ends a waiting fetchAndLock, which then locks nothing', async () => {
  const fetch = new FetchClient({ address: t.node.apiAddress, workerId: 'A' });
  const topics = [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }];
  const polling = fetch.fetchAndLock({ topics, waitMs: 3000 });
  await sleep(200);
  const closedAt = Date.now();
  fetch.close();
  await sleep(100); // let the cancel reach the node
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const r = await settled(polling, closedAt);
  await sleep(300); // a poll still waiting at the node would have locked it by now
  expect(pb.TaskState[(await t.matching.getTask({ task_id: id })).task!.state ?? 0]).toBe('QUEUED');
  expect(String(r.error)).toContain('closed');
  expect(r.ms).toBeLessThan(1500);
});

it('Client.close() ends a waiting waitOutcome and consumeOutcomes', async () => {
  const client = new Client({ address: t.node.apiAddress });
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const waiting = client.waitOutcome(id, { waitMs: 3000 });
  const consuming = client.consumeOutcomes({ group: 'engine', consumer: 'c', waitMs: 3000 });
  await sleep(200);
  const closedAt = Date.now();
  client.close();
  const [w, c] = await Promise.all([settled(waiting, closedAt), settled(consuming, closedAt)]);
  expect(w.ms).toBeLessThan(1500);
  expect(c.ms).toBeLessThan(1500);
  expect(String(w.error)).toContain('closed');
  expect(String(c.error)).toContain('closed');
});
