/**
 * The metrics listener a probe and Prometheus ask: /healthz answers while the
 * process lives, /readyz follows the node's readiness at each request, /metrics
 * serves the registry (500 with the reason when it cannot), anything else 404.
 */
import type http from 'node:http';
import { Counter, Registry } from 'prom-client';
import { startMetricsServer } from '../../../src/node/http-server';

let server: http.Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function get(url: string): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

it('answers /readyz from the readiness at each request, and /healthz regardless', async () => {
  let ready = false;
  const m = await startMetricsServer('127.0.0.1:0', new Registry(), () => ready);
  server = m.server;
  const base = `http://${m.address}`;
  expect(await get(`${base}/readyz`)).toMatchObject({ status: 503, body: 'not ready\n' });
  expect(await get(`${base}/healthz`)).toMatchObject({ status: 200, body: 'ok\n' });
  ready = true;
  expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, body: 'ready\n' });
  ready = false; // draining
  expect(await get(`${base}/readyz`)).toMatchObject({ status: 503 });
  expect(await get(`${base}/healthz`)).toMatchObject({ status: 200 });
  expect((await get(`${base}/nope`)).status).toBe(404);
  expect((await get(`${base}/metrics/extra`)).status).toBe(404);
});

it("serves the registry's metrics, and a failed collection as 500 with its reason", async () => {
  const registry = new Registry();
  new Counter({ name: 'zd_test_total', help: 'h', registers: [registry] }).inc(3);
  const m = await startMetricsServer('127.0.0.1:0', registry, () => true);
  server = m.server;
  const ok = await get(`http://${m.address}/metrics`);
  expect(ok.status).toBe(200);
  expect(ok.type).toBe(registry.contentType);
  expect(ok.body).toContain('zd_test_total 3');
  jest.spyOn(registry, 'metrics').mockRejectedValueOnce(new Error('collect failed'));
  expect(await get(`http://${m.address}/metrics`)).toMatchObject({ status: 500, body: 'collect failed' });
});

it('reports a wildcard listen address as one a client can dial', async () => {
  const m = await startMetricsServer('0.0.0.0:0', new Registry(), () => true);
  server = m.server;
  expect(m.address).toMatch(/^127\.0\.0\.1:\d+$/);
  expect(m.address).not.toBe('127.0.0.1:0');
  expect((await get(`http://${m.address}/healthz`)).status).toBe(200);
});
