/**
 * A TCP proxy on 127.0.0.1 that can stop forwarding: a peer that freezes (a
 * long GC pause, SIGSTOP, a full network) without closing its connection.
 * While paused it reads nothing from the client, so the client's HTTP/2
 * stream gets no window back and its writes wait, as they would for a frozen peer.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; target: net.Socket }>();
  let paused = false;
  const server = net.createServer((client) => {
    const target = net.connect(targetPort, '127.0.0.1');
    const pair = { client, target };
    pairs.add(pair);
    client.pipe(target);
    target.pipe(client);
    if (paused) client.pause();
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
    resume() {
      paused = false;
      for (const p of pairs) {
        p.client.pipe(p.target);
        p.client.resume();
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
