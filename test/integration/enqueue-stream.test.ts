/**
 * MatchingService.EnqueueStream against a real node and Redis: requests
 * answered by id, concurrently; a bad request answered with the status
 * EnqueueSteps would have had, writing nothing, the stream going on; a
 * request that does not decode ends the call; a drain ends the stream with
 * OK once what it read is answered. And the Client, whose enqueues use it.
 */
import { ClientError, createClient, Status } from 'nice-grpc';
import { Client } from '../../src/sdk/client';
import { Channel } from '../../src/util/channel';
import { MatchingServiceDefinition, pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { metricValue } from '../helpers/sdk';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
let prefix: string;

beforeEach(async () => {
  prefix = uniquePrefix('es');
  t = await startTestNode(redis.url, prefix);
});
afterEach(async () => {
  await t.close();
});

const step = (seid: string, over: Partial<pb.IStepSpec> = {}): pb.IStepSpec => ({
  tenant: 'acme', flow_id: `f-${seid}`, flow_type: 'order', step_type: 'pack', step_execution_id: seid, ...over,
});

/** An open EnqueueStream: send requests, read answers by request id. */
function openStream() {
  const requests = new Channel<pb.IEnqueueStreamRequest>();
  const answers = new Map<number, pb.EnqueueStreamResponse>();
  const waiters = new Map<number, (r: pb.EnqueueStreamResponse) => void>();
  const done = (async () => {
    for await (const res of t.matching.enqueueStream(requests)) {
      const id = Number(res.request_id);
      answers.set(id, res);
      waiters.get(id)?.(res);
    }
  })();
  return {
    requests,
    done,
    send(id: number, steps: pb.IStepSpec[]): void {
      requests.push({ request_id: id, steps });
    },
    answer(id: number): Promise<pb.EnqueueStreamResponse> {
      const got = answers.get(id);
      return got ? Promise.resolve(got) : new Promise((resolve) => waiters.set(id, resolve));
    },
  };
}

async function taskCount(): Promise<number> {
  return Number(await redis.command('EVAL', `return #redis.call('KEYS', ARGV[1])`, 0, `${prefix}:{*}:t:*`));
}

it('answers each request by its id, many at once', async () => {
  const s = openStream();
  for (let i = 1; i <= 30; i++) s.send(i, [step(`s${i}`), step(`s${i}b`)]);
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => s.answer(i + 1)));
  for (const a of answers) {
    expect(a.error).toBeFalsy();
    expect(a.results).toHaveLength(2);
    expect(a.results.every((r) => r.created && r.task_id !== '')).toBe(true);
  }
  expect(new Set(answers.flatMap((a) => a.results.map((r) => r.task_id))).size).toBe(60);
  expect(await taskCount()).toBe(60);
  // again: idempotent, nothing new
  s.send(99, [step('s1')]);
  const again = await s.answer(99);
  expect(again.results[0]).toMatchObject({ task_id: answers[0]!.results[0]!.task_id, created: false });
  expect(await metricValue(t.node.metrics.registry, 'dexzd_api_enqueue_streams')).toBe(1);
  s.requests.close();
  await s.done; // the half-close ends the call with OK
  await waitFor(async () => (await metricValue(t.node.metrics.registry, 'dexzd_api_enqueue_streams')) === 0,
    { description: 'the gauge drops to 0 when the stream ends' });
});

it('answers a bad request with the status EnqueueSteps would have had, writes nothing of it, and goes on', async () => {
  const s = openStream();
  s.send(1, [step('ok1'), step('bad', { tenant: '' })]);
  s.send(2, []);
  s.send(3, Array.from({ length: t.config.limits.maxBatch + 1 }, (_, i) => step(`many${i}`)));
  s.send(4, [step('ok2')]);
  const [bad, empty, tooMany, ok] = await Promise.all([1, 2, 3, 4].map((id) => s.answer(id)));
  expect(bad!.error).toMatchObject({ code: Status.INVALID_ARGUMENT });
  expect(bad!.error!.message).toMatch(/^ZD_INVALID_ARGUMENT: steps\[1\]\.tenant/);
  expect(bad!.results).toHaveLength(0);
  expect(empty!.error!.message).toMatch(/^ZD_INVALID_ARGUMENT: steps: must hold at least one Step/);
  expect(tooMany!.error!.message).toMatch(/limits\.maxBatch/);
  expect(ok!.error).toBeFalsy();
  expect(ok!.results[0]!.created).toBe(true);
  expect(await taskCount()).toBe(1); // ok1 was in the bad request: not written
  s.requests.close();
  await s.done;
});

it('ends the call with INVALID_ARGUMENT on a request that does not decode, answering what it read first', async () => {
  // identity serialiser: send raw bytes as the request
  const def = { enqueueStream: { ...MatchingServiceDefinition.enqueueStream, requestSerialize: (b: Uint8Array) => b } };
  const raw = createClient(def as never, t.channel) as { enqueueStream(req: AsyncIterable<Uint8Array>): AsyncIterable<pb.EnqueueStreamResponse> };
  const good = pb.EnqueueStreamRequest.encode({ request_id: 7, steps: [step('first')] }).finish();
  const got: pb.EnqueueStreamResponse[] = [];
  const err = await (async () => {
    for await (const res of raw.enqueueStream((async function* () {
      yield good;
      await new Promise((r) => setTimeout(r, 100));
      yield Uint8Array.from([0x0a, 0xff, 0xff, 0xff]); // field 1 as a length-delimited run past the end
      await new Promise((r) => setTimeout(r, 1000));
    })())) got.push(res);
  })().then(() => undefined, (e: unknown) => e);
  expect(got.map((r) => Number(r.request_id))).toEqual([7]);
  expect(err).toBeInstanceOf(ClientError);
  expect(err).toMatchObject({ code: Status.INVALID_ARGUMENT });
  expect((err as ClientError).details).toMatch(/^ZD_INVALID_ARGUMENT: request: is not a valid protobuf message/);
});

it('ends the call with INVALID_ARGUMENT naming request_id on an id past 2^53 - 1, which it could not answer under that id', async () => {
  const def = { enqueueStream: { ...MatchingServiceDefinition.enqueueStream, requestSerialize: (b: Uint8Array) => b } };
  const raw = createClient(def as never, t.channel) as { enqueueStream(req: AsyncIterable<Uint8Array>): AsyncIterable<pb.EnqueueStreamResponse> };
  // a request id as a varint of its own (protobufjs reads 64-bit fields as numbers here), then the Step
  const varint = (v: bigint) => {
    const b: number[] = [];
    for (; v >= 128n; v >>= 7n) b.push(Number(v & 127n) | 128);
    return [...b, Number(v)];
  };
  const withId = (id: bigint, seid: string) => Buffer.concat([
    Buffer.from([0x08, ...varint(id)]), Buffer.from(pb.EnqueueStreamRequest.encode({ steps: [step(seid)] }).finish()),
  ]);
  for (const id of [2n ** 53n, 2n ** 64n - 1n]) {
    const got: pb.EnqueueStreamResponse[] = [];
    const err = await (async () => {
      for await (const res of raw.enqueueStream((async function* () {
        yield withId(2n ** 53n - 1n, `safe-${id}`);
        await new Promise((r) => setTimeout(r, 100));
        yield withId(id, `past-${id}`);
        await new Promise((r) => setTimeout(r, 1000));
      })())) got.push(res);
    })().then(() => undefined, (e: unknown) => e);
    // answered under 2^64 - 1 it went back as 0, under 2^53 + 1 as 2^53: its caller waited for good
    expect(got.map((r) => Number(r.request_id))).toEqual([2 ** 53 - 1]);
    expect(err).toMatchObject({ code: Status.INVALID_ARGUMENT });
    expect((err as ClientError).details).toMatch(/^ZD_INVALID_ARGUMENT: request_id: is past 9007199254740991/);
    await expect(t.matching.getTask({ task_id: got[0]!.results[0]!.task_id })).resolves.toBeDefined();
    const never = await t.matching.enqueueStep({ step: step(`past-${id}`) });
    expect(never.created).toBe(true); // the refused request wrote nothing
  }
});

it('ends its streams with OK when the node drains, after answering what it read', async () => {
  const s = openStream();
  s.send(1, [step('before')]);
  expect((await s.answer(1)).results[0]!.created).toBe(true);
  expect(t.node.enqueueStreams.size).toBe(1);
  const closing = t.node.close();
  await s.done; // OK, not an error
  await closing;
  expect(await taskCount()).toBe(1);
});

it('the Client sends its enqueues over one stream and maps a refused one to the named error', async () => {
  const client = new Client({ address: t.node.apiAddress });
  try {
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => client.enqueueStep({
      tenant: 'acme', flowId: `cf${i}`, flowType: 'order', stepType: 'pack', stepExecutionId: 'x', input: `{"n":${i}}`,
    })));
    expect(rs.every((r) => r.created)).toBe(true);
    expect(t.node.enqueueStreams.size).toBe(1);
    const err = await client.enqueueSteps([{ tenant: 'acme', flowId: 'cf', flowType: 'order', stepType: '', stepExecutionId: 'x' }]).catch((e) => e);
    expect(err).toMatchObject({ code: 'ZD_INVALID_ARGUMENT', status: Status.INVALID_ARGUMENT });
    expect(String((err as Error).message)).toMatch(/steps\[0\]\.step_type/);
    const task = await client.getTask(rs[3]!.taskId);
    expect(task.input.toString()).toBe('{"n":3}');
    expect(await taskCount()).toBe(10);
  } finally {
    client.close();
  }
});

it('the Client takes back the unwritten requests of enqueues that gave up on a node that stopped reading', async () => {
  // Guards the lane's send queue: a node stops reading a stream at 256 unanswered requests
  // (its Redis stalled here), and each enqueue that timed out meanwhile left its request,
  // payload and all, queued in the client for good, to be run when the node read again.
  const client = new Client({ address: t.node.apiAddress });
  try {
    await client.enqueueStep({ tenant: 'acme', flowId: 'open', flowType: 'order', stepType: 'pack', stepExecutionId: 'x' });
    await redis.command('CLIENT', 'PAUSE', '4000', 'WRITE');
    const input = 'x'.repeat(10_000);
    const outcomes = await Promise.all(Array.from({ length: 1000 }, (_, i) => client.enqueueStep(
      { tenant: 'acme', flowId: `stall-${i}`, flowType: 'order', stepType: 'pack', stepExecutionId: 'x', input }, { timeoutMs: 500 },
    ).then(() => 'enqueued', () => 'gave up')));
    expect(outcomes.filter((o) => o === 'gave up')).toHaveLength(1000);
    const lane = (client as unknown as { lane: { stream?: { requests: Channel<unknown> } } }).lane;
    expect(lane.stream?.requests.size ?? 0).toBe(0);
  } finally {
    await redis.command('CLIENT', 'UNPAUSE');
    client.close();
  }
});

it('answers an enqueue on the stream that Redis refuses for now with ZD_STORE_UNAVAILABLE, as the unary call does', async () => {
  // Guards the stream's error mapping: a Redis that said "not now" (READONLY here) answered
  // ZD_INTERNAL ("report a bug") on the stream where EnqueueSteps answered a retryable error.
  const client = new Client({ address: t.node.apiAddress });
  try {
    await client.enqueueStep({ tenant: 'acme', flowId: 'ro-open', flowType: 'order', stepType: 'pack', stepExecutionId: 'x' });
    await redis.command('REPLICAOF', '127.0.0.1', '1'); // a replica now: writes answer READONLY
    const err = await client.enqueueStep({ tenant: 'acme', flowId: 'ro', flowType: 'order', stepType: 'pack', stepExecutionId: 'x' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ZD_STORE_UNAVAILABLE', status: Status.UNAVAILABLE });
  } finally {
    await redis.command('REPLICAOF', 'NO', 'ONE');
    client.close();
  }
});

it('answers an enqueue that fails unexpectedly with ZD_INTERNAL alone, as the unary call does, and goes on', async () => {
  // A key of the wrong type: the enqueue fails with WRONGTYPE, which no catalogued error covers.
  const queues = Array.from({ length: t.config.cluster.partitions }, (_, p) => `${prefix}:{${p}}:queues`);
  for (const key of queues) await redis.command('SET', key, 'x');
  const s = openStream();
  s.send(1, [step('w1')]);
  expect((await s.answer(1)).error).toMatchObject({ code: Status.INTERNAL, message: 'ZD_INTERNAL: internal error' });
  await redis.command('DEL', ...queues);
  s.send(2, [step('w2')]);
  expect((await s.answer(2)).results).toMatchObject([{ created: true }]);
  s.requests.close();
  await s.done;
});
