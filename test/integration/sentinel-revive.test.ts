/**
 * A client that ioredis ended without being asked is connected again
 * (store/sentinel-revive.ts), and one ended on purpose stays ended. A plain
 * client on the embedded redis-server, given no reconnects of its own, stands
 * in for the Sentinel client ioredis ends: a CLIENT KILL closes its connection.
 */
import { Redis } from 'ioredis';
import { reviveUnaskedEnd } from '../../src/store/sentinel-revive';
import { useEmbeddedRedis } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

/** A client that ends at its first closed connection, as ioredis ends a Sentinel client mid-failover. */
function endingClient(name: string): Redis {
  const client = new Redis({ port: redis.port, host: '127.0.0.1', retryStrategy: () => null, connectionName: name, maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  reviveUnaskedEnd(client);
  return client;
}

it('connects again a client that ended without being asked, and it serves', async () => {
  const client = endingClient('revive-unasked');
  try {
    expect(await client.ping()).toBe('PONG');
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    await redis.command('CLIENT', 'KILL', 'ID', Number(await client.client('ID')));
    await ended;
    await waitFor(() => client.status === 'ready', { timeoutMs: 2000, description: 'the client connected again' });
    expect(await client.ping()).toBe('PONG');
  } finally {
    client.disconnect();
  }
});

it('leaves a client ended by disconnect() or quit() ended', async () => {
  const disconnected = endingClient('revive-asked-1');
  const quitted = endingClient('revive-asked-2');
  try {
    expect(await disconnected.ping()).toBe('PONG');
    expect(await quitted.ping()).toBe('PONG');
    disconnected.disconnect();
    await quitted.quit();
    await sleep(300); // past the 100 ms after which an unasked end is connected again
    expect([disconnected.status, quitted.status]).toEqual(['end', 'end']);
  } finally {
    disconnected.disconnect();
    quitted.disconnect();
  }
});
