/**
 * An InvokeRpc routed to a peer it cannot reach (DESIGN §4): the peer is a
 * member and its workers' capacity still arrives (over its own link to us),
 * but nothing connects to it. The call never left, so nothing ran there: it
 * goes to the next node that can run it (here, this node's busy worker)
 * instead of failing UNAVAILABLE for that peer, and fails UNAVAILABLE at once
 * only when no node is left. Two nodes in this process, real gRPC, a real
 * redis-server, and a TCP proxy in front of b's mesh port that stops accepting.
 */
import { ClientError, Status } from 'nice-grpc';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let a: TestNode;
let b: TestNode;
let bMesh: TcpProxy;
const slots: RawSlot[] = [];

beforeEach(async () => {
  const prefix = uniquePrefix('unreach');
  const timing = { 'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1500ms', 'cluster.leaseTtl': '1500ms' };
  a = await startTestNode(redis.url, prefix, { ...timing, 'cluster.nodeId': 'n-a' });
  // b advertises the proxy: every peer reaches b's mesh through it, until it closes
  bMesh = await tcpProxy(1);
  b = await startTestNode(redis.url, prefix, { ...timing, 'cluster.nodeId': 'n-b', 'internal.advertise': `127.0.0.1:${bMesh.port}` });
  bMesh.retarget(b.node.internalPort);
  const partitions = a.config.cluster.partitions;
  await waitFor(() => a.node.leases.heldPartitions().length === partitions / 2 && b.node.leases.heldPartitions().length === partitions / 2,
    { timeoutMs: 30_000, description: 'each node holds its half of the partitions' });
});

afterEach(async () => {
  for (const s of slots.splice(0)) s.reset();
  await bMesh.close();
  await Promise.all([a.close(), b.close()]);
});

async function slotAt(node: TestNode, appWorkerId: string): Promise<RawSlot> {
  const s = openSlot(node.worker, registerFrame({ app_worker_id: appWorkerId }));
  slots.push(s);
  await s.nextOf('registered');
  return s;
}

/** w-a takes a Step and keeps it: a's only worker is busy until the test finishes the Step. */
async function busyWorkerAtA(): Promise<{ wa: RawSlot; finish(): Promise<void> }> {
  const wa = await slotAt(a, 'w-a');
  await a.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 'charge', step_execution_id: 's' } });
  const step = (await wa.nextOf('step_task')).step_task!;
  return {
    wa,
    async finish() {
      wa.send({ step_result: { task_token: step.task_token, output: Buffer.from('ok') } });
      await wa.nextOf('result_ack');
    },
  };
}

const aSeesBIdle = () => waitFor(() => a.node.view.idleNodeFor('acme', 'order') === 'n-b', { timeoutMs: 5000, description: "a sees b's idle slot" });
const call = (flowId: string) =>
  a.matching.invokeRpc({ tenant: 'acme', flow_id: flowId, flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 5000 });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function answersAt(wa: RawSlot, flowId: string): Promise<void> {
  const task = (await wa.nextOf('rpc_task', 3000)).rpc_task!;
  expect(task.flow_id).toBe(flowId);
  wa.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from w-a') } });
}

it("runs the call on this node's busy worker when the peer its view names as idle cannot be reached", async () => {
  const { wa, finish } = await busyWorkerAtA();
  await slotAt(b, 'w-b');
  await aSeesBIdle();
  await bMesh.close();
  expect(a.node.view.idleNodeFor('acme', 'order')).toBe('n-b'); // b is where the call goes first
  const r = call('u1');
  await pause(300); // it waits here for w-a rather than failing for b
  await finish();
  await answersAt(wa, 'u1');
  expect((await r).app_worker_id).toBe('w-a');
});

it('keeps a call waiting here when the peer whose slot went idle cannot be reached', async () => {
  const { wa, finish } = await busyWorkerAtA();
  await bMesh.close();
  const r = call('u2');
  await pause(200); // it waits here for w-a
  // b's idle slot moves the waiting call there, where it cannot go: it comes back
  await slotAt(b, 'w-b');
  await aSeesBIdle();
  await pause(300);
  await finish();
  await answersAt(wa, 'u2');
  expect((await r).app_worker_id).toBe('w-a');
});

it('fails UNAVAILABLE at once, naming the peer, when the only worker is on a peer that cannot be reached', async () => {
  await slotAt(b, 'w-b');
  await aSeesBIdle();
  await bMesh.close();
  const started = Date.now();
  const err = await call('u3').then(() => undefined, (e: ClientError) => e);
  expect(err?.code).toBe(Status.UNAVAILABLE);
  expect(err?.details).toMatch(/peer n-b is not reachable/);
  expect(Date.now() - started).toBeLessThan(3000);
});
