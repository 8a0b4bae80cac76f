/**
 * `zdmatch bench --local` picks its node's ports free a moment before the node
 * binds them; another process can take one meanwhile (on a busy machine, an
 * outgoing connection's local port). The node then exits with "address already
 * in use", and the bench starts it again on other ports instead of failing.
 * A real node process on a real redis-server; the taken port is a listener the
 * test holds. Needs `npm run build` (npm test does it).
 */
import net from 'node:net';
// The built module: it starts `main.js serve` beside itself, which exists in dist/ only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startNodeProcess } = require('../../dist/cli/bench/local') as typeof import('../../src/cli/bench/local');
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();

it('starts the node again on other ports when one it was given is taken before it binds', async () => {
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  const takenPort = (taken.address() as net.AddressInfo).port;
  const handed: number[] = [];
  // The first node gets the taken port as its API port; every port after that is free.
  const pickPort = async () => {
    const port = handed.length === 0 ? takenPort : await freePort();
    handed.push(port);
    return port;
  };
  try {
    const node = await startNodeProcess(redis.url, uniquePrefix('benchports'), { pickPort });
    try {
      expect(handed.length).toBe(8); // four ports for the node that could not bind, four for the one that runs
      expect(node.apiAddress).not.toBe(`127.0.0.1:${takenPort}`);
      expect(node.apiAddress).toBe(`127.0.0.1:${handed[4]}`);
    } finally {
      await node.stop();
    }
  } finally {
    taken.close();
  }
}, 60_000);

it('gives up with the node\'s own words when its ports are taken every time', async () => {
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  const takenPort = (taken.address() as net.AddressInfo).port;
  let n = 0;
  // Every node's API port is the taken one.
  const pickPort = async () => (n++ % 4 === 0 ? takenPort : freePort());
  try {
    // A node that did start anyway is stopped, not left running past the test.
    const failure = await startNodeProcess(redis.url, uniquePrefix('benchports'), { pickPort }).then(
      async (node) => {
        await node.stop();
        return new Error('the node started');
      },
      (err: Error) => err,
    );
    expect(failure.message).toMatch(/address already in use/);
    expect(n).toBe(12); // three starts of four ports each
  } finally {
    taken.close();
  }
}, 60_000);
