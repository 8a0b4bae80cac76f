/**
 * A call written on a Redis connection that closed before it was ready
 * (store/unready-close.ts): ioredis writes the commands Redis takes while it
 * loads (TIME among them) before the ready check answers, and lost them with
 * such a connection. The call is sent again on the next connection instead.
 * A TCP proxy holds the client's new connection mid-handshake, then drops it.
 */
import { Redis } from 'ioredis';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { useEmbeddedRedis } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { freePort } from '../helpers/ports';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let proxy: TcpProxy;
let client: RedisClient;
beforeEach(async () => {
  proxy = await tcpProxy(redis.port);
  client = createRedis({ url: `redis://127.0.0.1:${proxy.port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
});
afterEach(async () => {
  client.disconnect();
  await proxy.close();
});

it('answers a call written on a connection that closed before it was ready, once a connection is', async () => {
  expect(await client.ping()).toBe('PONG');
  // the connection drops; the next one gets through to Redis but hears nothing back
  proxy.freeze();
  proxy.cut();
  await waitFor(() => client.status === 'connect', { description: 'a new connection, not ready' });
  const time = client.time();
  // ... and drops too, before it was ready
  proxy.cut();
  proxy.resume();
  const settled = await Promise.race([
    time.then((t) => ({ answered: t.length })),
    new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 15_000)),
  ]);
  expect(settled).toEqual({ answered: 2 });
}, 30_000);

it('sends such calls again in the order they were made, ahead of those made after them', async () => {
  const heard: string[] = [];
  const sub = new Redis(redis.url);
  try {
    await sub.subscribe('unready-order');
    sub.on('message', (_ch: string, m: string) => heard.push(m));
    expect(await client.ping()).toBe('PONG');
    proxy.freeze();
    proxy.cut();
    await waitFor(() => client.status === 'connect', { description: 'a new connection, not ready' });
    const sent = [client.publish('unready-order', 'a'), client.publish('unready-order', 'b')];
    // a call made as the connection closes, before the lost ones go back to the queue
    const closed = new Promise<void>((resolve) => (client as Redis).prependOnceListener('close', () => {
      sent.push(client.publish('unready-order', 'c'));
      resolve();
    }));
    proxy.cut();
    await closed;
    proxy.resume();
    await Promise.all(sent);
    await waitFor(() => heard.length >= 3, { description: 'three messages' });
    expect(heard).toEqual(['a', 'b', 'c']);
  } finally {
    sub.disconnect();
  }
}, 30_000);

it('leaves a call written on a ready connection that closed to be sent again there: reconnects that fail meanwhile do not fail it', async () => {
  // One failed reconnect after the close is maxRetriesPerRequest's limit here: the calls held offline fail then.
  const own = createRedis({ url: `redis://127.0.0.1:${proxy.port}`, clusterNodes: [], sentinels: [], sentinelName: '', password: '' }, { maxRetriesPerRequest: 1 });
  own.on('error', () => undefined);
  let closes = 0;
  own.on('close', () => closes++);
  try {
    expect(await own.ping()).toBe('PONG');
    proxy.freeze();
    const time = own.time();
    const settled = time.then((t) => ({ answered: t.length }), (err: Error) => ({ failed: err.name }));
    // the ready connection drops with TIME unanswered; the next one reaches no Redis
    proxy.retarget(await freePort());
    proxy.cut();
    proxy.resume();
    await waitFor(() => closes >= 2, { description: 'a reconnect that failed' });
    proxy.retarget(redis.port);
    expect(await own.ping()).toBe('PONG');
    expect(await settled).toEqual({ answered: 2 });
  } finally {
    own.disconnect();
  }
}, 30_000);
