/**
 * DESIGN §6–§7, docs/fetch.md "Fetches and slot streams share queues":
 * an expired lock is claimable as is, by a fetch or a stream slot, with no lag
 * ("a task is available the instant its lock expires, not on the next sweep
 * tick"), and ExtendLock sets lockUntil = now + lockDuration. The owner is told
 * when a fetch's lock lapses; an ExtendLock to a shorter lock was not told, so
 * a slot got the task only at the owner's next backlog pass (up to 5 s later),
 * or at the lock taken at the fetch.
 */
import { pb } from '../../src/wire';
import { fetchClients, step, topic, type ExternalClient } from '../helpers/fetch';
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

it('a lock shortened by ExtendLock is a slot\'s to start once it lapses, not at the lock taken at the fetch', async () => {
  t = await startTestNode(redis.url, uniquePrefix('extendowner'));
  ({ external } = fetchClients(t));
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const got = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 60_000 });
  expect(got.tasks.map((x) => x.task_id)).toEqual([id]);
  // The worker shortens its lock, then dies.
  const lockUntil = Number((await external.extendLock({ task_id: id, worker_id: 'A', lock_duration_ms: 300 })).lock_until_ms);
  const s = openSlot(t.worker, registerFrame());
  open.push(s);
  await s.nextOf('registered');
  const task = (await s.nextOf('step_task', lockUntil - Date.now() + 1500)).step_task!;
  expect(task).toMatchObject({ task_id: id, attempt: 1 });
  expect(Date.now()).toBeGreaterThanOrEqual(lockUntil);
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.RUNNING);
});
