import type { Server } from 'node:net';

/**
 * Starts `server` on a "host:port" listen address (port 0 picks a free one)
 * and resolves with an address a client can dial (a wildcard host becomes
 * 127.0.0.1).
 */
export function listenOn(server: Server, listen: string): Promise<string> {
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(listen.slice(i + 1)), host.replace(/^\[|\]$/g, ''), () => {
      const a = server.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      resolve(`${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`);
    });
  });
}
