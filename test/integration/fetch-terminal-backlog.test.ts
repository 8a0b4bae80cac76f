/**
 * DESIGN §6, §7; docs/fetch.md "Terminal tasks": a task whose lock
 * expired past fetch.maxLockExpiries turns terminal and is "no longer counted
 * as backlog". Its lapsed lock had made it a head of the partition's owner
 * again (an expired lock is claimable as is, by a slot too); when a fetch's
 * claim turned it terminal the owner was not told, and on a queue no slot
 * stream serves the stale head stayed in memory: the node's backlog gauges
 * kept an ever older queued Step and a queue no worker serves.
 */
import { pb } from '../../src/wire';
import { fetchClients, sleep, step, topic, type ExternalClient } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
let external: ExternalClient;

afterEach(() => t?.close());

const claim = (over: Partial<pb.IFetchAndLockRequest> = {}) =>
  external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: 1, lock_duration_ms: 100, ...over });

/** The node's /metrics lines of the backlog gauges. */
async function backlogMetrics(): Promise<Record<string, number>> {
  const text = await (await fetch(`http://${t.node.metricsAddress}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(dexzd_step_task_queue_oldest_age_seconds|dexzd_matching_unserved_task_queues)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m) out[`${m[1]}${m[2] ?? ''}`] = Number(m[3]);
  }
  return out;
}
it('a task turned terminal by lock expiries in a fetch claim is no longer counted as backlog', async () => {
  t = await startTestNode(redis.url, uniquePrefix('termbacklog'), { 'fetch.maxLockExpiries': 1 });
  ({ external } = fetchClients(t));
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  expect((await claim()).tasks).toHaveLength(1);
  await sleep(250); // the lock lapses: the owner has it as a head again
  expect((await claim()).tasks.map((x) => x.task_id)).toEqual([id]); // expiry 1 of 1
  await sleep(250);
  expect((await claim()).tasks).toEqual([]); // expiry 2 > 1: terminal
  expect((await t.matching.getTask({ task_id: id })).task!.state).toBe(pb.TaskState.TERMINAL);
  await sleep(300);
  const m = await backlogMetrics();
  expect(m['dexzd_step_task_queue_oldest_age_seconds{tenant="acme",flow_type="order",step_type="charge"}'] ?? 0).toBe(0);
  expect(m['dexzd_matching_unserved_task_queues{reason="no_worker"}']).toBe(0);
});

it('a WaitOutcome waiting on a terminal task is answered as soon as an operator abandons it', async () => {
  t = await startTestNode(redis.url, uniquePrefix('termabandon'));
  const clients = fetchClients(t);
  external = clients.external;
  const id = (await t.matching.enqueueStep({ step: step() })).task_id!;
  expect((await claim({ lock_duration_ms: 60_000 })).tasks).toHaveLength(1);
  expect((await external.fail({ task_id: id, worker_id: 'A', failure: { message: 'bad' }, retries: 0 })).terminal).toBe(true);
  const waited = t.matching.waitOutcome({ task_id: id, wait_ms: 10_000 });
  await sleep(100); // the wait has begun: its next look of its own is a second after it began
  const since = Date.now();
  await clients.operator.abandonTerminalTask({ task_id: id }); // no reason given: the outcome still says why it failed
  expect((await waited).outcome).toMatchObject({ status: pb.OutcomeStatus.FAILED, error: { message: 'abandoned by an operator' } });
  expect(Date.now() - since).toBeLessThan(500); // rung by the abandon, not found on the wait's own second look
});
