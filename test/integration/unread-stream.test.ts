/**
 * A worker that sends frames but reads none of the node's answers (DESIGN §4, §5):
 * the node holds a bounded number of frames for it, then ends the stream
 * (ZD_STREAM_NOT_READ); a task whose frame it never read goes back unconsumed.
 * One node, real gRPC (the worker side is a raw stream that stops reading) and a
 * real redis-server.
 */
import { ClientError, Status } from 'nice-grpc';
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { registerFrame } from '../helpers/raw-slot';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('unread'));
});
afterEach(() => t.close());

/** A registered stream whose worker sends what `send` gets and reads nothing after Registered. */
async function deafWorker() {
  const outgoing: pb.IWorkerFrame[] = [registerFrame()];
  let wake: (() => void) | undefined;
  async function* requests(): AsyncIterable<pb.IWorkerFrame> {
    for (;;) {
      while (outgoing.length > 0) yield outgoing.shift()!;
      await new Promise<void>((r) => (wake = r));
    }
  }
  const abort = new AbortController();
  const frames = t.worker.connect(requests(), { signal: abort.signal })[Symbol.asyncIterator]();
  expect((await frames.next()).value.frame).toBe('registered');
  return {
    frames, abort,
    /** Results with a long bogus token: each is answered with an ack that echoes it. */
    async sendBogusResults(n: number): Promise<void> {
      const token = 'x'.repeat(512 * 1024);
      for (let i = 0; i < n; i++) {
        outgoing.push({ step_result: { task_token: token, output: Buffer.from('o') } });
        wake?.();
        await sleep(5);
      }
    },
  };
}

const returnedAttempts = async () =>
  (await t.node.metrics.registry.getSingleMetric('dexzd_matching_returned_attempts_total')!.get()).values as { labels: Record<string, unknown>; value: number }[];

const slotOf = (node: TestNode) => [...(node.node.gateway as unknown as { slots: Map<string, { out: { size: number } }> }).slots.values()][0];

it('ends a stream whose worker reads none of its answers once 64 wait, instead of holding them all', async () => {
  // Guards the bound: each bogus result queued an ack echoing its 512-KiB token, 88 MB for 200.
  const w = await deafWorker();
  await w.sendBogusResults(100);
  // The node reads 65 of the 512-KiB results (33 MB) before it ends the stream: on a loaded
  // machine that took longer than 5 s once. Unbounded, the stream never ends, so any wait fails it.
  await waitFor(() => t.node.gateway.streamCount === 0, { timeoutMs: 20_000, description: 'the stream ended' });
  // The worker, reading again, learns why.
  let err: unknown;
  let read = 0;
  try {
    for (;;) {
      if ((await w.frames.next()).done) break;
      read++;
    }
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(Status.RESOURCE_EXHAUSTED);
  expect((err as ClientError).details).toMatch(/ZD_STREAM_NOT_READ/);
  expect((err as ClientError).details).toContain('65 frames wait for it (at most 64)');
  // What still waited in the node went with the stream: only the answers already in the
  // connection's window come before the error, not the 64 acks (32 MiB) it held back.
  expect(read).toBeLessThan(64);
});

it('returns a task whose frame the worker never read unconsumed when the stream resets', async () => {
  // Guards "claimed but never delivered" (DESIGN §4): the frame queued behind unread answers
  // counted as delivered, and the reset failed the attempt (it came back as attempt 2).
  const w = await deafWorker();
  await w.sendBogusResults(40); // more than the connection's window holds: answers wait in the node
  // Waited for, not slept on: on a loaded machine the 40 results take longer than any fixed pause.
  await waitFor(() => (slotOf(t)?.out.size ?? 0) > 0, { timeoutMs: 10000, description: 'answers queued in the node' });
  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  await waitFor(async () => (await t.matching.getTask({ task_id: r.task_id })).task!.state === pb.TaskState.RUNNING, { timeoutMs: 3000, description: 'started on the deaf slot' });
  const returned = (reason: string) => returnedAttempts().then((vs) => vs.find((v) => v.labels.reason === reason)?.value ?? 0);
  const writeFailedBefore = await returned('write_failed');
  w.abort.abort();
  await waitFor(async () => (await t.matching.getTask({ task_id: r.task_id })).task!.state === pb.TaskState.QUEUED, { timeoutMs: 3000, description: 'back in its queue' });
  expect((await t.matching.getTask({ task_id: r.task_id })).task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
  // Counted as a write that failed: the worker did not stop, it never saw the task.
  expect(await returned('write_failed')).toBe(writeFailedBefore + 1);
  expect(await returned('drain_no_output')).toBe(0);
});
