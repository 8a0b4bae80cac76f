/**
 * The FetchClient's and TerminalTasksClient's own deadlines against a
 * hand-written ExternalTaskService: a Node.js timer holds at most 2^31 - 1 ms
 * (MAX_TIMER_MS), and a longer one, Infinity too, fires after 1 ms. A
 * duration option past it is refused naming it; a timeout the client adds up
 * (its own plus a long poll's wait) never goes past it.
 */
import { createServer, type Server } from 'nice-grpc';
import { ExternalTaskServiceDefinition, pb } from '../../../src/wire';
import { FetchClient, MAX_TIMER_MS, TerminalTasksClient } from '../../../src';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const topics = [{ tenant: 't', flowType: 'o', stepType: 's' }];

let server: Server;
let address: string;
let lastFetch: pb.FetchAndLockRequest | undefined;
let lastFail: pb.FailRequest | undefined;
let lastExtend: pb.ExtendLockRequest | undefined;

beforeAll(async () => {
  server = createServer();
  server.add(ExternalTaskServiceDefinition, {
    async fetchAndLock(req: pb.FetchAndLockRequest) {
      lastFetch = req;
      await sleep(100); // a long poll that ends with a task
      return { tasks: [{ task_id: 'task-1', topic: { tenant: 't', flow_type: 'o', step_type: 's' }, lock_until_ms: 1 }] };
    },
    async complete() {
      await sleep(100);
      return {};
    },
    async fail(req: pb.FailRequest) {
      lastFail = req;
      return { terminal: false };
    },
    async extendLock(req: pb.ExtendLockRequest) {
      lastExtend = req;
      return { lock_until_ms: 1 };
    },
    async unlock() {
      return {};
    },
  });
  address = `127.0.0.1:${await server.listen('127.0.0.1:0')}`;
});

afterAll(async () => {
  await server.shutdown();
});

const clients: Array<{ close(): void }> = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
function fetchClient(defaultTimeoutMs?: number): FetchClient {
  const c = new FetchClient({ address, workerId: 'w1', ...(defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs }) });
  clients.push(c);
  return c;
}

describe('FetchClient durations', () => {
  it.each([Infinity, 2 ** 31, 40 * 86_400_000, 0, -1, NaN])('refuses a defaultTimeoutMs of %p, naming it', (defaultTimeoutMs) => {
    expect(() => new FetchClient({ address, workerId: 'w', defaultTimeoutMs })).toThrow(/FetchClient option defaultTimeoutMs/);
    expect(() => new TerminalTasksClient({ address, defaultTimeoutMs })).toThrow(/TerminalTasksClient option defaultTimeoutMs/);
  });

  it('long-polls with a defaultTimeoutMs of MAX_TIMER_MS: its wait added to it stays a timer it holds', async () => {
    const c = fetchClient(MAX_TIMER_MS);
    // Was: MAX_TIMER_MS + the wait armed as is, so the call timed out after 1 ms.
    expect((await c.fetchAndLock({ topics, waitMs: 5000 })).map((t) => t.taskId)).toEqual(['task-1']);
    expect((await c.fetchAndLock({ topics })).map((t) => t.taskId)).toEqual(['task-1']); // the server's wait allowed for
    await c.complete('task-1');
  });

  it('long-polls with a per-call timeoutMs of MAX_TIMER_MS', async () => {
    const c = fetchClient();
    expect((await c.fetchAndLock({ topics, waitMs: 5000 }, { timeoutMs: MAX_TIMER_MS })).map((t) => t.taskId)).toEqual(['task-1']);
    await c.complete('task-1', {}, { timeoutMs: MAX_TIMER_MS });
  });

  it.each([Infinity, 2 ** 31, 0, -1, NaN])('refuses a per-call timeoutMs of %p, naming the method and option', async (timeoutMs) => {
    const c = fetchClient();
    await expect(c.fetchAndLock({ topics, waitMs: 10 }, { timeoutMs })).rejects.toThrow(/FetchClient\.fetchAndLock option timeoutMs/);
    await expect(c.unlock('task-1', { timeoutMs })).rejects.toThrow(/FetchClient\.unlock option timeoutMs/);
    const t = new TerminalTasksClient({ address });
    clients.push(t);
    await expect(t.retry('task-1', 0, { timeoutMs })).rejects.toThrow(/TerminalTasksClient\.retry option timeoutMs/);
  });

  it.each([Infinity, 2 ** 31, -1, NaN])('refuses a waitMs of %p, naming it (Infinity went out as 0: the server’s wait)', async (waitMs) => {
    lastFetch = undefined;
    await expect(fetchClient().fetchAndLock({ topics, waitMs })).rejects.toThrow(/FetchClient\.fetchAndLock option waitMs/);
    expect(lastFetch).toBeUndefined();
  });

  it.each([Infinity, -1, NaN])('refuses a lock duration or retry timeout of %p (Infinity went out as 0: the server’s default)', async (ms) => {
    const c = fetchClient();
    lastFetch = lastFail = lastExtend = undefined;
    await expect(c.fetchAndLock({ topics, waitMs: 10, lockDurationMs: ms })).rejects.toThrow(/fetchAndLock option lockDurationMs/);
    await expect(c.extendLock('task-1', ms)).rejects.toThrow(/extendLock option lockDurationMs/);
    await expect(c.fail('task-1', { retries: 1, retryTimeoutMs: ms })).rejects.toThrow(/fail option retryTimeoutMs/);
    expect([lastFetch, lastFail, lastExtend]).toEqual([undefined, undefined, undefined]);
  });

  it('sends lock durations and retry timeouts the server bounds itself, past what a timer holds too', async () => {
    const c = fetchClient();
    await c.extendLock('task-1', 2 ** 32);
    expect(Number(lastExtend!.lock_duration_ms)).toBe(2 ** 32);
    await c.fail('task-1', { retries: 1, retryTimeoutMs: 2 ** 32 });
    expect(Number(lastFail!.retry_timeout_ms)).toBe(2 ** 32);
  });
});
