/**
 * Config keys whose effect no other test would miss at a value other than its
 * default (DESIGN §9): each runs a real node and redis-server at a non-default
 * value and checks what the key is documented to do, so a key read wrongly, or
 * not at all, fails here.
 */
import net from 'node:net';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

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
