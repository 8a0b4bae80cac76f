/**
 * Notices a node sent a peer over a link that then broke are lost with it
 * (written into a connection the network reset, or queued behind it), and so
 * are those its unary calls could not deliver while it redialled. Owners find
 * their lost READY and ATTEMPT notices in their backlog count; a long-polling
 * fetch has nothing of the kind, and slept through a task another node made
 * fetchable for the rest of its wait (DESIGN §7 asks a wake-up to reach it).
 * Now a node whose link to a peer is back rings the fetches and outcome waiters
 * it knows the peer has: "look again". Two nodes in this process, real gRPC
 * and a real redis-server; the link to one of them runs through a TCP proxy
 * that can hold and reset its connections.
 */
import { fetchClients, step, topic } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { freePort } from '../helpers/ports';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const WAIT = 20_000;
const nodes: TestNode[] = [];
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await proxy?.close();
});

it('wakes a fetch waiting at a peer whose link lost the notice of a task made fetchable, once the link is back', async () => {
  const prefix = uniquePrefix('relink');
  const config = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '5s', 'cluster.leaseTtl': '5s', 'fetch.maxWait': '30s' };
  // a's peers reach it through the proxy
  const aPort = await freePort();
  proxy = await tcpProxy(aPort);
  const a = await startTestNode(redis.url, prefix, {
    ...config, 'cluster.nodeId': 'n-a', 'internal.listen': `127.0.0.1:${aPort}`, 'internal.advertise': `127.0.0.1:${proxy.port}`,
  });
  nodes.push(a);
  const b = await startTestNode(redis.url, prefix, { ...config, 'cluster.nodeId': 'n-b' });
  nodes.push(b);
  await waitFor(() => a.node.membership.liveIds().length === 2 && b.node.membership.liveIds().length === 2,
    { timeoutMs: 10_000, description: 'both nodes see each other' });

  const started = Date.now();
  const fetching = fetchClients(a).external.fetchAndLock({ worker_id: 'A', topics: [topic()], wait_ms: WAIT, lock_duration_ms: 10_000 });
  await waitFor(() => b.node.view.fetchWaiters('acme:order:charge').includes('n-a'),
    { timeoutMs: 5000, description: 'b has heard that a waits on the topic' });

  // b's notice goes into a connection that stops moving, and is lost when the connection resets.
  proxy.pause();
  const r = await b.matching.enqueueStep({ step: step({ flow_id: 'relink-1' }) });
  await sleep(200);
  proxy.cut();
  proxy.resume();

  const got = await fetching;
  expect(got.tasks.map((t) => t.task_id)).toEqual([r.task_id]);
  expect(Date.now() - started).toBeLessThan(WAIT / 2);
}, 40_000);
