/**
 * Nodes that advertise a bare IPv6 address with its port (what the chart's
 * `$(POD_IP):8803` gives on an IPv6 cluster) reach each other: the node
 * brackets the address before its peers dial it. Two real nodes on ::1 and a
 * real redis-server.
 */
import { freePorts } from '../helpers/ports';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix, useEmbeddedRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const nodes: TestNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

it('links two nodes that advertise fd00::1:8803-style addresses', async () => {
  const prefix = uniquePrefix('ipv6');
  const ports = await freePorts(2);
  const cluster = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1500ms', 'cluster.leaseTtl': '1500ms' };
  nodes.push(...await Promise.all(ports.map((port, i) => startTestNode(redis.url, prefix, {
    ...cluster, 'cluster.nodeId': `v6-${i}`, 'internal.listen': `[::1]:${port}`, 'internal.advertise': `::1:${port}`,
  }))));
  expect(nodes.map((n) => n.node.membership.get(n.node.nodeId)?.address ?? n.config.internal.advertise)).toEqual(ports.map((p) => `[::1]:${p}`));
  await waitFor(() => nodes.every((n) => n.node.mesh.linkCounts().outbound === 1 && n.node.mesh.linkCounts().inbound === 1),
    { timeoutMs: 10_000, description: 'each node linked to the other, both ways' });
}, 30_000);
