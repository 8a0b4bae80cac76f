/**
 * The SDK clients' own deadlines against a real node: an RPC nobody takes
 * ends with the server's UNAVAILABLE, not the client's deadline, however the
 * caller gave its timeout; a FetchClient call past its timeout rejects with a
 * ZdDeadlineExceededError as Client calls do, never a bare DOMException.
 */
import { Client, FetchClient, ZdDeadlineExceededError, ZdError, ZdUnavailableError } from '../../src';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

const redis = useEmbeddedRedis();
let t: TestNode;
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('dl'));
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await t.close();
});

const rpc = { tenant: 'acme', flowId: 'f1', flowType: 'order', rpcName: 'status' };

describe('Client.invokeRpc with a timeout under matching.dispatchWait (10 s), no worker', () => {
  let client: Client;
  beforeEach(() => {
    client = new Client({ address: t.node.apiAddress });
    cleanups.push(() => client.close());
  });

  it('rejects with ZdUnavailableError when the timeout is in the request', async () => {
    const started = Date.now();
    const err = await client.invokeRpc({ ...rpc, timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZdUnavailableError);
    // The server gave up at the caller's budget, not after its own dispatchWait.
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('rejects with ZdUnavailableError when the timeout is only in CallOptions', async () => {
    const started = Date.now();
    const err = await client.invokeRpc(rpc, { timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZdUnavailableError);
    expect(Date.now() - started).toBeLessThan(8000);
  });
});

describe('FetchClient against a frozen node', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await tcpProxy(Number(t.node.apiAddress.split(':').pop()));
    cleanups.push(() => proxy.close());
  });

  it('a call past its own timeout rejects with ZdDeadlineExceededError', async () => {
    const fetch = new FetchClient({ address: `127.0.0.1:${proxy.port}`, workerId: 'A' });
    cleanups.push(() => fetch.close());
    // Connected first, so only the frozen peer (not the dial) holds the call.
    await fetch.fetchAndLock({ topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 10 });
    proxy.pause();
    const started = Date.now();
    const err = await fetch.unlock('3-0123456789abcdef01234567', { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZdDeadlineExceededError);
    expect(err).toBeInstanceOf(ZdError);
    expect((err as Error).message).toContain('300 ms');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
