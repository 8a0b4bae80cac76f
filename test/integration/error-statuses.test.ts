/**
 * How a call that fails for no catalogued reason ends: INTERNAL with
 * `ZD_INTERNAL: internal error` and nothing of the cause (which goes to the
 * node's log at ERROR, with the method), and a call whose caller went away
 * ends without such a log line, as an abort is no fault of the node.
 */
import { Status } from 'nice-grpc';
import { captureLogs } from '../helpers/logs';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
let prefix: string;
let logs: ReturnType<typeof captureLogs<{ level: number; msg: string; method?: string; err?: string }>>;

beforeEach(async () => {
  prefix = uniquePrefix('errs');
  logs = captureLogs();
  t = await startTestNode(redis.url, prefix, {}, { logger: logs.logger });
});
afterEach(async () => {
  await t.close();
});

const unexpected = () => logs.lines.filter((l) => l.msg === 'unexpected error in handler');

it('answers INTERNAL naming ZD_INTERNAL alone when a handler fails unexpectedly, and logs the cause with the method', async () => {
  // A key of the wrong type: every read of it fails with WRONGTYPE, which no catalogued error covers.
  for (let p = 0; p < t.config.cluster.partitions; p++) await redis.command('SET', `${prefix}:{${p}}:queues`, 'x');
  const err = await t.matching.describeQueues({ tenant: 'acme' }).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: Status.INTERNAL, details: 'ZD_INTERNAL: internal error' });
  const logged = unexpected().find((l) => l.method === '/zdmatch.v1.MatchingService/DescribeQueues');
  expect(logged).toMatchObject({ level: 50 });
  expect(logged!.err).toContain('WRONGTYPE');
});

it('logs no error for a long poll whose caller went away', async () => {
  const { task_id } = await t.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' },
  });
  const gone = new AbortController();
  const waiting = t.matching.waitOutcome({ task_id, wait_ms: 20_000 }, { signal: gone.signal }).catch((e: unknown) => e);
  await waitFor(() => t.node.longPolls.count === 1, { description: 'the wait to start' });
  gone.abort();
  await waiting;
  await waitFor(() => t.node.longPolls.count === 0, { description: 'the handler to end' });
  // One more round trip: the ended call's error has long passed the middleware.
  await t.matching.getTask({ task_id });
  expect(unexpected()).toEqual([]);
});
