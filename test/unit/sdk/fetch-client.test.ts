/**
 * The FetchClient's and TerminalTasksClient's own deadlines against a
 * hand-written ExternalTaskService: a Node.js timer holds at most 2^31 - 1 ms
 * (MAX_TIMER_MS), and a longer one, Infinity too, fires after 1 ms. A
 * duration option past it is refused naming it; a timeout the client adds up
 * (its own plus a long poll's wait) never goes past it.
 */
import { createServer, type Server } from 'nice-grpc';
import { ExternalTaskServiceDefinition, OperatorServiceDefinition, pb } from '../../../src/wire';
import { FetchClient, MAX_TIMER_MS, TerminalTasksClient } from '../../../src';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const topics = [{ tenant: 't', flowType: 'o', stepType: 's' }];

let server: Server;
let address: string;
let lastFetch: pb.FetchAndLockRequest | undefined;
let lastFail: pb.FailRequest | undefined;
let lastExtend: pb.ExtendLockRequest | undefined;
let lastComplete: pb.CompleteRequest | undefined;
let lastOperator: unknown;

beforeAll(async () => {
  server = createServer();
  server.add(ExternalTaskServiceDefinition, {
    async fetchAndLock(req: pb.FetchAndLockRequest) {
      lastFetch = req;
      await sleep(100); // a long poll that ends with a task
      return {
        tasks: [{
          task_id: 'task-1', topic: { tenant: 't', flow_type: 'o', step_type: 's' }, flow_id: 'f', step_execution_id: 'e', input: Buffer.from('in'),
          lock_until_ms: 5000, retries: 2, attempt: 3,
        }],
      };
    },
    async complete(req: pb.CompleteRequest) {
      lastComplete = req;
      await sleep(100);
      return {};
    },
    async fail(req: pb.FailRequest) {
      lastFail = req;
      return { terminal: false };
    },
    async extendLock(req: pb.ExtendLockRequest) {
      lastExtend = req;
      return { lock_until_ms: 7000 };
    },
    async unlock() {
      return {};
    },
  });
  server.add(OperatorServiceDefinition, {
    async listTerminalTasks(req: pb.ListTerminalTasksRequest) {
      lastOperator = req;
      return {
        tasks: [
          {
            task_id: 'x1', partition: 4, topic: { tenant: 't', flow_type: 'o', step_type: 's' }, flow_id: 'f', step_execution_id: 'e', attempt: 2,
            reason: 'retries', terminal_at_ms: 8000, last_error: { message: 'm', type: 'T' }, lock_expiries: 3,
          },
          { task_id: 'x2' },
        ],
        incomplete: true,
      };
    },
    async retryTerminalTask(req: pb.RetryTerminalTaskRequest) {
      lastOperator = req;
      return {};
    },
    async abandonTerminalTask(req: pb.AbandonTerminalTaskRequest) {
      lastOperator = req;
      return { outcome_id: '9-0' };
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

  it('refuses a fail without options (plain JavaScript), naming the retries it must carry', async () => {
    lastFail = undefined;
    await expect(fetchClient().fail('task-1', undefined as unknown as { retries: number })).rejects.toThrow(/^FetchClient\.fail option retries: /);
    expect(lastFail).toBeUndefined();
  });

  // protobufjs cut a fraction to whole ms (the HTTP surface refuses one too): refused, naming the option.
  it.each([1.5, 0.5, MAX_TIMER_MS - 0.5])('refuses a duration of %p ms, not a whole number', async (ms) => {
    const c = fetchClient();
    lastFetch = lastFail = lastExtend = undefined;
    const whole = (option: string) => new TypeError(`FetchClient.${option}: must be a whole number of ms, got ${ms}`);
    await expect(c.fetchAndLock({ topics, lockDurationMs: ms })).rejects.toThrow(whole('fetchAndLock option lockDurationMs'));
    await expect(c.fetchAndLock({ topics, waitMs: ms })).rejects.toThrow(whole('fetchAndLock option waitMs'));
    await expect(c.fetchAndLock({ topics }, { timeoutMs: ms })).rejects.toThrow(whole('fetchAndLock option timeoutMs'));
    await expect(c.extendLock('task-1', ms)).rejects.toThrow(whole('extendLock option lockDurationMs'));
    await expect(c.fail('task-1', { retries: 1, retryTimeoutMs: ms })).rejects.toThrow(whole('fail option retryTimeoutMs'));
    expect([lastFetch, lastFail, lastExtend]).toEqual([undefined, undefined, undefined]);
    expect(() => new FetchClient({ address, workerId: 'w', defaultTimeoutMs: ms })).toThrow(/^FetchClient option defaultTimeoutMs: must be a whole number of ms/);
  });

  it('says a lock duration of Infinity is no finite number, and takes retries up to what an int32 holds', async () => {
    const c = fetchClient();
    lastFail = undefined;
    await expect(c.extendLock('task-1', Infinity)).rejects.toThrow(new TypeError('FetchClient.extendLock option lockDurationMs: must be a finite number of ms, got Infinity'));
    // protobufjs writes an int32's 2^31 as a negative count.
    await expect(c.fail('task-1', { retries: 2 ** 31 })).rejects.toThrow(new TypeError(`FetchClient.fail option retries: must be a whole number from 0 to ${2 ** 31 - 1}, got ${2 ** 31}`));
    expect(lastFail).toBeUndefined();
    await c.fail('task-1', { retries: 2 ** 31 - 1 });
    expect(lastFail!.retries).toBe(2 ** 31 - 1);
    const ops = new TerminalTasksClient({ address });
    await expect(ops.retry('task-1', 2 ** 31)).rejects.toThrow(/^TerminalTasksClient\.retry option retries: must be a whole number from 0 to 2147483647/);
    ops.close();
  });

  it('sends lock durations and retry timeouts the server bounds itself, past what a timer holds too', async () => {
    const c = fetchClient();
    await c.extendLock('task-1', 2 ** 32);
    expect(Number(lastExtend!.lock_duration_ms)).toBe(2 ** 32);
    await c.fail('task-1', { retries: 1, retryTimeoutMs: 2 ** 32 });
    expect(Number(lastFail!.retry_timeout_ms)).toBe(2 ** 32);
  });
});

describe('FetchClient topics', () => {
  // Plain JavaScript callers: was a bare "Cannot read properties of undefined (reading 'map')".
  it.each([undefined, null, 'o/s', { tenant: 't', flowType: 'o', stepType: 's' }, 3])(
    'refuses topics of %p, naming the option, before anything is sent',
    async (value) => {
      lastFetch = undefined;
      const c = fetchClient();
      await expect(c.fetchAndLock({ topics: value as never, waitMs: 10 })).rejects.toThrow(
        new TypeError(`FetchClient.fetchAndLock option topics: must be an array of { tenant, flowType, stepType }, got ${value === null ? 'null' : typeof value}`),
      );
      expect(lastFetch).toBeUndefined();
    },
  );

  it('refuses no options at all, naming topics', async () => {
    await expect(fetchClient().fetchAndLock(undefined as never)).rejects.toThrow(/^FetchClient\.fetchAndLock option topics: must be an array/);
  });

  it.each([
    [[null], 'topics[0]: must be a { tenant, flowType, stepType }, got null'],
    [[topics[0], 'o/s'], 'topics[1]: must be a { tenant, flowType, stepType }, got string'],
    [[{ flowType: 'o', stepType: 's' }], 'topics[0].tenant: must be a string, got undefined'],
    [[{ tenant: 't', flowType: 7, stepType: 's' }], 'topics[0].flowType: must be a string, got number'],
    [[topics[0], { tenant: 't', flowType: 'o', stepType: null }], 'topics[1].stepType: must be a string, got null'],
  ])('refuses topics %j, naming the field', async (value, message) => {
    lastFetch = undefined;
    await expect(fetchClient().fetchAndLock({ topics: value as never, waitMs: 10 })).rejects.toThrow(
      new TypeError(`FetchClient.fetchAndLock option ${message}`),
    );
    expect(lastFetch).toBeUndefined();
  });

  it('sends valid topics as given (an empty list is the server’s to refuse)', async () => {
    const c = fetchClient();
    await c.fetchAndLock({ topics: [...topics, { tenant: 't', flowType: 'o2', stepType: '' }], waitMs: 10 });
    expect(lastFetch!.topics.map((t) => [t.tenant, t.flow_type, t.step_type])).toEqual([['t', 'o', 's'], ['t', 'o2', '']]);
    await c.fetchAndLock({ topics: [], waitMs: 10 });
    expect(lastFetch!.topics).toEqual([]);
  });
});

describe('what the fetch clients send and how they map the replies', () => {
  it('maps a locked task, with its lock as a Date, and the lock an extension answers', async () => {
    const c = fetchClient();
    expect(await c.fetchAndLock({ topics, waitMs: 10 })).toEqual([{
      taskId: 'task-1', topic: { tenant: 't', flowType: 'o', stepType: 's' }, flowId: 'f', stepExecutionId: 'e', input: Buffer.from('in'),
      lockUntil: new Date(5000), retries: 2, attempt: 3,
    }]);
    expect(await c.extendLock('task-1', 900)).toEqual(new Date(7000));
  });

  it('sends a completion\'s idempotency key and whether it carries a result', async () => {
    const c = fetchClient();
    await c.complete('task-1', { result: 'r', idempotencyKey: 'k1' });
    expect(lastComplete).toMatchObject({ task_id: 'task-1', worker_id: 'w1', has_result: true, idempotency_key: 'k1' });
    expect(Buffer.from(lastComplete!.result).toString()).toBe('r');
    await c.complete('task-1');
    expect(lastComplete).toMatchObject({ has_result: false, idempotency_key: '' });
  });

  it('allows a fetch without a wait of its own the server\'s wait on top of its timeout, and one with a wait just that', async () => {
    const c = fetchClient(50); // the fake answers after 100 ms
    expect(await c.fetchAndLock({ topics })).toHaveLength(1);
    await expect(c.fetchAndLock({ topics, waitMs: 20 })).rejects.toThrow('fetchAndLock did not finish within 70 ms');
  });

  it('lists terminal tasks with their fields, retries and abandons one', async () => {
    const ops = new TerminalTasksClient({ address });
    clients.push(ops);
    expect(await ops.list('t', { flowType: 'o', stepType: 's', limit: 5 })).toEqual({
      tasks: [
        {
          taskId: 'x1', partition: 4, topic: { tenant: 't', flowType: 'o', stepType: 's' }, flowId: 'f', stepExecutionId: 'e', attempt: 2,
          reason: 'retries', terminalAt: new Date(8000), lockExpiries: 3, lastError: { message: 'm', type: 'T' },
        },
        {
          taskId: 'x2', partition: 0, topic: { tenant: '', flowType: '', stepType: '' }, flowId: '', stepExecutionId: '', attempt: 0,
          reason: '', terminalAt: undefined, lockExpiries: 0, lastError: undefined,
        },
      ],
      incomplete: true,
    });
    expect(lastOperator).toMatchObject({ tenant: 't', flow_type: 'o', step_type: 's', limit: 5 });
    await ops.retry('x1', 4);
    expect(lastOperator).toMatchObject({ task_id: 'x1', retries: 4 });
    expect(await ops.abandon('x1', 'gave up')).toBe('9-0');
    expect(lastOperator).toMatchObject({ task_id: 'x1', reason: 'gave up' });
  });

  it('refuses calls after close(), naming the client and method', async () => {
    const c = fetchClient();
    c.close();
    await expect(c.unlock('task-1')).rejects.toThrow('FetchClient.unlock: the client is closed');
  });
});
