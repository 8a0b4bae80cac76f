/**
 * The HTTP statuses of the errors the HTTP/JSON fetch routes answer before or
 * beside the fetch verdicts (docs/errors.md lists each code's status): a
 * request whose headers arrive too late is a 408, headers past Node's byte
 * limit a 431 naming that limit, bytes that are no HTTP request and an HTTP/1.1 request without
 * Host a 400, a store reply the node cannot make sense of a 500, each with the
 * JSON body `{code, message}`. A client that retries on 5xx and gives up on
 * 4xx tells them apart by status alone. A real node and redis-server, spoken
 * to over a raw TCP socket so that the test can send what no HTTP client sends.
 */
import http from 'node:http';
import net from 'node:net';
import { Keys, partitionOfTaskId } from '../../src/store/keys';
import { step } from '../helpers/fetch';
import { keySnapshot } from '../helpers/key-snapshot';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
const prefix = uniquePrefix('httpstatus');
let t: TestNode;
// A task id whose record is a string, not a hash: Redis answers WRONGTYPE, which is no outage.
const CORRUPT = '3-0123456789abcdef01234567';

beforeAll(async () => {
  t = await startTestNode(redis.url, prefix, { 'limits.httpHeadersTimeout': '500ms' });
  await redis.command('SET', new Keys(prefix).task(partitionOfTaskId(CORRUPT, t.config.cluster.partitions)!, CORRUPT), 'not a hash');
});
afterAll(() => t.close());

/** Writes `raw` on a connection of its own and reads the one answer (status and JSON body). */
function exchange(raw: string): Promise<{ status: number; code: unknown; body: Record<string, unknown> }> {
  const at = t.node.httpAddress.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(t.node.httpAddress.slice(at + 1)), t.node.httpAddress.slice(0, at), () => socket.write(raw));
    let text = '';
    const settle = () => {
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, head));
      if (head < 0 || !length || Buffer.byteLength(text.slice(head + 4)) < Number(length[1])) return false;
      socket.destroy();
      const body = JSON.parse(text.slice(head + 4)) as Record<string, unknown>;
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), code: body.code, body });
      return true;
    };
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
      settle();
    });
    socket.on('error', reject);
    socket.on('close', () => settle() || reject(new Error(`no whole answer: ${JSON.stringify(text.slice(0, 200))}`)));
  });
}

const FETCH = '/v1/external-tasks/fetch-and-lock';
const JSON_FETCH = JSON.stringify({ workerId: 'w', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 });
const post = (path: string, body: string, headers = 'host: zdmatch\r\n') =>
  `POST ${path} HTTP/1.1\r\n${headers}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

it.each([
  ['headers that stop coming before limits.httpHeadersTimeout', 408, 'ZD_REQUEST_TIMEOUT', `POST ${FETCH} HTTP/1.1\r\nhost: zdmatch\r\n`],
  ['more header bytes than Node takes', 431, 'ZD_HEADERS_TOO_LARGE', post(FETCH, JSON_FETCH, `host: zdmatch\r\nx-big: ${'a'.repeat(20_000)}\r\n`)],
  ['bytes that are no HTTP request', 400, 'ZD_BAD_HTTP_REQUEST', 'NOT AN HTTP REQUEST\r\n\r\n'],
  ['an HTTP/1.1 request without Host', 400, 'ZD_BAD_HTTP_REQUEST', post(FETCH, JSON_FETCH, '')],
  ['a store reply that is no outage (a task record of the wrong type)', 500, 'ZD_INTERNAL', post(`/v1/external-tasks/${CORRUPT}/complete`, '{"workerId": "w"}')],
])('answers %s with %i %s', async (_what, status, code, raw) => {
  const answer = await exchange(raw);
  expect({ status: answer.status, code: answer.code }).toEqual({ status, code });
});

it('names the byte bound in the 431 for headers past it, and leaves the queued task as it was', async () => {
  // A task the fetch would lock, were the request served: a write would show in its keys.
  const { task_id } = await t.matching.enqueueStep({ step: step({ flow_id: 'big-headers' }) });
  const before = await keySnapshot(redis, prefix);
  const over = await exchange(post(FETCH, JSON_FETCH, `host: zdmatch\r\nx-big: ${'a'.repeat(http.maxHeaderSize + 1)}\r\n`));
  expect([over.status, over.code]).toEqual([431, 'ZD_HEADERS_TOO_LARGE']);
  // The operator reads from the message which bound it was (Node's --max-http-header-size), not only that one was hit.
  expect(over.body.message).toBe(`the request headers are too large or too many: more than ${http.maxHeaderSize} bytes of headers`);
  expect(await keySnapshot(redis, prefix)).toEqual(before);
  // The same fetch with small headers takes the task: it was there to take.
  const served = await exchange(post(FETCH, JSON_FETCH));
  expect(served.status).toBe(200);
  expect((served.body.tasks as { taskId: string }[]).map((x) => x.taskId)).toEqual([task_id]);
});
