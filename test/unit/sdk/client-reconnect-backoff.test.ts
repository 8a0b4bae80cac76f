/**
 * A Client's and a FetchClient's reconnectBackoff sets how often their connection is
 * redialled while the node cannot be reached. Against a real loopback listener that
 * accepts each connection and closes it at once (a node that is starting or dying),
 * counting the dials over 0.8 s after one call; the connection redials on its own,
 * with or without calls.
 */
import { Client, FetchClient } from '../../../src';
import { closingListener } from '../../helpers/closing-listener';

const WINDOW_MS = 800;

type Dialer = { close(): void; ping(): Promise<unknown> };

/** How many times `make`'s connection dials in WINDOW_MS after one call. */
async function dialsWithin(make: (address: string) => Dialer): Promise<number> {
  const l = await closingListener();
  const d = make(l.address);
  try {
    await d.ping().catch(() => undefined);
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    return l.dials();
  } finally {
    d.close();
    await l.close();
  }
}

const short = { initialMs: 20, maxMs: 20 };
const long = { initialMs: 1000, maxMs: 1000 };

describe('reconnectBackoff of the clients', () => {
  it('has a Client redial every initialMs, not on the default backoff', async () => {
    const client = (reconnectBackoff: typeof short) => (address: string): Dialer => {
      const c = new Client({ address, defaultTimeoutMs: 200, reconnectBackoff });
      return { close: () => c.close(), ping: () => c.describeCluster() };
    };
    const [fast, slow] = await Promise.all([dialsWithin(client(short)), dialsWithin(client(long))]);
    // Every 16–24 ms: about 40 dials in 0.8 s. The default (100 ms growing by 1.6) dials 4 or 5
    // times, and a 1 s backoff once (twice at the jitter's far end).
    expect(fast).toBeGreaterThanOrEqual(15);
    expect(slow).toBeGreaterThanOrEqual(1);
    expect(slow).toBeLessThanOrEqual(2);
  });

  it('has a FetchClient redial every initialMs, not on the default backoff', async () => {
    const client = (reconnectBackoff: typeof short) => (address: string): Dialer => {
      const c = new FetchClient({ address, workerId: 'w1', defaultTimeoutMs: 200, reconnectBackoff });
      return { close: () => c.close(), ping: () => c.unlock('t1') };
    };
    const [fast, slow] = await Promise.all([dialsWithin(client(short)), dialsWithin(client(long))]);
    expect(fast).toBeGreaterThanOrEqual(15);
    expect(slow).toBeGreaterThanOrEqual(1);
    expect(slow).toBeLessThanOrEqual(2);
  });
});
