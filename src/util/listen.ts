import type { Server } from 'node:net';

/**
 * Starts `server` on a "host:port" listen address (port 0 picks a free one)
 * and resolves with an address a client can dial (a wildcard host becomes
 * 127.0.0.1). A failed bind rejects naming the config key it came from.
 */
export function listenOn(server: Server, listen: string, key: string): Promise<string> {
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i);
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(key, listen, err)));
    server.listen(Number(listen.slice(i + 1)), host.replace(/^\[|\]$/g, ''), () => {
      const a = server.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      resolve(`${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`);
    });
  });
}

/** `config metrics.listen: cannot listen on 0.0.0.0:9464: address already in use` (the system's words, without the code and address). */
export function listenError(key: string, listen: string, err: NodeJS.ErrnoException): Error {
  const why = err.syscall === 'listen' && err.code ? err.message.replace(/^listen E[A-Z]+: /, '').replace(/ \S+$/, '') : err.message;
  return new Error(`config ${key}: cannot listen on ${listen}: ${why}`);
}
