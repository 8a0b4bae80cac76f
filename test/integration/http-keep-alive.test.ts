/**
 * The HTTP/JSON listener keeps an idle connection open for
 * limits.httpKeepAliveTimeout (65 s by default, above the 60 s idle timeout
 * of common load balancers), not Node's 5 s: a balancer that reuses a
 * connection the node closed under it answers that request 502. A real node
 * and redis-server; one keep-alive connection driven with node:http.
 */
import http from 'node:http';
import type net from 'node:net';
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

/** A fetch that finds nothing, on `agent`'s connection; resolves with the socket it went over. */
function request(agent: http.Agent): Promise<net.Socket> {
  const [host, port] = t!.node.httpAddress.split(':');
  const body = JSON.stringify({ workerId: 'w', topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1 });
  return new Promise((resolve, reject) => {
    const req = http.request({
      host, port: Number(port), method: 'POST', path: '/v1/external-tasks/fetch-and-lock', agent, headers: { 'content-type': 'application/json' },
    }, (res) => {
      expect(res.statusCode).toBe(200);
      res.resume();
      res.on('end', () => resolve(req.socket!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

it('defaults to 65 s', () => {
  expect(loadConfig({ env: {} }).limits.httpKeepAliveTimeout).toBe(65_000);
});

it('keeps an idle connection open past Node\'s 5 s, and closes it once limits.httpKeepAliveTimeout passes', async () => {
  t = await startTestNode(redis.url, uniquePrefix('keepalive'), { 'limits.httpKeepAliveTimeout': '7s' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const first = await request(agent);
    let closedAt = 0;
    first.on('close', () => (closedAt = Date.now()));
    const idleFrom = Date.now();
    await sleep(5600);
    expect(closedAt).toBe(0);
    expect(await request(agent)).toBe(first); // the same connection, reused after 5.6 s idle
    const idleAgain = Date.now();
    for (const until = idleAgain + 9000; !closedAt && Date.now() < until;) await sleep(100);
    expect(closedAt - idleAgain).toBeGreaterThanOrEqual(6500);
    expect(closedAt - idleFrom).toBeGreaterThan(7000);
  } finally {
    agent.destroy();
  }
}, 25_000);
