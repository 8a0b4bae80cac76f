/**
 * connectionEpoch on one Redis (store/redis.ts): the mark a WAIT is checked
 * against moves when the client's connection closes, so a write and a WAIT on
 * either side of a reconnect are never taken for one connection's.
 */
import type { Redis } from 'ioredis';
import { connectionEpoch, createRedis } from '../../src/store/redis';
import { useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();

it('moves the mark of a client whose connection closed, and only then', async () => {
  const client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
  client.on('error', () => undefined);
  try {
    expect(await client.ping()).toBe('PONG');
    const before = connectionEpoch(client, ['k']);
    await client.set('k', 'v');
    expect(connectionEpoch(client, ['k'])).toBe(before);
    await redis.command('CLIENT', 'KILL', 'ID', Number(await (client as Redis).client('ID')));
    await waitFor(() => connectionEpoch(client, ['k']) !== before, { timeoutMs: 2000, description: 'the mark moved' });
    expect(await client.ping()).toBe('PONG');
    expect(connectionEpoch(client, ['k'])).not.toBe(before);
  } finally {
    client.disconnect();
  }
});
