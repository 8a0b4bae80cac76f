/**
 * A zdmatch node in this process (real gRPC server on 127.0.0.1:0, real Redis),
 * plus raw nice-grpc clients for its services. Tests that kill nodes use
 * node-process.ts instead.
 */
import { createChannel, createClient, type Channel, type ChannelCredentials, type ChannelOptions } from 'nice-grpc';
import { loadConfig, type Config } from '../../src/config';
import { ZdNode } from '../../src/node/node';
import { createLogger } from '../../src/util/logger';
import type { Clock } from '../../src/util/clock';
import type { Logger } from '../../src/util/logger';
import { MatchingServiceDefinition, pb, WorkerTaskServiceDefinition } from '../../src/wire';
import { openSlot, registerFrame, type RawSlot } from './raw-slot';

export interface TestNode {
  node: ZdNode;
  config: Config;
  channel: Channel;
  matching: ReturnType<typeof createClient<typeof MatchingServiceDefinition>>;
  worker: ReturnType<typeof createClient<typeof WorkerTaskServiceDefinition>>;
  close(): Promise<void>;
}

export interface TestNodeOptions {
  clock?: Clock;
  logger?: Logger;
  /** For the test's channel to a node with tls.enabled (plaintext otherwise). */
  credentials?: ChannelCredentials;
  channelOptions?: ChannelOptions;
}

export async function startTestNode(
  redisUrl: string, keyPrefix: string, overrides: Record<string, unknown> = {}, opts: TestNodeOptions = {},
): Promise<TestNode> {
  const config = loadConfig({
    env: {},
    overrides: {
      'redis.url': redisUrl, 'redis.keyPrefix': keyPrefix, 'api.listen': '127.0.0.1:0', 'http.listen': '127.0.0.1:0',
      'metrics.listen': '127.0.0.1:0', 'internal.listen': '127.0.0.1:0', 'cluster.partitions': 8,
      'cluster.heartbeat': '200ms', 'cluster.nodeTtl': '1s', 'cluster.leaseTtl': '1500ms', 'drain.timeout': '2s',
      // Auth is on unless configured off explicitly (docs/security.md); auth tests override this.
      'auth.enabled': false,
      ...overrides,
    },
  });
  const node = await ZdNode.start(config, { logger: opts.logger ?? createLogger(process.env.ZD_TEST_LOG ?? 'silent'), clock: opts.clock });
  const channel = createChannel(node.apiAddress, opts.credentials, opts.channelOptions);
  // Closing twice (a test, then its cleanup) waits for the one close.
  let closed: Promise<void> | undefined;
  return {
    node, config, channel,
    matching: createClient(MatchingServiceDefinition, channel),
    worker: createClient(WorkerTaskServiceDefinition, channel),
    close() {
      return (closed ??= (async () => {
        channel.close();
        await node.close();
      })());
    },
  };
}

/**
 * Starts `t`'s drain and holds it open: a raw slot takes a Step first and keeps it,
 * so the node stays `draining` (until drain.timeout) while a test acts on it.
 * `drained` is the drain; reset `slot` to let it end.
 */
export async function drainHeldOpen(t: TestNode): Promise<{ slot: RawSlot; drained: Promise<void> }> {
  const slot = openSlot(t.worker, registerFrame());
  await slot.nextOf('registered');
  await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'busy', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  await slot.nextOf('step_task');
  const drained = t.node.drain();
  await new Promise((r) => setTimeout(r, 100));
  if (t.node.state !== 'draining') throw new Error(`drainHeldOpen: the node is ${t.node.state}, not draining`);
  return { slot, drained };
}

/** Enqueues a Step of `flow` on `t`, has a raw slot complete it, and expects its outcome COMPLETED. */
export async function completeOneStep(t: TestNode, flow: string): Promise<void> {
  const s = openSlot(t.worker, registerFrame());
  try {
    await s.nextOf('registered');
    const step = { tenant: 'acme', flow_id: flow, flow_type: 'order', step_type: 'pack', step_execution_id: 's' };
    const r = await t.matching.enqueueStep({ step });
    const task = (await s.nextOf('step_task')).step_task!;
    s.send({ step_result: { task_token: task.task_token, output: Buffer.from('ok') } });
    await s.nextOf('result_ack');
    expect((await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 0 })).outcome?.status).toBe(pb.OutcomeStatus.COMPLETED);
  } finally {
    s.reset();
  }
}
