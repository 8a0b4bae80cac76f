/**
 * Config keys whose effect no other test would miss at a value other than its
 * default (DESIGN §9): each runs a real node and redis-server at a non-default
 * value and checks what the key is documented to do, so a key read wrongly, or
 * not at all, fails here.
 */
import net from 'node:net';
import { Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { failureOf, step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch(() => undefined);
});

async function node(overrides: Record<string, unknown>): Promise<TestNode> {
  const t = await startTestNode(redis.url, uniquePrefix('cfg'), overrides);
  cleanups.push(() => t.close());
  return t;
}

function slot(t: TestNode, over: Partial<pb.IRegister> = {}): RawSlot {
  const s = openSlot(t.worker, registerFrame(over));
  cleanups.push(() => s.reset());
  return s;
}

describe('steps.*: the retry policy of a Step enqueued without one', () => {
  it('takes maxAttempts, initialInterval, backoffCoefficient and maxInterval from the config', async () => {
    // Backoffs: 300 ms, then min(300 × 5, 800) = 800 ms. The defaults (1 s, × 2, 100 s, 3 attempts) give
    // 1 s and 2 s; any one key ignored changes a backoff or ends the Step after its third failure.
    const t = await node({
      'steps.maxAttempts': 4, 'steps.initialInterval': '300ms', 'steps.backoffCoefficient': 5, 'steps.maxInterval': '800ms',
    });
    const s = slot(t);
    await s.nextOf('registered');
    const { task_id: taskId } = await t.matching.enqueueStep({ step: { ...step(), flow_type: 'order' } });
    expect((await t.matching.getTask({ task_id: taskId })).task!.max_attempts).toBe(4);
    const want = [300, 800, 800];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const task = (await s.nextOf('step_task', 5000)).step_task!;
      expect(task.attempt).toBe(attempt);
      const before = Date.now();
      s.send({ step_result: { task_token: task.task_token, failure: { message: 'boom', type: 'e' } } });
      await s.nextOf('result_ack');
      const info = (await t.matching.getTask({ task_id: taskId })).task!;
      const after = Date.now();
      expect(info.state).toBe(pb.TaskState.QUEUED);
      expect(info.attempt).toBe(attempt + 1);
      // The node's clock is this process's: the failure was written between before and after.
      expect(Number(info.ready_at_ms)).toBeGreaterThanOrEqual(before + want[attempt - 1]!);
      expect(Number(info.ready_at_ms)).toBeLessThanOrEqual(after + want[attempt - 1]!);
    }
  }, 15_000);
});

describe('matching.maxQueueLength, maxFlowTypeLength, maxFlowTypes at values of their own', () => {
  const O = { 'matching.maxQueueLength': 20, 'matching.maxFlowTypeLength': 6, 'matching.maxFlowTypes': 2 };

  it('bound a registration: tenant and app worker id, each flow type, the count of flow types', async () => {
    const t = await node(O);
    const refused = async (over: Partial<pb.IRegister>, key: string) => {
      const err = await slot(t, over).ended;
      expect(err).toMatchObject({ code: Status.INVALID_ARGUMENT });
      expect(err!.message).toContain(key);
    };
    await refused({ tenant: 't'.repeat(21) }, 'matching.maxQueueLength');
    await refused({ app_worker_id: 'w'.repeat(21) }, 'matching.maxQueueLength');
    await refused({ flow_types: ['order', 'orders7'] }, 'matching.maxFlowTypeLength');
    await refused({ flow_types: ['a', 'b', 'c'] }, 'matching.maxFlowTypes');
    const ok = slot(t, { tenant: 't'.repeat(20), app_worker_id: 'w'.repeat(20), flow_types: ['order', 'ship12'] });
    expect((await ok.nextOf('registered')).registered).toBeTruthy();
  });

  it('bound an enqueued Step: its flow type and its queue name', async () => {
    const t = await node(O);
    const e1 = await failureOf(t.matching.enqueueStep({ step: step({ flow_type: 'orders7' }) }));
    expect([e1.code, e1.message]).toEqual([Status.INVALID_ARGUMENT, expect.stringContaining('matching.maxFlowTypeLength')]);
    // "acme:order:" is 11 characters: a step type of 9 makes 20, of 10 makes 21.
    const e2 = await failureOf(t.matching.enqueueStep({ step: step({ flow_type: 'order', step_type: 's'.repeat(10) }) }));
    expect([e2.code, e2.message]).toEqual([Status.INVALID_ARGUMENT, expect.stringContaining('matching.maxQueueLength')]);
    const r = await t.matching.enqueueStep({ step: step({ flow_type: 'order', step_type: 's'.repeat(9) }) });
    expect(r.created).toBe(true);
  });
});

describe('limits.httpMaxHeaders', () => {
  /**
   * A fetch-and-lock sent as written: `extra` headers after content-type and content-length, and
   * Host first or last. Resolves with the status and the parsed JSON body.
   */
  function fetchWithHeaders(t: TestNode, extra: number, hostLast = false): Promise<{ status: number; body: Record<string, string> }> {
    const at = t.node.httpAddress.lastIndexOf(':');
    const body = JSON.stringify({ workerId: 'w', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 });
    const lines = [`content-type: application/json`, `content-length: ${Buffer.byteLength(body)}`];
    for (let i = 0; i < extra; i++) lines.push(`x-extra-${i}: v`);
    if (hostLast) lines.push('host: zdmatch');
    else lines.unshift('host: zdmatch');
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(t.node.httpAddress.slice(at + 1)), t.node.httpAddress.slice(0, at));
      let raw = '';
      const settle = () => {
        const head = raw.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: (\d+)/i.exec(raw.slice(0, head));
        if (head < 0 || !length || Buffer.byteLength(raw.slice(head + 4)) < Number(length[1])) return false;
        socket.destroy();
        resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(raw)![1]), body: JSON.parse(raw.slice(head + 4)) as Record<string, string> });
        return true;
      };
      socket.on('data', (d) => {
        raw += d.toString();
        settle();
      });
      socket.on('error', reject);
      socket.on('close', () => settle() || reject(new Error(`no whole response: ${JSON.stringify(raw)}`)));
      // Not half-closed: the response is read before the connection ends.
      socket.write(`POST /v1/external-tasks/fetch-and-lock HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
    });
  }

  it('answers a request with as many headers as it allows, and refuses one with more naming the key', async () => {
    const t = await node({ 'limits.httpMaxHeaders': 8 });
    expect((await fetchWithHeaders(t, 5)).status).toBe(200); // with host, content-type and content-length: 8
    const over = await fetchWithHeaders(t, 6);
    expect(over.status).toBe(431);
    expect(over.body.code).toBe('ZD_HEADERS_TOO_LARGE');
    expect(over.body.message).toContain('limits.httpMaxHeaders');
    // Past the bound, Host too: still refused for the count (not a bare 400 for a Host the parser dropped).
    const hostLast = await fetchWithHeaders(t, 20, true);
    expect([hostLast.status, hostLast.body.code]).toEqual([431, 'ZD_HEADERS_TOO_LARGE']);
  });
});

describe('limits.maxStreamsPerConnection', () => {
  it('holds a client connection to that many calls at once', async () => {
    const t = await node({ 'limits.maxStreamsPerConnection': 1 });
    const s = slot(t); // one stream on the test client's connection
    await s.nextOf('registered');
    let answered = false;
    const call = t.matching.getTask({ task_id: 'x' }).then(() => undefined, () => undefined).finally(() => (answered = true));
    await sleep(500);
    expect(answered).toBe(false); // the peer's SETTINGS hold it until the stream ends
    s.reset();
    await call;
    await waitFor(() => answered);
  });
});
