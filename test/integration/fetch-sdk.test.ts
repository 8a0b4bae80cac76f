/**
 * The fetch SDK (FetchClient, TerminalTasksClient: named verdict errors) and
 * the `zdmatch terminal list|retry|abandon` CLI against a real node. The CLI
 * part needs `npm run build` (npm test does it).
 */
import {
  FetchClient, LockedByOtherError, LockExpiredError, NotFoundError, TerminalError, TerminalTasksClient, ZdDeadlineExceededError,
  ZdFailedPreconditionError, ZdInvalidArgumentError,
} from '../../src';
import { pb } from '../../src/wire';
import { sleep, step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { runCliAsync } from '../helpers/cli';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
const clients: { close(): void }[] = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('sdk'));
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t.close();
});

function worker(workerId: string): FetchClient {
  const c = new FetchClient({ address: t.node.apiAddress, workerId });
  clients.push(c);
  return c;
}

const topics = [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }];

it('maps each verdict to its named error in one place', async () => {
  const a = worker('A');
  const b = worker('B');
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  const [task] = await a.fetchAndLock({ topics, lockDurationMs: 300, waitMs: 1000 });
  expect(task).toMatchObject({ taskId: id, attempt: 1, topic: topics[0] });
  expect(task!.input.toString()).toBe('in');
  const locked = await b.complete(id, { result: 'x' }).catch((e: unknown) => e);
  expect(locked).toBeInstanceOf(LockedByOtherError);
  expect(locked).toBeInstanceOf(ZdFailedPreconditionError); // its base class, what mapGrpcError gives ABORTED
  await sleep(400);
  const expired = await a.extendLock(id, 1000).catch((e: unknown) => e);
  expect(expired).toBeInstanceOf(LockExpiredError);
  expect(expired).toBeInstanceOf(ZdFailedPreconditionError); // and OUT_OF_RANGE (was ZdInvalidArgumentError)
  await b.fetchAndLock({ topics, waitMs: 1000 });
  expect(await b.fail(id, { message: 'no', retries: 0 })).toBe(true);
  await expect(b.unlock(id)).rejects.toBeInstanceOf(TerminalError);
  await expect(b.complete('3-0123456789abcdef01234567')).rejects.toBeInstanceOf(NotFoundError);
  await expect(b.fetchAndLock({ topics, maxTasks: 1000 })).rejects.toBeInstanceOf(ZdInvalidArgumentError);
});

const cli = async (args: string[]) => {
  const r = await runCliAsync(args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

it('operators list, retry and abandon terminal tasks (SDK and CLI)', async () => {
  const a = worker('A');
  const ops = new TerminalTasksClient({ address: t.node.apiAddress });
  clients.push(ops);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  await a.fetchAndLock({ topics, waitMs: 1000 });
  await a.fail(id, { message: 'broken', type: 'Bad', retries: 0 });
  const { tasks: listed } = await ops.list('acme');
  expect(listed).toHaveLength(1);
  expect(listed[0]).toMatchObject({ taskId: id, reason: 'fetch retries exhausted', lastError: { message: 'broken', type: 'Bad' } });

  const addr = ['--address', t.node.apiAddress];
  const list = await cli(['terminal', 'list', '--tenant', 'acme', '--json', ...addr]);
  expect(list.code).toBe(0);
  expect((JSON.parse(list.stdout) as { taskId: string }[]).map((x) => x.taskId)).toEqual([id]);
  const retried = await cli(['terminal', 'retry', id, '--retries', '2', ...addr]);
  expect(retried).toMatchObject({ code: 0, stdout: `${id} queued again\n` });
  const [again] = await a.fetchAndLock({ topics, waitMs: 1000 });
  expect(again).toMatchObject({ taskId: id, retries: 2, attempt: 1 });
  await a.fail(id, { message: 'still broken', retries: 0 });
  const abandoned = await cli(['terminal', 'abandon', id, '--reason', 'bad data', ...addr]);
  expect(abandoned.code).toBe(0);
  expect(abandoned.stdout).toMatch(new RegExp(`^${id} abandoned \\(outcome \\d+-`));
  const o = (await t.matching.waitOutcome({ task_id: id, wait_ms: 1000 })).outcome!;
  expect(o).toMatchObject({ status: pb.OutcomeStatus.FAILED, error: { message: 'bad data', type: 'abandoned' } });
  expect((await cli(['terminal', 'list', '--tenant', 'acme', ...addr])).stdout).toBe('no terminal tasks for tenant acme\n');
  const again2 = await cli(['terminal', 'abandon', id, '--reason', 'x', ...addr]);
  expect(again2.code).toBe(1);
  expect(again2.stderr).toMatch(/ZD_TASK_NOT_FOUND/);
});

it('answers a fetch with what one gRPC message carries and gives the rest of its claim back at once', async () => {
  const big = Buffer.alloc(900 * 1024, 7);
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await t.matching.enqueueStep({ step: step({ flow_id: `big-${i}`, input: big }) })).task_id!);
  const a = worker('A');
  // Ten of them are 9 MB: past the 4 MiB a gRPC client receives by default.
  const first = await a.fetchAndLock({ topics, maxTasks: 10, lockDurationMs: 60_000, waitMs: 1000 });
  expect(first.length).toBeGreaterThan(0);
  expect(first.length).toBeLessThan(10);
  const states = await Promise.all(ids.map(async (id) => (await t.matching.getTask({ task_id: id })).task!.state));
  expect(states.filter((s) => s === pb.TaskState.LOCKED)).toHaveLength(first.length);
  expect(states.filter((s) => s === pb.TaskState.QUEUED)).toHaveLength(10 - first.length);
  // The rest were never seen, so they are fetchable now, not after the lock's minute.
  const seen = new Set(first.map((x) => x.taskId));
  for (let round = 0; round < 10 && seen.size < 10; round++) {
    for (const x of await a.fetchAndLock({ topics, maxTasks: 10, lockDurationMs: 60_000, waitMs: 1000 })) seen.add(x.taskId);
  }
  expect([...seen].sort()).toEqual([...ids].sort());
});

it('complete with result null, as from plain JavaScript or JSON, is no result: the outcome carries the input', async () => {
  const a = worker('A');
  const id = (await t.matching.enqueueStep({ step: step() })).task_id;
  await a.fetchAndLock({ topics, waitMs: 1000 });
  // Typed callers cannot pass null; `"result": null` over HTTP means "no result" (docs/fetch.md), and so here.
  await a.complete(id, { result: null as unknown as undefined });
  const o = (await t.matching.waitOutcome({ task_id: id, wait_ms: 2000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
  expect(Buffer.from(o.output!).toString()).toBe('in');
});

const stateOf = async (id: string) => pb.TaskState[(await t.matching.getTask({ task_id: id })).task!.state ?? 0];

it('refuses a count protobufjs would send as another, naming it, before anything is sent', async () => {
  const a = worker('A');
  const ops = new TerminalTasksClient({ address: t.node.apiAddress });
  clients.push(ops);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id!;
  // NaN, Infinity and 2^32 went out as 0 (the server's default), 1.5 as 1, -1 as 4294967295.
  for (const maxTasks of [NaN, Infinity, 1.5, -1, 2 ** 32]) {
    await expect(a.fetchAndLock({ topics, maxTasks, waitMs: 1 })).rejects.toThrow(/^FetchClient\.fetchAndLock option maxTasks: .* 4294967295, got/);
  }
  expect(await stateOf(id)).toBe('QUEUED');
  await a.fetchAndLock({ topics, waitMs: 1000 });
  // Was: a missing (plain JavaScript), NaN or Infinity retries went out as 0 and made the task terminal.
  for (const retries of [undefined, NaN, Infinity, 2.5, -1, 2 ** 31]) {
    await expect(a.fail(id, { message: 'x', retries: retries as number })).rejects.toThrow(/^FetchClient\.fail option retries: .* 2147483647, got/);
  }
  expect(await stateOf(id)).toBe('LOCKED');
  expect(await a.fail(id, { message: 'x', retries: 0 })).toBe(true);
  await expect(ops.list('acme', { limit: -1 })).rejects.toThrow(/TerminalTasksClient\.list option limit/);
  await expect(ops.retry(id, 2 ** 31)).rejects.toThrow(/TerminalTasksClient\.retry option retries/);
  expect(await stateOf(id)).toBe('TERMINAL');
  expect((await ops.list('acme', { limit: 1 })).tasks.map((x) => x.taskId)).toEqual([id]);
});

it('refuses a fraction of a ms and topics that are not names, naming the option, before anything is sent', async () => {
  const a = worker('A');
  const id = (await t.matching.enqueueStep({ step: step() })).task_id!;
  // Was: a lockDurationMs of 1.5 went out as 1 (a lock of 1 ms), and topics undefined threw "Cannot read properties of undefined".
  await expect(a.fetchAndLock({ topics, lockDurationMs: 1.5, waitMs: 1 })).rejects.toThrow(
    'FetchClient.fetchAndLock option lockDurationMs: must be a whole number of ms, got 1.5',
  );
  await expect(a.fetchAndLock({ topics, waitMs: 0.5 })).rejects.toThrow(/^FetchClient\.fetchAndLock option waitMs: must be a whole number/);
  await expect(a.fetchAndLock({ waitMs: 1 } as never)).rejects.toThrow(/^FetchClient\.fetchAndLock option topics: must be an array/);
  await expect(a.fetchAndLock({ topics: [{ ...topics[0], stepType: undefined }] as never, waitMs: 1 })).rejects.toThrow(
    'FetchClient.fetchAndLock option topics[0].stepType: must be a string, got undefined',
  );
  expect(await stateOf(id)).toBe('QUEUED');
  const [task] = await a.fetchAndLock({ topics, lockDurationMs: 60_000, waitMs: 1000 });
  await expect(a.extendLock(id, 1000.5)).rejects.toThrow(/^FetchClient\.extendLock option lockDurationMs: must be a whole number/);
  await expect(a.fail(id, { retries: 1, retryTimeoutMs: 0.5 })).rejects.toThrow(/^FetchClient\.fail option retryTimeoutMs: must be a whole number/);
  expect(await stateOf(id)).toBe('LOCKED');
  await a.complete(task!.taskId);
});

it('a credential that never resolves holds no call past its timeout, its caller\'s signal or close()', async () => {
  const hung = new FetchClient({ address: t.node.apiAddress, workerId: 'A', credential: () => new Promise<string>(() => undefined) });
  clients.push(hung);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id!;
  const within = (p: Promise<unknown>) => Promise.race([p.then(() => 'resolved', (e: unknown) => e), sleep(2000).then(() => 'still waiting')]);
  // Was: each of them still waiting on the credential, past its timeout and close().
  const timedOut = await within(hung.unlock(id, { timeoutMs: 200 }));
  expect(timedOut).toBeInstanceOf(ZdDeadlineExceededError);
  expect((timedOut as Error).message).toBe('unlock did not finish within 200 ms');
  const ac = new AbortController();
  const aborted = within(hung.fetchAndLock({ topics, waitMs: 1000 }, { signal: ac.signal }));
  const polling = within(hung.fetchAndLock({ topics, waitMs: 1000 }));
  await sleep(50);
  ac.abort(new Error('caller gave up'));
  expect(await aborted).toMatchObject({ message: 'caller gave up' });
  hung.close();
  expect(String((await polling as Error).message)).toBe('FetchClient.fetchAndLock: the client is closed');
  expect(await stateOf(id)).toBe('QUEUED');
});
