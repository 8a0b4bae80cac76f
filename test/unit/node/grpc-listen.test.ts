/**
 * A gRPC port already taken fails with the config key and the address, and
 * grpc-js's own "No address added" line stays out of the logger an embedding
 * application installed, which is in place again afterwards.
 */
import net from 'node:net';
import { setLogger } from '@grpc/grpc-js';
import { getLogger } from '@grpc/grpc-js/build/src/logging';
import { createServer } from 'nice-grpc';
import { listenGrpc } from '../../../src/node/grpc-listen';
import { freePort } from '../../helpers/ports';

const original = getLogger();
afterEach(() => setLogger(original));

it('names the key and the address of a taken port, without the grpc-js line', async () => {
  const lines: string[] = [];
  const embedder: Partial<Console> = { error: (m: unknown) => lines.push(String(m)) };
  setLogger(embedder);
  const port = await freePort();
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
  const server = createServer();
  try {
    const address = `127.0.0.1:${port}`;
    await expect(listenGrpc('api.listen', address, () => server.listen(address))).rejects.toThrow(
      `config api.listen: cannot listen on ${address}: address already in use`,
    );
    expect(lines).toEqual([]);
    expect(getLogger()).toBe(embedder);
  } finally {
    await server.shutdown();
    taken.close();
  }
});

it('passes any other failure through as it is', async () => {
  const err = new Error('Failed to set secure context');
  await expect(listenGrpc('internal.listen', '127.0.0.1:0', () => Promise.reject(err))).rejects.toBe(err);
  expect(getLogger()).toBe(original);
});

it("passes grpc-js's other lines to the installed logger while the bind runs", async () => {
  const lines: string[] = [];
  const embedder: Partial<Console> = { error: (m: unknown) => lines.push(String(m)) };
  setLogger(embedder);
  await expect(listenGrpc('api.listen', '127.0.0.1:0', async () => {
    getLogger().error?.('No address added out of total 1 resolved');
    getLogger().error?.('Failed to bind 127.0.0.1:0 for a reason of its own');
    return 1234;
  })).resolves.toBe(1234);
  expect(lines).toEqual(['Failed to bind 127.0.0.1:0 for a reason of its own']);
  expect(getLogger()).toBe(embedder);
});

it('names each reason once when several resolved addresses fail, alike or not', async () => {
  const message = 'No address added out of total 2 resolved errors: '
    + '[listen EADDRINUSE: address already in use 127.0.0.1:7233,listen EADDRINUSE: address already in use ::1:7233]';
  await expect(listenGrpc('api.listen', 'localhost:7233', () => Promise.reject(new Error(message)))).rejects.toThrow(
    new Error('config api.listen: cannot listen on localhost:7233: address already in use'),
  );
  const mixed = 'No address added out of total 3 resolved errors: '
    + '[listen EADDRINUSE: address already in use 127.0.0.1:7233, listen EACCES: permission denied ::1:7233, odd failure]';
  await expect(listenGrpc('api.listen', 'localhost:7233', () => Promise.reject(new Error(mixed)))).rejects.toThrow(
    new Error('config api.listen: cannot listen on localhost:7233: address already in use; permission denied; odd failure'),
  );
});

it('passes through a failure that only mentions the no-address words further on', async () => {
  const err = new Error('Failed to start: No address added out of total 1 resolved');
  await expect(listenGrpc('api.listen', '127.0.0.1:0', () => Promise.reject(err))).rejects.toBe(err);
});
