/**
 * The primary a node talks to becomes a replica while the node's connection to
 * it stays open: a switchover by hand (REPLICAOF), or a managed service whose
 * endpoint name moves to the new primary. Redis answers every write on that
 * connection READONLY and would go on doing so; the node reconnects on the
 * first READONLY and finds the new primary, so enqueues fail for a moment,
 * not until the connection happens to drop. The name that moves is a TCP
 * proxy here; both servers are real redis-servers, one replicating the other.
 */
import { Status } from 'nice-grpc';
import { sendCommand, startEmbeddedRedis, type EmbeddedRedis } from '../../src/store/embedded-redis';
import { partitionOf, Keys } from '../../src/store/keys';
import { startTestNode, type TestNode } from '../helpers/node';
import { uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

let a: EmbeddedRedis | undefined;
let b: EmbeddedRedis | undefined;
let proxy: TcpProxy | undefined;
let t: TestNode | undefined;
afterAll(async () => {
  await t?.close().catch(() => undefined);
  await proxy?.close();
  await Promise.all([a?.stop(), b?.stop()]);
});

const role = async (port: number) => /^role:(\S+)/m.exec(String(await sendCommand(port, ['INFO', 'replication'])))?.[1];

it('goes on enqueueing on the new primary once its primary is demoted under an open connection', async () => {
  a = await startEmbeddedRedis();
  b = await startEmbeddedRedis({ args: ['--replicaof', '127.0.0.1', String(a.port)] });
  await waitFor(async () => /master_link_status:up/.test(String(await sendCommand(b!.port, ['INFO', 'replication']))),
    { description: 'the replica in sync' });
  proxy = await tcpProxy(a.port);
  const prefix = uniquePrefix('demoted');
  t = await startTestNode(`redis://127.0.0.1:${proxy.port}`, prefix);
  const step = (id: string) => ({ step: { tenant: 'acme', flow_id: id, flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  await t.matching.enqueueStep(step('before'));

  // The switchover: the replica is promoted, the old primary follows it, and the name points at the new one.
  await sendCommand(b.port, ['REPLICAOF', 'NO', 'ONE']);
  await sendCommand(a.port, ['REPLICAOF', '127.0.0.1', String(b.port)]);
  proxy.retarget(b.port);
  expect([await role(a.port), await role(b.port)]).toEqual(['slave', 'master']);

  const errors: string[] = [];
  let taskId = '';
  await waitFor(async () => {
    try {
      taskId = (await t!.matching.enqueueStep(step('after'))).task_id;
      return true;
    } catch (err) {
      errors.push(`${Status[(err as { code: Status }).code]} ${(err as Error).message}`);
      return false;
    }
  }, { timeoutMs: 5000, intervalMs: 100, description: 'an enqueue acknowledged after the switchover' });
  // At most the call that met READONLY failed, as retryable; the next went to the new primary.
  expect(errors.length).toBeLessThanOrEqual(2);
  for (const e of errors) expect(e).toMatch(/^UNAVAILABLE .*ZD_STORE_UNAVAILABLE/);
  const keys = new Keys(prefix);
  expect(await sendCommand(b.port, ['EXISTS', keys.task(partitionOf('acme', 'after', 8), taskId)])).toBe(1);
}, 30_000);
