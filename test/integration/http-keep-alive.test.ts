/**
 * The HTTP/JSON listener keeps an idle connection open for
 * limits.httpKeepAliveTimeout (65 s by default, above the 60 s idle timeout
 * of common load balancers), not Node's 5 s: a balancer that reuses a
 * connection the node closed under it answers that request 502. A real node
 * and redis-server; one connection that speaks HTTP/1.1 by hand, so only the
 * server decides when it closes.
 */
import net from 'node:net';
import { loadConfig } from '../../src/config';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A fetch that finds nothing, as HTTP/1.1 bytes (no client-side keep-alive logic in between). */
function fetchRequest(): string {
  const body = JSON.stringify({ workerId: 'w', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 });
  return `POST /v1/external-tasks/fetch-and-lock HTTP/1.1\r\nhost: zdmatch\r\ncontent-type: application/json\r\n`
    + `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** One connection to the node's HTTP listener: `ask` sends a request and resolves with its answer's status line; `closed` with when the node closed it. */
async function connection(): Promise<{ ask(): Promise<string>; closed: Promise<number>; socket: net.Socket }> {
  const [host, port] = t!.node.httpAddress.split(':');
  const socket = net.connect(Number(port), host);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let pending: ((status: string) => void) | undefined;
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    const m = /^(HTTP\/1\.1 \d+)[^]*?\r\ncontent-length: (\d+)\r\n[^]*?\r\n\r\n/i.exec(text);
    if (m && text.length >= m[0].length + Number(m[2])) {
      text = text.slice(m[0].length + Number(m[2]));
      pending?.(m[1]!);
    }
  });
  const closed = new Promise<number>((resolve) => socket.once('end', () => resolve(Date.now())));
  return {
    socket, closed,
    ask: () => new Promise<string>((resolve) => {
      pending = resolve;
      socket.write(fetchRequest());
    }),
  };
}

it('defaults to 65 s', () => {
  expect(loadConfig({ env: {} }).limits.httpKeepAliveTimeout).toBe(65_000);
});

it('keeps an idle connection open for limits.httpKeepAliveTimeout, and closes it once that passes', async () => {
  // 1.5 s against Node's own 5 s: closed at 1.5 s, the listener took the key; at 5 s, Node's default held.
  t = await startTestNode(redis.url, uniquePrefix('keepalive'), { 'limits.httpKeepAliveTimeout': '1500ms' });
  const c = await connection();
  try {
    expect(await c.ask()).toBe('HTTP/1.1 200');
    await sleep(1000);
    expect(await c.ask()).toBe('HTTP/1.1 200'); // the same connection, after 1 s idle
    const idleFrom = Date.now();
    const closedAt = await Promise.race([c.closed, sleep(6000).then(() => Infinity)]);
    expect(closedAt - idleFrom).toBeGreaterThanOrEqual(1300);
    expect(closedAt - idleFrom).toBeLessThan(3000);
  } finally {
    c.socket.destroy();
  }
}, 20_000);
