/**
 * The HTTP/JSON fetch routes as HTTP itself asks a server to behave (RFC 9110,
 * RFC 9112), against a real node and redis-server: requests sent with
 * node:http, which lets a test choose the request target and read every
 * response header.
 */
import http from 'node:http';
import { pb } from '../../src/wire';
import { sleep, step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('httpproto'), { 'limits.maxLongPolls': 1 });
});
afterEach(() => t.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** One request on its own connection; `target` goes on the request line as it is. */
function send(method: string, target: string, body?: unknown, contentType: string | null = 'application/json'): Promise<Answer> {
  const [host, port] = t.node.httpAddress.split(':');
  return new Promise((resolve, reject) => {
    const headers = contentType === null ? {} : { 'content-type': contentType };
    const req = http.request({ host, port: Number(port), method, path: target, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const topic = { tenant: 'acme', flowType: 'order', stepType: 'charge' };
const FETCH = '/v1/external-tasks/fetch-and-lock';

it('answers another method with 405 and an Allow header naming POST', async () => {
  const { task_id } = await t.matching.enqueueStep({ step: step() });
  const answers = [];
  for (const [method, path] of [['GET', FETCH], ['PUT', FETCH], ['DELETE', `/v1/external-tasks/${task_id}/complete`], ['GET', `/v1/external-tasks/${task_id}/unlock`]]) {
    const r = await send(method!, path!);
    answers.push([method, path, r.status, r.headers.allow, r.headers['content-type'], r.body.code]);
  }
  expect(answers).toEqual([
    ['GET', FETCH, 405, 'POST', 'application/json', 'ZD_METHOD_NOT_ALLOWED'],
    ['PUT', FETCH, 405, 'POST', 'application/json', 'ZD_METHOD_NOT_ALLOWED'],
    ['DELETE', `/v1/external-tasks/${task_id}/complete`, 405, 'POST', 'application/json', 'ZD_METHOD_NOT_ALLOWED'],
    ['GET', `/v1/external-tasks/${task_id}/unlock`, 405, 'POST', 'application/json', 'ZD_METHOD_NOT_ALLOWED'],
  ]);
  // No Allow where there is no route to allow anything on.
  const unknown = await send('GET', '/v1/external-tasks/x/frobnicate');
  expect([unknown.status, unknown.headers.allow, unknown.body.code]).toEqual([404, undefined, 'ZD_UNKNOWN_ROUTE']);
});

// A browser page may POST text/plain or a form to any address unasked; JSON needs a CORS preflight.
it('refuses a body not sent as application/json with 415 naming the content-type, and changes nothing', async () => {
  const { task_id } = await t.matching.enqueueStep({ step: step() });
  const fetchBody = { workerId: 'A', topics: [topic], waitMs: 1 };
  const refused = [];
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', null]) {
    const r = await send('POST', FETCH, fetchBody, type);
    refused.push([type, r.status, r.body.code, r.body.message]);
  }
  expect(refused).toEqual([
    ['text/plain', 415, 'ZD_UNSUPPORTED_MEDIA_TYPE', 'content-type "text/plain": the body must be sent as application/json'],
    ['application/x-www-form-urlencoded', 415, 'ZD_UNSUPPORTED_MEDIA_TYPE', 'content-type "application/x-www-form-urlencoded": the body must be sent as application/json'],
    ['multipart/form-data; boundary=x', 415, 'ZD_UNSUPPORTED_MEDIA_TYPE', 'content-type "multipart/form-data; boundary=x": the body must be sent as application/json'],
    [null, 415, 'ZD_UNSUPPORTED_MEDIA_TYPE', 'content-type (none): the body must be sent as application/json'],
  ]);
  expect((await t.matching.getTask({ task_id })).task!.state).toBe(pb.TaskState.QUEUED);
  // A parameter or another case is still JSON.
  const taken = await send('POST', FETCH, fetchBody, 'Application/JSON; charset=utf-8');
  expect([taken.status, (taken.body.tasks as { taskId: string }[] | undefined)?.map((x) => x.taskId)]).toEqual([200, [task_id]]);
});

it('serves a request whose target is in absolute-form, as a proxy may forward it', async () => {
  const { task_id } = await t.matching.enqueueStep({ step: step() });
  const origin = `http://${t.node.httpAddress}`;
  const fetched = await send('POST', `${origin}${FETCH}?from=proxy`, { workerId: 'A', topics: [topic], waitMs: 1 });
  expect([fetched.status, (fetched.body.tasks as { taskId: string }[] | undefined)?.map((x) => x.taskId)]).toEqual([200, [task_id]]);
  const done = await send('POST', `${origin}/v1/external-tasks/${task_id}/complete`, { workerId: 'A' });
  expect([done.status, done.body]).toEqual([200, {}]);
  expect((await t.matching.waitOutcome({ task_id, wait_ms: 1000 })).outcome!.status).toBe(pb.OutcomeStatus.COMPLETED);
  const unknown = await send('POST', `${origin}/v1/external-tasks/x/frobnicate`, {});
  expect([unknown.status, unknown.body]).toEqual([404, { code: 'ZD_UNKNOWN_ROUTE', message: 'no route POST /v1/external-tasks/x/frobnicate' }]);
});

it('gives a long poll\'s limits.maxLongPolls place back as soon as its HTTP client disconnects', async () => {
  const [host, port] = t.node.httpAddress.split(':');
  const waiting = http.request({ host, port: Number(port), method: 'POST', path: FETCH, agent: false, headers: { 'content-type': 'application/json' } });
  waiting.on('error', () => undefined);
  waiting.end(JSON.stringify({ workerId: 'A', topics: [topic], waitMs: 30_000 }));
  for (let i = 0; i < 50 && t.node.longPolls.count === 0; i++) await sleep(20);
  const refused = await send('POST', FETCH, { workerId: 'B', topics: [topic], waitMs: 1000 });
  expect([refused.status, refused.body.code]).toEqual([429, 'ZD_TOO_MANY_LONG_POLLS']);
  // A fetch that asks for no long poll (wait 1 ms; 0 means the default) takes no place, so a full gate serves it.
  await t.matching.enqueueStep({ step: step({ step_type: 'refund' }) });
  const quick = await send('POST', FETCH, { workerId: 'B', topics: [{ ...topic, stepType: 'refund' }], waitMs: 1 });
  expect(quick.status).toBe(200);
  expect(quick.body.tasks).toHaveLength(1);
  expect(t.node.longPolls.count).toBe(1);
  waiting.destroy();
  await sleep(100);
  expect(t.node.longPolls.count).toBe(0);
  const served = await send('POST', FETCH, { workerId: 'B', topics: [topic], waitMs: 1000 });
  expect([served.status, served.body]).toEqual([200, { tasks: [] }]);
});
