/**
 * A primary that freezes (SIGSTOP: a long pause, or a network that black-holes
 * it) closes no connection: the node's calls to it are never answered. Sentinel
 * promotes the replica and announces +switch-master; the node drops its
 * connection then and goes on with the new primary (leases, enqueues, starts),
 * while the old one stays frozen. Real processes: a primary, a replica and a
 * Sentinel (redis-server --sentinel).
 */
import { sendCommand, startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';
import { uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { waitFor } from '../helpers/wait';

let primary: EmbeddedRedis | undefined;
let replica: EmbeddedRedis | undefined;
let sentinel: TestSentinel | undefined;
let t: TestNode | undefined;

afterAll(async () => {
  primary?.kill('SIGCONT');
  await t?.close().catch(() => undefined);
  sentinel?.stop();
  await Promise.all([primary?.stop(), replica?.stop()]);
});

it('goes on with the primary Sentinel promoted while the old one stays frozen', async () => {
  primary = await startEmbeddedRedis();
  const p = primary.port;
  replica = await startEmbeddedRedis({ args: ['--replicaof', '127.0.0.1', String(p)] });
  await waitFor(async () => String(await sendCommand(p, ['INFO', 'replication'])).includes('state=online'), { description: 'the replica online' });
  sentinel = await startSentinel(p, { replicas: 1 });
  const sport = sentinel.port;

  t = await startTestNode('', uniquePrefix('sfrozen'), sentinel.nodeConfig);
  const node = t;
  const slot = openSlot(node.worker, registerFrame());
  await slot.nextOf('registered');
  const partitions = node.config.cluster.partitions;
  await waitFor(() => node.node.leases.heldPartitions().length === partitions, { description: 'every partition owned' });

  primary.kill('SIGSTOP');
  await waitFor(async () => {
    const a = await sendCommand(sport, ['SENTINEL', 'get-master-addr-by-name', 'mymaster']);
    return Array.isArray(a) && Number(a[1]) !== p;
  }, { timeoutMs: 15000, intervalMs: 50, description: 'Sentinel to promote the replica' });
  const promotedAt = Date.now();
  // The node owns its partitions again, on the new primary.
  await waitFor(async () => node.node.leases.heldPartitions().length === partitions
    && (await sendCommand(replica!.port, ['GET', node.node.keys.lease(0)])) !== null,
  { timeoutMs: 8000, intervalMs: 50, description: 'the leases taken on the new primary' });
  // A Step enqueued now is started in the slot.
  const r = await waitFor(() => node.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: 'after', flow_type: 'order', step_type: 'pack', step_execution_id: 's' },
  }, { signal: AbortSignal.timeout(1000) }).catch(() => undefined), { timeoutMs: 8000, description: 'an enqueue acknowledged' });
  expect((await slot.nextOf('step_task')).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
  expect(Date.now() - promotedAt).toBeLessThan(8000);
  slot.reset();
}, 40_000);
