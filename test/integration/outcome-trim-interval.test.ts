/**
 * The node's periodic outcome-stream trim (DESIGN §8): every 10 s it trims each
 * owned partition's stream, again and again, and not after the node stopped.
 * Only setInterval is faked (Redis, gRPC and the node's other timeouts run on
 * real time), so the trim's rounds are driven by the fake clock while their
 * XTRIMs reach a real Redis.
 */
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
afterEach(async () => {
  jest.useRealTimers();
  await t?.close();
});

const TRIM_EVERY_MS = 10_000;

it('trims the owned outcome streams every 10 s, and no more once the node has stopped', async () => {
  jest.useFakeTimers({
    doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout'],
  });
  t = await startTestNode(redis.url, uniquePrefix('trimint'), { 'cluster.partitions': 1, 'outcomes.retention': '1h' });
  const node = t.node;
  await waitFor(() => node.owner.owned().some((p) => p.partition === 0), { timeoutMs: 5000 });
  const rounds = jest.spyOn(node as unknown as { trimOutcomes(): Promise<void> }, 'trimOutcomes');
  const stream = node.keys.out(0);
  let nextMs = 1;
  // 200 outcomes from long ago, past outcomes.retention: two whole stream nodes (XTRIM MINID ~ frees whole nodes only).
  const appendOld = async () => {
    const pipeline = node.redis.pipeline();
    for (let i = 0; i < 200; i++) pipeline.xadd(stream, `${nextMs++}-0`, 'taskId', `old${nextMs}`, 'o', 'x');
    await pipeline.exec();
  };
  const length = () => node.redis.xlen(stream);

  // Two rounds, each on the 10-s mark and not a millisecond before.
  for (let round = 1; round <= 2; round++) {
    await appendOld();
    jest.advanceTimersByTime(TRIM_EVERY_MS - 1);
    // A round that ran would have trimmed by now; none ran.
    await new Promise((r) => setTimeout(r, 100));
    expect(rounds).toHaveBeenCalledTimes(round - 1);
    expect(await length()).toBe(200);
    jest.advanceTimersByTime(1);
    expect(rounds).toHaveBeenCalledTimes(round);
    await waitFor(async () => (await length()) === 0, { timeoutMs: 2000 });
  }

  // Stopped: the rounds stop with it. Close's own short intervals are moved along meanwhile.
  const closing = t.close();
  let closed = false;
  void closing.then(() => {
    closed = true;
  });
  while (!closed) {
    jest.advanceTimersByTime(50);
    await new Promise((r) => setTimeout(r, 20));
  }
  await closing;
  const before = rounds.mock.calls.length;
  jest.advanceTimersByTime(3 * TRIM_EVERY_MS);
  expect(rounds).toHaveBeenCalledTimes(before);
  expect(before).toBe(2);
}, 30_000);
