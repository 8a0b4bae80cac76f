/**
 * A FetchAndLock answer stops short of the 4 MiB a gRPC client receives
 * (api/response-budget.ts) counting the tasks' ids in UTF-8 bytes, not only
 * their inputs: flow ids and step execution ids of up to 512 characters are up
 * to three bytes a character on the wire. With fetch.maxMaxTasks raised, 1 000
 * tasks of long non-ASCII ids and 1.7 KB inputs went out as one answer of over
 * 5 MB that the client refused whole, and their locks lapsed unseen.
 */
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { fetchClients, topic } from '../helpers/fetch';

const redis = useEmbeddedRedis();
let t: TestNode;
afterEach(() => t.close());

const COUNT = 1000;
const FLOW = '界'.repeat(512); // three bytes a character in UTF-8
const INPUT = Buffer.alloc(1700, 7);

it('answers with what one gRPC message carries when the tasks hold long non-ASCII ids', async () => {
  t = await startTestNode(redis.url, uniquePrefix('fetch-bytes'), { 'cluster.partitions': 2, 'fetch.maxMaxTasks': COUNT });
  const { external } = fetchClients(t);
  for (let from = 0; from < COUNT; from += 100) {
    const steps = Array.from({ length: 100 }, (_, i) => ({
      tenant: 'acme', flow_id: FLOW, flow_type: 'order', step_type: 'charge', step_execution_id: `${'界'.repeat(500)}${from + i}`, input: INPUT,
    }));
    await t.matching.enqueueSteps({ steps });
  }
  const seen = new Set<string>();
  for (let call = 0; call < 5 && seen.size < COUNT; call++) {
    // A client with gRPC's default receive limit (4 MiB) reads every answer.
    const got = (await external.fetchAndLock({ worker_id: 'A', topics: [topic()], max_tasks: COUNT, wait_ms: 1, lock_duration_ms: 60_000 })).tasks;
    for (const x of got) seen.add(x.task_id!);
  }
  expect(seen.size).toBe(COUNT);
}, 60_000);
