/**
 * A readiness probe for a zdmatch Worker: a tiny HTTP server that answers
 * GET /readyz with 200 while `worker.readiness().isReady` and 503 otherwise,
 * with the per-slot-kind report as JSON. docs/readiness.md shows this file
 * (a test keeps the two equal and runs it against a real node).
 */
import http from 'node:http';
import type { Readiness } from '../src'; // in your app: from 'zdmatch'

/** Anything with a readiness report: a Worker. */
export interface ReadinessSource {
  readiness(): Readiness;
}

/** Starts the probe server; resolves once it listens. Close it with `server.close()`. */
export function serveReadiness(worker: ReadinessSource, port = 8080, host = '0.0.0.0'): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/readyz') {
      res.writeHead(404).end();
      return;
    }
    const { isReady, queues } = worker.readiness();
    const body = {
      ready: isReady,
      queues: queues.map((q) => ({
        slotKind: q.slotKind,
        hasRegisteredStream: q.hasRegisteredStream,
        lastPermanentError: q.lastPermanentError?.message ?? null,
      })),
    };
    res.writeHead(isReady ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
