/**
 * A node's mesh, once closed (the node stops), opens no connection to a peer
 * again: a notice rung after close (a late outcome, a fetch's ring) made a
 * new channel to the peer that nothing would close, which kept its socket and
 * timers alive past the node's stop.
 */
import { pb } from '../../src/wire';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const nodes: TestNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

it('opens no channel to a peer for a notice rung after the mesh closed', async () => {
  const prefix = uniquePrefix('mesh-closed');
  const config = { 'cluster.heartbeat': '200ms' };
  const a = await startTestNode(redis.url, prefix, { ...config, 'cluster.nodeId': 'c-a' });
  nodes.push(a);
  const b = await startTestNode(redis.url, prefix, { ...config, 'cluster.nodeId': 'c-b' });
  nodes.push(b);
  await waitFor(() => a.node.membership.liveIds().length === 2, { timeoutMs: 10_000, description: 'a sees b' });
  const clients = (a.node.mesh as unknown as { clients: Map<string, unknown> }).clients;
  await a.node.mesh.close();
  expect(clients.size).toBe(0);
  a.node.mesh.ring('c-b', { kind: pb.DoorbellEvent.Kind.OUTCOME, partition: 0, task_id: '' });
  await sleep(100); // past the notices' coalescing
  expect(clients.size).toBe(0);
});
