/**
 * Scores are on Redis's clock (DESIGN §3): a node reads TIME and dates the
 * reading halfway through its round trip. A reading held on the way (a paused
 * connection, a reconnect, a primary that froze and failed over) is answered
 * when Redis reads its clock, long after it was sent, and dated halfway it put
 * the node's idea of Redis's clock ahead by half the hold: its scores ran into
 * the future (it would outlive its death by as much) and its peers' looked that
 * much older to it. Node B reaches its redis-server through a TCP proxy that
 * holds B's writes for 3 s.
 */
import { sendCommand } from '../../src/store/embedded-redis';
import { useNodesBehindProxy } from '../helpers/nodes-behind-proxy';
import { uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const cluster = useNodesBehindProxy();
const { redis } = cluster;

it('keeps its scores on Redis\'s clock after a TIME reading held on the way', async () => {
  const proxy = await cluster.proxy();
  const b = await cluster.start(uniquePrefix('hb-slow-time'), { 'cluster.heartbeat': '1s', 'cluster.nodeTtl': '10s' }, true);
  const members = b.node.keys.members();
  const ahead = async () => {
    const [score, time] = await Promise.all([
      sendCommand(redis.port, ['ZSCORE', members, b.node.nodeId]),
      sendCommand(redis.port, ['TIME']),
    ]);
    const [sec, usec] = time as string[];
    return Number(score) - (Number(sec) * 1000 + Math.floor(Number(usec) / 1000));
  };
  await waitFor(async () => (await ahead()) > -1500, { description: 'B heartbeating' });

  // A beat begins while B's writes are held: its TIME reaches Redis 2-3 s after it was sent.
  proxy.pause();
  await sleep(3000);
  proxy.resume();

  // Each score B writes in the next 2.5 s against Redis's clock: at most a little ahead, not 1 s and more.
  let most = -Infinity;
  const until = Date.now() + 2500;
  while (Date.now() < until) {
    most = Math.max(most, await ahead());
    await sleep(50);
  }
  expect(most).toBeGreaterThan(-2500); // B beat in that time
  expect(most).toBeLessThan(500);
}, 30_000);
