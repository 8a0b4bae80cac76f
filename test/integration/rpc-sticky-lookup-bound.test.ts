/**
 * An InvokeRpc that names no sticky worker looks up the one its flow remembers
 * in Redis first. That lookup must not hold the call past the caller's timeout
 * (DESIGN §4: the wait for a worker never runs past the caller's deadline):
 * with Redis frozen, or a Redis Cluster primary down, the call used to wait for
 * Redis, and its caller got nothing until its own deadline (DEADLINE_EXCEEDED)
 * although an idle worker could have answered. A remembered sticky worker is
 * affinity, not correctness: the call goes on without it. Real redis-server,
 * frozen with SIGSTOP; real gRPC.
 */
import { PeerUnreachableError } from '../../src/cluster/mesh';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode | undefined;
afterEach(async () => {
  redis.server.kill('SIGCONT');
  await t?.close();
});

it('runs an RPC on an idle worker, within its timeout, while Redis does not answer', async () => {
  t = await startTestNode(redis.url, uniquePrefix('rpclookup'));
  const s = openSlot(t.worker, registerFrame());
  await s.nextOf('registered');
  redis.server.kill('SIGSTOP');
  const since = Date.now();
  const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 1000 })
    .then((r) => ({ output: Buffer.from(r.output ?? []).toString() }), (e: Error) => ({ error: e.message }));
  const task = (await s.nextOf('rpc_task', 2000)).rpc_task!;
  s.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('answered') } });
  expect(await call).toEqual({ output: 'answered' });
  // The call's timeout, with room for a loaded machine; Redis is still frozen.
  expect(Date.now() - since).toBeLessThan(1000);
});

it('takes a peer it has not read among the members for unreachable, within the RPC budget, while Redis does not answer', async () => {
  t = await startTestNode(redis.url, uniquePrefix('rpcmembers'));
  redis.server.kill('SIGSTOP');
  // A peer whose capacity came over its link before its membership entry was read here: the
  // mesh reads the members once more, and with Redis frozen that read gives up, not the call.
  const since = Date.now();
  const outcome = await Promise.race([
    t.node.mesh.invokeRpc('n-not-read-yet', { tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', timeout_ms: 1000 }, new AbortController().signal)
      .then(() => 'answered', (e: Error) => (e instanceof PeerUnreachableError ? 'unreachable' : e.message)),
    new Promise((r) => setTimeout(() => r('still waiting after 1.5 s'), 1500)),
  ]);
  expect(outcome).toBe('unreachable');
  // Half the budget at most, and 250 ms here; room left for a loaded machine.
  expect(Date.now() - since).toBeLessThan(1000);
});

it('counts the lookup within the dispatch window, and names the whole window, when no worker takes the call', async () => {
  t = await startTestNode(redis.url, uniquePrefix('rpcwindow'));
  redis.server.kill('SIGSTOP');
  const since = Date.now();
  const message = await t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f1', flow_type: 'nobody-serves-this', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 600 })
    .then(() => 'answered', (e: Error) => e.message);
  // The caller's 600 ms, not what the 250-ms lookup left of them; and not 600 ms more after it.
  expect(message).toMatch(/ZD_RPC_UNAVAILABLE: rpc status: no worker took it within 600 ms/);
  expect(Date.now() - since).toBeLessThan(1100);
});
