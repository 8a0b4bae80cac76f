/**
 * The HTTP/JSON fetch routes take JSON text as RFC 8259 has it, UTF-8, and strings
 * that are Unicode text: bytes that are no UTF-8, or a lone surrogate escape
 * ("\ud800"), are refused naming the body or the field, and change nothing. Read
 * leniently, both became U+FFFD: a lock held in the name of a worker id other than
 * the one sent, a failure message stored other than it was written; the same text
 * over gRPC is refused. A real node and redis-server; bodies sent as raw bytes.
 */
import http from 'node:http';
import { pb } from '../../src/wire';
import { step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('httptext'));
});
afterEach(() => t.close());

/** POSTs these exact bytes as application/json; the status and the parsed answer. */
function post(path: string, body: Buffer): Promise<{ status: number; body: Record<string, unknown> }> {
  const [host, port] = t.node.httpAddress.split(':');
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port: Number(port), method: 'POST', path, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const FETCH = '/v1/external-tasks/fetch-and-lock';
const TOPICS = '"topics":[{"tenant":"acme","flowType":"order","stepType":"charge"}]';

it('refuses a body whose bytes are no UTF-8, naming the body, and locks nothing', async () => {
  const { task_id } = await t.matching.enqueueStep({ step: step() });
  // "w\xff\xfe": read leniently, the worker id "w\ufffd\ufffd", and the task locked in that name.
  const body = Buffer.concat([Buffer.from('{"workerId":"w'), Buffer.from([0xff, 0xfe]), Buffer.from(`",${TOPICS},"waitMs":1}`)]);
  expect(await post(FETCH, body)).toEqual({
    status: 400, body: { code: 'ZD_INVALID_ARGUMENT', message: 'body: is not valid UTF-8 (JSON text is UTF-8, RFC 8259)' },
  });
  expect((await t.matching.getTask({ task_id })).task!.state).toBe(pb.TaskState.QUEUED);
});

it('refuses a lone surrogate escape, naming the field, and records nothing', async () => {
  const { task_id } = await t.matching.enqueueStep({ step: step() });
  const fetched = await post(FETCH, Buffer.from(`{"workerId":"A",${TOPICS},"waitMs":1}`));
  expect((fetched.body.tasks as { taskId: string }[]).map((x) => x.taskId)).toEqual([task_id]);
  const lone = 'holds a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair), which is no Unicode text';
  const failure = await post(`/v1/external-tasks/${task_id}/failure`, Buffer.from('{"workerId":"A","failure":{"message":"cut \\ud83d"},"retries":2}'));
  expect(failure).toEqual({ status: 400, body: { code: 'ZD_INVALID_ARGUMENT', message: `failure.message: ${lone}` } });
  const complete = await post(`/v1/external-tasks/${task_id}/complete`, Buffer.from('{"workerId":"A\\udc00"}'));
  expect(complete).toEqual({ status: 400, body: { code: 'ZD_INVALID_ARGUMENT', message: `workerId: ${lone}` } });
  const topic = await post(FETCH, Buffer.from('{"workerId":"B","topics":[{"tenant":"acme","flowType":"order\\ud800","stepType":"charge"}]}'));
  expect(topic).toEqual({ status: 400, body: { code: 'ZD_INVALID_ARGUMENT', message: `topics[0].flowType: ${lone}` } });
  // Still A's lock, no failure recorded; a surrogate pair written as escapes is text like any other.
  expect((await t.matching.getTask({ task_id })).task).toMatchObject({ state: pb.TaskState.LOCKED, last_error: null });
  const paired = await post(`/v1/external-tasks/${task_id}/failure`, Buffer.from('{"workerId":"A","failure":{"message":"ok \\ud83d\\ude00"},"retries":2}'));
  expect(paired).toEqual({ status: 200, body: { terminal: false } });
  expect((await t.matching.getTask({ task_id })).task!.last_error).toMatchObject({ message: 'ok \u{1F600}' });
});
