/**
 * limits.httpRequestTimeout bounds the time to receive a whole request on the
 * HTTP listener (docs/security.md "Limits", slow loris): a caller whose headers
 * came in time but whose body stops coming is answered 408 ZD_REQUEST_TIMEOUT
 * and loses the connection, rather than holding it (and a socket of the node)
 * for as long as it likes. A real node and redis-server over a raw TCP socket,
 * with the bound set short.
 */
import net from 'node:net';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
const REQUEST_TIMEOUT_MS = 400;

beforeAll(async () => {
  t = await startTestNode(redis.url, uniquePrefix('reqtimeout'), {
    'fetch.wait': '100ms', 'fetch.maxWait': '100ms', 'limits.httpHeadersTimeout': '200ms', 'limits.httpRequestTimeout': `${REQUEST_TIMEOUT_MS}ms`,
  });
});
afterAll(() => t.close());

it('answers a body that stops coming with 408 ZD_REQUEST_TIMEOUT within limits.httpRequestTimeout, and closes the connection', async () => {
  const at = t.node.httpAddress.lastIndexOf(':');
  const started = Date.now();
  const { text, elapsed } = await new Promise<{ text: string; elapsed: number }>((resolve, reject) => {
    const socket = net.connect(Number(t.node.httpAddress.slice(at + 1)), t.node.httpAddress.slice(0, at), () => {
      // The headers at once, then ten of the hundred bytes the body is said to hold, then nothing.
      socket.write('POST /v1/external-tasks/fetch-and-lock HTTP/1.1\r\nhost: zdmatch\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"workerId');
    });
    let got = '';
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection is still open after 3 s: ${JSON.stringify(got)}`));
    }, 3000);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (got += d));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ text: got, elapsed: Date.now() - started });
    });
  });
  expect(text).toMatch(/^HTTP\/1\.1 408 /);
  expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'ZD_REQUEST_TIMEOUT' });
  expect(elapsed).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  // Node sweeps every 100 ms here (a quarter of httpHeadersTimeout, at least 100 ms); the rest of
  // the margin is for a loaded runner, and a timeout of 3x (1 200 ms) is still out of it.
  expect(elapsed).toBeLessThan(REQUEST_TIMEOUT_MS * 2 + 100);
});
