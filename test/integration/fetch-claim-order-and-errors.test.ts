/**
 * How one fetch claims across partitions and topics (DESIGN §4, §7), against a
 * real node and redis-server:
 * - a claim that fails part-way over the partitions (a shard down, a timeout;
 *   injected on the node's FetchStore) answers what it claimed, instead of
 *   leaving it locked in the worker's name unseen: such a lock is sat out for
 *   its whole duration and counted as a lock expiry toward fetch.maxLockExpiries;
 * - of several topics in one partition, the queue whose task is oldest is
 *   claimed first: a backlog of the topic named first does not starve an older
 *   task of another (FIFO by readyAt, roughly).
 */
import { pb } from '../../src/wire';
import { fetchClients, sleep, step, topic, type ExternalClient } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { partitionOf as partitionOfFlow } from '../../src/store/keys';

const redis = useEmbeddedRedis();
let t: TestNode;
let external: ExternalClient;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('fetch-claim-err'));
  ({ external } = fetchClients(t));
});
afterEach(() => t?.close());

async function stateOf(taskId: string): Promise<pb.TaskState> {
  return (await t.matching.getTask({ task_id: taskId })).task!.state ?? pb.TaskState.TASK_STATE_UNSPECIFIED;
}

/** Two flows whose tasks land in different partitions. */
function flowsInTwoPartitions(): [string, string] {
  const n = t.config.cluster.partitions;
  const first = 'ce-0';
  for (let i = 1; ; i++) if (partitionOfFlow('acme', `ce-${i}`, n) !== partitionOfFlow('acme', first, n)) return [first, `ce-${i}`];
}

it('a claim that fails in one partition leaves no task of another partition locked unseen', async () => {
  const [f1, f2] = flowsInTwoPartitions();
  const older = (await t.matching.enqueueStep({ step: step({ flow_id: f1 }) })).task_id!;
  await sleep(5); // claimed first: the partitions are claimed oldest first
  const newer = (await t.matching.enqueueStep({ step: step({ flow_id: f2 }) })).task_id!;

  const store = t.node.externalTasks!.store;
  const lock = store.lock.bind(store);
  let calls = 0;
  const spy = jest.spyOn(store, 'lock').mockImplementation((...args: Parameters<typeof store.lock>) => {
    calls++;
    // The second partition's claim script fails (its shard is down, the call timed out).
    if (calls === 2) return Promise.reject(new Error('injected: claim of the second partition failed'));
    return lock(...args);
  });
  let answered: string[] = [];
  try {
    const r = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], max_tasks: 10, wait_ms: 1, lock_duration_ms: 60_000 });
    answered = (r.tasks ?? []).map((x) => x.task_id!);
  } catch {
    answered = [];
  } finally {
    spy.mockRestore();
  }
  expect(calls).toBe(2);
  // Every task left locked was handed to the worker: none sits out a minute's lock that nobody holds.
  const locked = [];
  for (const id of [older, newer]) if ((await stateOf(id)) === pb.TaskState.LOCKED) locked.push(id);
  expect(locked.sort()).toEqual([...answered].sort());
  // What was claimed before the failure is answered, not thrown away; the other partition's task waits for the next fetch.
  expect(answered).toEqual([older]);
  expect(await stateOf(newer)).toBe(pb.TaskState.QUEUED);
  const next = await external.fetchAndLock({ worker_id: 'B', topics: [topic()], wait_ms: 1 });
  expect((next.tasks ?? []).map((x) => x.task_id)).toEqual([newer]);
});

it('a claim on one Redis stops at its first failed partition: that Redis fails the others alike, each call after its retries', async () => {
  const n = t.config.cluster.partitions;
  const flows: string[] = [];
  const seen = new Set<number>();
  for (let i = 0; seen.size < 4; i++) {
    const p = partitionOfFlow('acme', `cs-${i}`, n);
    if (!seen.has(p)) flows.push(`cs-${i}`);
    seen.add(p);
  }
  for (const f of flows) await t.matching.enqueueStep({ step: step({ flow_id: f }) });

  const store = t.node.externalTasks!.store;
  let calls = 0;
  const spy = jest.spyOn(store, 'lock').mockImplementation(() => {
    calls++;
    return Promise.reject(new Error('injected: Redis went away'));
  });
  try {
    await expect(external.fetchAndLock({ worker_id: 'A', topics: [topic()], max_tasks: 10, wait_ms: 1, lock_duration_ms: 60_000 })).rejects.toThrow();
  } finally {
    spy.mockRestore();
  }
  expect(calls).toBe(1);
});

it('a fetch of several topics claims the oldest task first, not every task of the first topic named before it', async () => {
  // DESIGN §4: a queue waits FIFO by readyAt (roughly). One worker serves two topics of a partition:
  // the older task of the second topic must not wait behind a backlog of the first topic.
  const ship = (await t.matching.enqueueStep({ step: step({ flow_id: 'fifo', step_type: 'ship', step_execution_id: 'ship-0' }) })).task_id!;
  await sleep(5);
  for (let i = 0; i < 12; i++) await t.matching.enqueueStep({ step: step({ flow_id: 'fifo', step_execution_id: `charge-${i}` }) });
  const r = await external.fetchAndLock({
    worker_id: 'A', topics: [topic(), topic({ step_type: 'ship' })], max_tasks: 5, wait_ms: 1, lock_duration_ms: 60_000,
  });
  const ids = (r.tasks ?? []).map((x) => x.task_id);
  expect(ids).toHaveLength(5);
  expect(ids).toContain(ship);
});

it('a partition whose claim failed once and then succeeded is claimed oldest first again, not left behind the others', async () => {
  // A partition whose claim failed lately is looked at after the others (a slot mid-migration);
  // once a claim there succeeds it takes its turn by age again.
  const [f1, f2] = flowsInTwoPartitions();
  const older = (await t.matching.enqueueStep({ step: step({ flow_id: f1 }) })).task_id!;
  await failOneClaim();
  const again = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 60_000 });
  expect((again.tasks ?? []).map((x) => x.task_id)).toEqual([older]);
  await external.unlock({ task_id: older, worker_id: 'A' }); // back at its place in the queue
  await sleep(5);
  const newer = (await t.matching.enqueueStep({ step: step({ flow_id: f2 }) })).task_id!;
  const r = await external.fetchAndLock({ worker_id: 'B', topics: [topic()], max_tasks: 1, wait_ms: 1 });
  expect((r.tasks ?? []).map((x) => x.task_id)).toEqual([older]);
  expect(await stateOf(newer)).toBe(pb.TaskState.QUEUED);
});

it('a fetch that claimed elsewhere answers without a partition whose claim failed lately; the next fetch looks there', async () => {
  // On a Redis Cluster each claim in a slot mid-migration spends the client's retries: what was claimed
  // in the other partitions is answered at once rather than after them.
  const [f1, f2] = flowsInTwoPartitions();
  const older = (await t.matching.enqueueStep({ step: step({ flow_id: f1 }) })).task_id!;
  await failOneClaim();
  const newer = (await t.matching.enqueueStep({ step: step({ flow_id: f2 }) })).task_id!;
  const r = await external.fetchAndLock({ worker_id: 'A', topics: [topic()], max_tasks: 10, wait_ms: 1, lock_duration_ms: 60_000 });
  expect((r.tasks ?? []).map((x) => x.task_id)).toEqual([newer]);
  expect(await stateOf(older)).toBe(pb.TaskState.QUEUED);
  const next = await external.fetchAndLock({ worker_id: 'B', topics: [topic()], max_tasks: 10, wait_ms: 1 });
  expect((next.tasks ?? []).map((x) => x.task_id)).toEqual([older]);
});

/** One fetch whose claim fails (a slot mid-migration, say): its partition counts as failed lately. */
async function failOneClaim(): Promise<void> {
  const spy = jest.spyOn(t.node.externalTasks!.store, 'lock').mockRejectedValueOnce(new Error('injected: the claim failed once'));
  try {
    await expect(external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1 })).rejects.toThrow();
  } finally {
    spy.mockRestore();
  }
}
