/**
 * DESIGN §7: ExtendLock moves the lock itself, not only the answer and the
 * queue entry. Past the lock taken at the fetch, an extended lock is still
 * its worker's: its Complete is recorded, no other fetch claims the task, and
 * no stream slot starts it (a second run of work a fetch worker still holds).
 */
import { pb } from '../../src/wire';
import { fetchClients, sleep, step, topic, type ExternalClient } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let external: ExternalClient;
const open: RawSlot[] = [];

afterEach(async () => {
  for (const s of open.splice(0)) s.reset();
  await t?.close();
});

it('an extended lock holds past the lock taken at the fetch: no slot or other fetch gets the task, and its worker completes it', async () => {
  t = await startTestNode(redis.url, uniquePrefix('extendholds'));
  ({ external } = fetchClients(t));
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 300 });
  expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
  const fetchedUntil = Number(got.tasks[0]!.lock_until_ms);
  const ext = await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 60_000 });
  expect(Number(ext.lock_until_ms)).toBeGreaterThan(fetchedUntil + 50_000);
  // An idle slot of the flow type, there before the first lock would have lapsed.
  const s = openSlot(t.worker, registerFrame());
  open.push(s);
  await s.nextOf('registered');
  const taken = s.nextOf('step_task', fetchedUntil - Date.now() + 1000).then((f) => f.step_task!.task_id, () => undefined);
  await sleep(Math.max(0, fetchedUntil - Date.now()) + 100);
  expect((await external.fetchAndLock({ worker_id: 'B', topics: [topic()], wait_ms: 1 })).tasks).toEqual([]);
  expect(await taken).toBeUndefined();
  expect((await t.matching.getTask({ task_id: id })).task).toMatchObject({ state: pb.TaskState.LOCKED, app_worker_id: 'A' });
  await external.complete({ task_id: id, worker_id: 'A', result: Buffer.from('done'), has_result: true });
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.DONE);
});
