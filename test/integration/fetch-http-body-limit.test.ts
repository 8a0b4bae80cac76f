/**
 * The HTTP/JSON fetch routes take a body of up to limits.maxPayloadBytes as
 * base64 plus 64 KiB (docs/security.md "Limits", docs/fetch.md "HTTP/JSON"):
 * a body of exactly that many bytes is read and served, one byte more is a 413
 * ZD_BODY_TOO_LARGE naming the bound, and the connection is closed. A bound
 * set lower would refuse a Complete carrying a result of limits.maxPayloadBytes
 * (its base64 and the JSON around it); one set higher, or not enforced, would
 * let any caller make the node buffer bodies of any size. A real node and
 * redis-server, spoken to over a raw TCP socket.
 */
import net from 'node:net';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
const MAX_PAYLOAD = 1024;
/** limits.maxPayloadBytes as base64, plus 64 KiB. */
const LIMIT = Math.ceil(MAX_PAYLOAD / 3) * 4 + 64 * 1024;

beforeAll(async () => {
  t = await startTestNode(redis.url, uniquePrefix('bodylimit'), { 'limits.maxPayloadBytes': MAX_PAYLOAD });
});
afterAll(() => t.close());

interface Answer { status: number; headers: string; body: { code?: unknown; message?: unknown; tasks?: unknown }; closedByServer: boolean }

/** Writes one request on a connection of its own; resolves with the answer and whether the node then closed the connection. */
function exchange(raw: string): Promise<Answer> {
  const at = t.node.httpAddress.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(t.node.httpAddress.slice(at + 1)), t.node.httpAddress.slice(0, at), () => socket.write(raw));
    let text = '';
    let answered: Omit<Answer, 'closedByServer'> | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      if (answered) resolve({ ...answered, closedByServer: false });
      else reject(new Error(`no whole answer: ${JSON.stringify(text.slice(0, 200))}`));
    }, 300);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, head));
      if (answered || head < 0 || !length || Buffer.byteLength(text.slice(head + 4)) < Number(length[1])) return;
      answered = { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), headers: text.slice(0, head), body: JSON.parse(text.slice(head + 4)) as Answer['body'] };
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      if (answered) resolve({ ...answered, closedByServer: true });
      else reject(new Error(`closed without a whole answer: ${JSON.stringify(text.slice(0, 200))}`));
    });
  });
}

/** A fetch-and-lock request whose JSON body is padded with spaces to exactly `bytes` bytes. */
function fetchOf(bytes: number): string {
  const json = JSON.stringify({ workerId: 'w', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 });
  const body = json + ' '.repeat(bytes - json.length);
  expect(Buffer.byteLength(body)).toBe(bytes);
  return `POST /v1/external-tasks/fetch-and-lock HTTP/1.1\r\nhost: zdmatch\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n${body}`;
}

it('serves a body of exactly limits.maxPayloadBytes as base64 plus 64 KiB', async () => {
  const a = await exchange(fetchOf(LIMIT));
  expect([a.status, a.body]).toEqual([200, { tasks: [] }]);
});

it('answers one byte more with 413 ZD_BODY_TOO_LARGE naming the bound, and closes the connection', async () => {
  const a = await exchange(fetchOf(LIMIT + 1));
  expect([a.status, a.body.code, a.body.message]).toEqual([413, 'ZD_BODY_TOO_LARGE', `the request body exceeds ${LIMIT} bytes`]);
  expect(a.headers).toMatch(/\r\nconnection: close\r\n/i);
  expect(a.closedByServer).toBe(true);
});
