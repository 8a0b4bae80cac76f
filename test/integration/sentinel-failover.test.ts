/**
 * redis.waitReplicas through a Sentinel failover (DESIGN §9, guarantee 1): an
 * enqueue the node acknowledged is on the primary Sentinel promoted. Real
 * processes: a primary, two replicas and a Sentinel; the node finds the
 * primary through the Sentinel and WAITs for one replica.
 *
 * The primary stalls (SIGSTOP: what DEBUG SLEEP or a long pause does) and
 * Sentinel promotes a replica and points the other one at it. The primary
 * resumes, still a primary in its own view: the node's enqueues go on there
 * and their WAITs find no replica (not acknowledged), until Sentinel turns it
 * into a replica of the new one, SLAVEOF with CLIENT KILL of its clients, with
 * a WAIT in flight. ioredis sends the commands in flight again on its next
 * connection (to the new primary), and a WAIT there, on a connection that has
 * written nothing, confirms only the new primary's own stream, which its
 * replica has at once: the enqueue was acknowledged although its write stayed
 * on the old primary, which the resync then wiped.
 *
 * The primary resumes only after the other replica follows the promoted one:
 * until then that replica still replicates from the old primary and confirms
 * its writes, which the resync from the promoted one then drops. No client
 * can tell such a WAIT from a good one (Redis's own limit: WAIT does not make
 * a failover keep every write; redis.waitReplicas equal to the replica count
 * does).
 */
import { sendCommand, startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';
import { uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { sleep, waitFor } from '../helpers/wait';

let primary: EmbeddedRedis | undefined;
let replicas: EmbeddedRedis[] = [];
let sentinel: TestSentinel | undefined;
let t: TestNode | undefined;

afterAll(async () => {
  primary?.kill('SIGCONT');
  await t?.close().catch(() => undefined);
  sentinel?.stop();
  await Promise.all([primary?.stop(), ...replicas.map((r) => r.stop())]);
});

const info = async (port: number): Promise<string> => String(await sendCommand(port, ['INFO', 'replication']).catch(() => ''));

it('loses no acknowledged enqueue when Sentinel fails the primary over', async () => {
  // No delay before a full sync: the old primary's resync from the new one takes milliseconds, not 5 s.
  const fast = ['--repl-diskless-sync-delay', '0'];
  primary = await startEmbeddedRedis({ args: fast });
  const p = primary.port;
  replicas = await Promise.all([0, 1].map(() => startEmbeddedRedis({ args: [...fast, '--replicaof', '127.0.0.1', String(p)] })));
  await waitFor(async () => (await info(p)).split('state=online').length === 3, { description: 'both replicas online' });

  // SENTINEL FAILOVER needs replicas the Sentinel knows and thinks healthy.
  sentinel = await startSentinel(primary.port, { replicas: 2 });
  const sport = sentinel.port;

  t = await startTestNode('', uniquePrefix('sfo'), {
    ...sentinel.nodeConfig, 'redis.waitReplicas': 1,
  });
  const node = t;
  // Producers enqueue one Step after another, each with a flow of its own; every
  // acknowledged task id is kept.
  const acked: { taskId: string; partition: number }[] = [];
  let failures = 0;
  let stop = false;
  let seq = 0;
  // Closes of the node's enqueue connection, and enqueues that were under way across one.
  let closes = 0;
  let acrossClose = 0;
  node.node.store.enqueueRedis.on('close', () => closes++);
  const producer = async (): Promise<void> => {
    while (!stop) {
      const i = seq++;
      const before = closes;
      try {
        const r = await node.matching.enqueueStep({
          step: { tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: 'pack', step_execution_id: 's' },
        });
        acked.push({ taskId: r.task_id!, partition: r.partition! });
      } catch {
        failures++;
        await sleep(10);
      } finally {
        if (closes !== before) acrossClose++;
      }
    }
  };
  let newPrimary = 0;
  const producers = Array.from({ length: 4 }, () => producer());
  try {
    await waitFor(() => acked.length >= 20, { description: 'enqueues acknowledged before the failover' });
    primary.kill('SIGSTOP');
    // Promoted, and the other replica replicates from the promoted one.
    await waitFor(async () => {
      const a = await sendCommand(sport, ['SENTINEL', 'get-master-addr-by-name', 'mymaster']);
      const to = Array.isArray(a) ? Number(a[1]) : p;
      if (to === p) return false;
      const other = replicas.find((r) => r.port !== to)!;
      const r = await info(other.port);
      return r.includes(`master_port:${to}`) && /master_link_status:up/.test(r);
    }, { timeoutMs: 15000, intervalMs: 50, description: 'Sentinel to promote a replica' });
    primary.kill('SIGCONT');
    // The failover is over once the old primary replicates from the new one.
    newPrimary = await waitFor(async () => {
      const a = await sendCommand(sport, ['SENTINEL', 'get-master-addr-by-name', 'mymaster']);
      const to = Array.isArray(a) ? Number(a[1]) : p;
      const r = await info(p);
      return to !== p && /role:slave/.test(r) && r.includes(`master_port:${to}`) && /master_link_status:up/.test(r) ? to : 0;
    }, { timeoutMs: 25000, intervalMs: 100, description: 'the old primary to replicate from the promoted one' });
    // and the node acknowledges enqueues again (through the new primary)
    const after = acked.length;
    await waitFor(() => acked.length >= after + 20, { timeoutMs: 10000, description: 'enqueues acknowledged after the failover' });
  } finally {
    stop = true;
    await Promise.all(producers);
  }
  // The failover did get in the enqueues' way: the old primary refused them while it
  // had no replica, and the CLIENT KILL closed the connection under enqueues under way.
  expect(failures).toBeGreaterThan(0);
  expect(acrossClose).toBeGreaterThan(0);

  // Every acknowledged enqueue is on the new primary.
  const missing: string[] = [];
  for (const a of acked) {
    if (await sendCommand(newPrimary, ['EXISTS', node.node.keys.task(a.partition, a.taskId)]) !== 1) missing.push(a.taskId);
  }
  expect({ acked: acked.length, missing }).toEqual({ acked: acked.length, missing: [] });
}, 45000);
