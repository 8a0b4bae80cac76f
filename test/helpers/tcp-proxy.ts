/**
 * A TCP proxy on 127.0.0.1 that can stop forwarding: a peer that freezes (a
 * long GC pause, SIGSTOP, a full network) without closing its connection.
 * While paused it reads nothing from the client, so the client's HTTP/2
 * stream gets no window back and its writes wait, as they would for a frozen peer.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Stops reading from clients (their writes wait); the target's answers still flow. */
  pause(): void;
  /** Stops both directions: the peer says nothing either (a frozen node, a black-holing network). */
  freeze(): void;
  /** Undoes pause() or freeze(). */
  resume(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; target: net.Socket }>();
  let paused = false;
  let frozen = false;
  const server = net.createServer((client) => {
    const target = net.connect(targetPort, '127.0.0.1');
    const pair = { client, target };
    pairs.add(pair);
    client.pipe(target);
    target.pipe(client);
    if (paused || frozen) client.pause();
    if (frozen) target.pause();
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      target.destroy();
    };
    client.on('error', end).on('close', end);
    target.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    pause() {
      paused = true;
      for (const p of pairs) {
        p.client.unpipe(p.target);
        p.client.pause();
      }
    },
    freeze() {
      frozen = true;
      for (const p of pairs) {
        p.client.unpipe(p.target);
        p.target.unpipe(p.client);
        p.client.pause();
        p.target.pause();
      }
    },
    resume() {
      const wasFrozen = frozen;
      paused = false;
      frozen = false;
      for (const p of pairs) {
        p.client.pipe(p.target);
        p.client.resume();
        if (wasFrozen) {
          p.target.pipe(p.client);
          p.target.resume();
        }
      }
    },
    close: () => {
      for (const p of pairs) {
        p.client.destroy();
        p.target.destroy();
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
