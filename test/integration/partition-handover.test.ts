/**
 * Partitions move on notice, not on lease expiry (DESIGN §3: release on leave,
 * acquire on notice, so that a moving partition costs no latency spike). With
 * a lease TTL of 30 s, a node that joins gets its rendezvous share, and a node
 * that leaves gracefully hands its share over, within a few heartbeats. Two
 * nodes in this process, real gRPC and a real redis-server.
 */
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const LEASE_TTL = 30_000;
const nodes: TestNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

const config = (id: string) => ({
  'cluster.nodeId': id, 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1s', 'cluster.leaseTtl': `${LEASE_TTL}ms`,
});

it('a joining node gets its share and a leaving node hands its share over long before any lease expires', async () => {
  const prefix = uniquePrefix('handover');
  const a = await startTestNode(redis.url, prefix, config('n-a'));
  nodes.push(a);
  const partitions = a.config.cluster.partitions;
  await waitFor(() => a.node.leases.heldPartitions().length === partitions, { timeoutMs: 10_000, description: 'a holds every partition' });

  const joinedAt = Date.now();
  const b = await startTestNode(redis.url, prefix, config('n-b'));
  nodes.push(b);
  await waitFor(() => b.node.leases.heldPartitions().length > 0
    && a.node.leases.heldPartitions().length + b.node.leases.heldPartitions().length === partitions,
    { timeoutMs: 10_000, description: 'the partitions split between a and b' });
  expect(Date.now() - joinedAt).toBeLessThan(LEASE_TTL / 3);
  const bShare = b.node.leases.heldPartitions();

  const leftAt = Date.now();
  await b.close(); // graceful: hands its leases back
  nodes.splice(nodes.indexOf(b), 1);
  await waitFor(() => a.node.leases.heldPartitions().length === partitions, { timeoutMs: 10_000, description: 'a holds every partition again' });
  expect(Date.now() - leftAt).toBeLessThan(LEASE_TTL / 3);
  for (const l of bShare) expect(a.node.leases.holds(l.partition)).toBeDefined();
});

it('a leaving node\'s share is taken over when its peers see its mesh link end, not at their next heartbeat', async () => {
  const prefix = uniquePrefix('handover');
  const slow = (id: string) => ({ ...config(id), 'cluster.heartbeat': '4s', 'cluster.nodeTtl': '12s' });
  const a = await startTestNode(redis.url, prefix, slow('n-a'));
  nodes.push(a);
  const b = await startTestNode(redis.url, prefix, slow('n-b'));
  nodes.push(b);
  const partitions = a.config.cluster.partitions;
  await waitFor(() => b.node.leases.heldPartitions().length > 0
    && a.node.leases.heldPartitions().length + b.node.leases.heldPartitions().length === partitions,
    { timeoutMs: 20_000, description: 'the partitions split between a and b' });
  // the nodes have talked over the mesh: a holds a link to b
  await waitFor(() => a.node.mesh.linkCounts().outbound === 1, { timeoutMs: 10_000, description: 'a has a link to b' });

  const leftAt = Date.now();
  await b.close();
  nodes.splice(nodes.indexOf(b), 1);
  await waitFor(() => a.node.leases.heldPartitions().length === partitions, { timeoutMs: 10_000, description: 'a holds every partition again' });
  expect(Date.now() - leftAt).toBeLessThan(2000); // well inside one 4-s heartbeat
});
