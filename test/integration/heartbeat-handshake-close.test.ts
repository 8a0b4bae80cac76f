/**
 * A node's Redis connection dropped while it is still being set up (DESIGN §3:
 * a live node heartbeats every cluster.heartbeat). ioredis writes a TIME before
 * the connection is ready, and lost it with a connection that closed then: the
 * heartbeat awaited it for good, and its peers took the node for gone while it
 * served. Node A on a real redis-server; node B through a TCP proxy that holds
 * B's new connection mid-handshake, then drops it.
 */
import { useNodesBehindProxy } from '../helpers/nodes-behind-proxy';
import { uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const cluster = useNodesBehindProxy();

it('keeps heartbeating after a connection that closed before it was ready', async () => {
  const proxy = await cluster.proxy();
  const timing = { 'cluster.nodeTtl': '3s', 'cluster.heartbeat': '300ms', 'cluster.leaseTtl': '1500ms' };
  const prefix = uniquePrefix('hb-handshake');
  const a = await cluster.start(prefix, timing);
  const b = await cluster.start(prefix, timing, true);
  await waitFor(() => a.node.membership.liveIds().includes(b.node.nodeId), { description: 'A seeing B' });

  // B's connections dropped; the ones it opens next get through to Redis but hear nothing back,
  // so they stay unready while B's next heartbeats write their TIME on them ...
  proxy.freeze();
  proxy.cut();
  await sleep(1000);
  // ... and those connections drop too, before they were ready.
  proxy.cut();
  proxy.resume();

  // B heartbeats again: A still sees it well past nodeTtl.
  await sleep(4500);
  expect(a.node.membership.liveIds()).toContain(b.node.nodeId);
  expect(b.node.membership.liveIds()).toContain(a.node.nodeId);
}, 30_000);
