/**
 * ListTerminalTasks answers with at most what one gRPC message carries
 * (api/response-budget.ts): terminal tasks hold their last error, up to
 * thousands of characters of UTF-8 text each, and a listing of a thousand
 * such tasks went out as one answer of over 4 MiB that the operator's client
 * refused whole. The oldest come first; the rest follow once these are
 * retried or abandoned.
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { fetchClients, topic } from '../helpers/fetch';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const COUNT = 1000;
const ERROR = '界'.repeat(1500); // three bytes a character: 4.5 KB a task

it('lists terminal tasks with long non-ASCII errors in an answer the client reads, the oldest first', async () => {
  t = await startTestNode(redis.url, uniquePrefix('terminal-bytes'), { 'cluster.partitions': 2, 'fetch.maxMaxTasks': COUNT });
  const { external, operator } = fetchClients(t);
  for (let from = 0; from < COUNT; from += 200) {
    const steps = Array.from({ length: 200 }, (_, i) => ({ tenant: 'acme', flow_id: `f${from + i}`, flow_type: 'order', step_type: 'charge', step_execution_id: 's' }));
    await t.matching.enqueueSteps({ steps });
  }
  const locked = (await external.fetchAndLock({ worker_id: 'A', topics: [topic()], max_tasks: COUNT, wait_ms: 1, lock_duration_ms: 60_000 })).tasks;
  expect(locked).toHaveLength(COUNT);
  for (const task of locked) {
    await external.fail({ task_id: task.task_id, worker_id: 'A', failure: { message: ERROR, type: 'Io' }, retries: 0 });
  }
  // A client with gRPC's default receive limit (4 MiB) reads the answer.
  const listed = (await operator.listTerminalTasks({ tenant: 'acme', limit: COUNT })).tasks;
  expect(listed.length).toBeGreaterThan(100);
  expect(listed.length).toBeLessThan(COUNT);
  expect(listed.every((x) => x.last_error?.message === ERROR)).toBe(true);
  const at = listed.map((x) => Number(x.terminal_at_ms));
  expect(at).toEqual([...at].sort((x, y) => x - y));
}, 90_000);
