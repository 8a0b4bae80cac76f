/**
 * A loopback TCP listener that accepts each connection and closes it at once (a node
 * that is starting or dying), counting the dials: what an SDK's reconnect backoff is
 * seen against.
 */
import * as net from 'node:net';

export interface ClosingListener {
  address: string;
  dials(): number;
  close(): Promise<void>;
}

export async function closingListener(): Promise<ClosingListener> {
  let dials = 0;
  const server = net.createServer((c) => {
    dials++;
    c.on('error', () => undefined);
    c.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    dials: () => dials,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
