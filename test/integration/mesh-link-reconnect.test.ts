/**
 * Notices a node sent a peer over a link that then broke are lost with it
 * (written into a connection the network reset, or queued behind it), and so
 * are those its unary calls could not deliver while it redialled, and the
 * oldest of those queued for a peer that reads too slowly. Owners find
 * their lost READY and ATTEMPT notices in their backlog count; a long-polling
 * fetch has nothing of the kind, and slept through a task another node made
 * fetchable for the rest of its wait (DESIGN §7 asks a wake-up to reach it).
 * Now a node whose link to a peer is back, or whose queue for it dropped
 * notices, rings the fetches and outcome waiters it knows the peer has: "look
 * again". Two nodes in this process, real gRPC
 * and a real redis-server; the link to one of them runs through a TCP proxy
 * that can hold and reset its connections.
 */
import type { PeerLink } from '../../src/cluster/peer-link';
import { MAX_QUEUED_BELL_EVENTS } from '../../src/cluster/link-outbox';
import { pb } from '../../src/wire';
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

/** a, whose peers reach it through the proxy, and b; a fetch at a waits on the topic, and b knows. */
async function fetchWaitingAtA() {
  const prefix = uniquePrefix('relink');
  const config = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '5s', 'cluster.leaseTtl': '5s', 'fetch.maxWait': '30s' };
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
  return { a, b, proxy, started, fetching };
}

it('wakes a fetch waiting at a peer whose link lost the notice of a task made fetchable, once the link is back', async () => {
  const { b, proxy, started, fetching } = await fetchWaitingAtA();

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

it('wakes a fetch waiting at a peer whose stalled link dropped the notice of a task made fetchable, once the link moves again', async () => {
  const { b, proxy, started, fetching } = await fetchWaitingAtA();
  const linkToA = () => (b.node.mesh as unknown as { clients: Map<string, { link?: PeerLink }> }).clients.get('n-a')?.link;
  // Notices a's fetches do not wait on: harmless there.
  let n = 0;
  const others = (count: number) => {
    for (let i = 0; i < count; i++) b.node.mesh.ring('n-a', { kind: pb.DoorbellEvent.Kind.FETCH, partition: 0, queue: `acme:other:${'x'.repeat(200)}${n++}` });
  };

  // a stops reading: b's link fills, and its notices queue at b.
  proxy.pause();
  await waitFor(async () => {
    others(100);
    await sleep(10);
    return (linkToA()?.backlog.frames ?? 0) > 0;
  }, { timeoutMs: 10_000, description: "b's link to a stalled" });
  const r = await b.matching.enqueueStep({ step: step({ flow_id: 'stalled-1' }) });
  await sleep(50);
  // More notices than the queue keeps: the fetch's is among the oldest, dropped.
  others(MAX_QUEUED_BELL_EVENTS + 100);
  await waitFor(() => (linkToA()?.backlog.droppedBellEvents ?? 0) > 100, { timeoutMs: 5000, description: 'notices dropped' });
  proxy.resume();

  const got = await fetching;
  expect(got.tasks.map((t) => t.task_id)).toEqual([r.task_id]);
  expect(Date.now() - started).toBeLessThan(WAIT / 2);
}, 40_000);
