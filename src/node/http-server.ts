/** The metrics listener: /metrics for Prometheus, /healthz and /readyz for probes. */
import http from 'node:http';
import type { Registry } from 'prom-client';
import { listenOn } from '../util/listen';

export function startMetricsServer(
  listen: string, registry: Registry, ready: () => boolean,
): Promise<{ server: http.Server; address: string }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/metrics') {
      registry.metrics().then(
        (body) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(body);
        },
        (err: Error) => {
          res.writeHead(500);
          res.end(err.message);
        },
      );
    } else if (req.url === '/healthz') {
      res.writeHead(200).end('ok\n');
    } else if (req.url === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503).end(ok ? 'ready\n' : 'not ready\n');
    } else {
      res.writeHead(404).end();
    }
  });
  return listenOn(server, listen, 'metrics.listen').then((address) => ({ server, address }));
}
