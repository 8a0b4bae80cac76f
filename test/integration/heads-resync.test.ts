/**
 * The periodic heads resync finds a queued task the owner's memory lost,
 * restores it, counts dexzd_matching_heads_restored_refs_total, and logs the
 * documented WARN line.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { createChannel, createClient } from 'nice-grpc';
import { loadConfig } from '../../src/config';
import { ZdNode } from '../../src/node/node';
import { queueName } from '../../src/store/keys';
import { MatchingServiceDefinition, WorkerTaskServiceDefinition } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();

/** A node of its own on 4 partitions; Steps leave sync-match for their queue's heads at once. */
function configWith(headsResyncInterval: string) {
  return loadConfig({
    env: {},
    overrides: {
      'redis.url': redis.url, 'redis.keyPrefix': uniquePrefix('rs'), 'api.listen': '127.0.0.1:0', 'http.listen': '127.0.0.1:0',
      'metrics.listen': '127.0.0.1:0', 'internal.listen': '127.0.0.1:0', 'cluster.partitions': 4,
      'matching.syncMatchWait': '20ms', 'matching.headsResyncInterval': headsResyncInterval, 'auth.enabled': false,
    },
  });
}

/** Enqueues a Step and, once it sits in its queue's heads window, drops its ref, as a bug would. */
async function enqueueAndLoseHead(node: ZdNode, matching: Matching, stepExecutionId = '1') {
  const r = await matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: stepExecutionId } });
  const q = node.owner.get(r.partition!)!.queueFor(queueName('acme', 'order', 's'));
  // past its sync-match phase, the task sits in the heads window
  for (let i = 0; i < 100 && q.peek()?.taskId !== r.task_id; i++) await new Promise((res) => setTimeout(res, 10));
  expect(q.drop(r.task_id!)).toBe(true); // the bug the resync exists for
  return r;
}

type Matching = ReturnType<typeof createClient<typeof MatchingServiceDefinition>>;

/** Runs `body` against a node of its own (resync every `interval`, '0' = only runOnce), then closes it. */
async function withNode(
  interval: string, logger: pino.Logger, body: (node: ZdNode, matching: Matching, channel: ReturnType<typeof createChannel>) => Promise<void>,
): Promise<void> {
  const node = await ZdNode.start(configWith(interval), { logger });
  const channel = createChannel(node.apiAddress);
  try {
    await body(node, createClient(MatchingServiceDefinition, channel), channel);
  } finally {
    channel.close();
    await node.close();
  }
}

it('restores a head that matching lost, counts it and logs a WARN', async () => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  await withNode('0', pino({ level: 'warn' }, sink), async (node, matching, channel) => {
    const r = await enqueueAndLoseHead(node, matching);

    const slot = openSlot(createClient(WorkerTaskServiceDefinition, channel), registerFrame());
    await slot.nextOf('registered');
    await expect(slot.nextOf('step_task', 400)).rejects.toThrow(/no frame/); // lost: nobody offers it
    await new Promise((res) => setTimeout(res, 100)); // past the resync's grace for new entries

    expect(await node.owner.resync.runOnce()).toBe(1);
    expect((await slot.nextOf('step_task')).step_task).toMatchObject({ task_id: r.task_id, attempt: 1 });
    expect(await restoredRefs(node)).toBe(1);
    expect(lines.some((l) => l.includes('periodic Heads restored a queued task that matching had lost') && l.includes('"level":40'))).toBe(true);
    // A second pass finds nothing more to restore.
    expect(await node.owner.resync.runOnce()).toBe(0);
    slot.reset();
  });
});

it('counts every head it restores in one pass', async () => {
  await withNode('0', pino({ level: 'silent' }), async (node, matching) => {
    for (const id of ['1', '2', '3']) await enqueueAndLoseHead(node, matching, id);
    await new Promise((res) => setTimeout(res, 100)); // past the resync's grace for new entries
    expect(await node.owner.resync.runOnce()).toBe(3);
    expect(await restoredRefs(node)).toBe(3);
  });
});

it('does not count a task given back whose notice reaches the owner just after the scan read its queue', async () => {
  // A peer's slot gave the Step back (a decline, a stop without output): it is in its queue again at its
  // old ready time, and the peer's notice is on its way. The scan's read lands in between here, every
  // time: the notice is delivered 10 ms after the read answers. Counted at once, it rang the alert.
  await withNode('0', pino({ level: 'silent' }), async (node, matching) => {
    const r = await enqueueAndLoseHead(node, matching);
    const p = node.owner.get(r.partition!)!;
    const name = queueName('acme', 'order', 's');
    const score = Number(await redis.command('ZSCORE', node.keys.queue(r.partition!, name), r.task_id!));
    await new Promise((res) => setTimeout(res, 100)); // past the resync's grace for new entries
    expect(await resyncAfterScanRead(node, () => {
      setTimeout(() => p.taskReady(name, r.task_id!, score), 10); // the peer's notice
    })).toBe(0);
    expect(await restoredRefs(node)).toBe(0);
    expect(p.queueFor(name).has(r.task_id!)).toBe(true);
  });
});

it('counts and logs a lost head that the 5-s backlog count finds before the resync', async () => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  // The resync runs every 10 minutes: the backlog count, every 5 s, sees the loss first.
  await withNode('10m', pino({ level: 'warn' }, sink), async (node, matching, channel) => {
    const r = await enqueueAndLoseHead(node, matching);
    const slot = openSlot(createClient(WorkerTaskServiceDefinition, channel), registerFrame());
    await slot.nextOf('registered');
    try {
      // Nobody calls runOnce; the backlog count refills the queue, and the slot gets the Step.
      expect((await slot.nextOf('step_task', 8000)).step_task).toMatchObject({ task_id: r.task_id });
    } finally {
      slot.reset(); // a busy slot would hold the node's close for drain.timeout
    }
    expect(await restoredRefs(node)).toBe(1);
    expect(lines.filter((l) => l.includes('periodic Heads restored a queued task that matching had lost') && l.includes(r.task_id!))).toHaveLength(1);
  });
}, 15_000);

it('runs by itself every matching.headsResyncInterval', async () => {
  await withNode('300ms', pino({ level: 'silent' }), async (node, matching, channel) => {
    const r = await enqueueAndLoseHead(node, matching);
    const slot = openSlot(createClient(WorkerTaskServiceDefinition, channel), registerFrame());
    await slot.nextOf('registered');
    // nobody calls runOnce: the periodic pass finds the lost head and the slot gets it
    expect((await slot.nextOf('step_task', 3000)).step_task).toMatchObject({ task_id: r.task_id });
    slot.reset();
  });
});

it('counts a scan it could not finish: a queue past its scan limit, and a queue Redis would not read', async () => {
  await withNode('0', pino({ level: 'silent' }), async (node, matching) => {
    const incomplete = async () => (await node.metrics.registry.getSingleMetric('dexzd_matching_heads_incomplete_scans_total')!.get()).values[0]?.value ?? 0;
    const r = await enqueueAndLoseHead(node, matching);
    const p = r.partition!;
    const name = queueName('acme', 'order', 's');
    // Thousands of ready entries the owner never heard of: more than one scan reads.
    const old = Date.now() - 60_000;
    const args: (string | number)[] = [];
    for (let i = 0; i < 5100; i++) args.push(old + i, `lost-${i}`);
    await redis.command('ZADD', node.keys.queue(p, name), ...args);
    expect(await incomplete()).toBe(0);
    expect(await node.owner.resync.runOnce()).toBeGreaterThanOrEqual(5000 - 1);
    expect(await incomplete()).toBe(1);

    // A queue whose key Redis refuses to read as a sorted set: the scan of its partition stops, counted.
    const broken = queueName('acme', 'order', 'broken');
    await redis.command('SADD', node.keys.queues(p), broken);
    await redis.command('SET', node.keys.queue(p, broken), 'not a sorted set');
    node.owner.get(p)!.queueFor(broken).more = false;
    await node.owner.resync.runOnce();
    expect(await incomplete()).toBe(2);
  });
});

/**
 * One resync pass that runs `action` each time its read of a queue has answered, before the scan goes on
 * (so within its grace); the heads it restored.
 */
async function resyncAfterScanRead(node: ZdNode, action: () => Promise<void> | void): Promise<number> {
  const resync = node.owner.resync as unknown as { redis: ZdNode['redis'] };
  const real = resync.redis;
  resync.redis = new Proxy(real, {
    get(target, key, receiver) {
      if (key === 'zrangebyscore') {
        return async (...args: unknown[]) => {
          const out = await (target.zrangebyscore as (...a: unknown[]) => Promise<string[]>)(...args);
          await action();
          return out;
        };
      }
      const v = Reflect.get(target, key, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  try {
    return await node.owner.resync.runOnce();
  } finally {
    resync.redis = real;
  }
}

/** dexzd_matching_heads_restored_refs_total of `node`. */
async function restoredRefs(node: ZdNode): Promise<number> {
  const restored = await node.metrics.registry.getSingleMetric('dexzd_matching_heads_restored_refs_total')!.get();
  return restored.values[0]?.value ?? 0;
}

it('restores nothing that left its queue, or whose partition was given up, while the scan waited out its grace', async () => {
  await withNode('0', pino({ level: 'silent' }), async (node, matching) => {
    const r = await enqueueAndLoseHead(node, matching);
    const name = queueName('acme', 'order', 's');
    await new Promise((res) => setTimeout(res, 100)); // past the resync's grace for new entries
    // Taken meanwhile (a fetch, a cancel): no longer in its queue.
    expect(await resyncAfterScanRead(node, async () => {
      await redis.command('ZREM', node.keys.queue(r.partition!, name), r.task_id!);
    })).toBe(0);
    expect(node.owner.get(r.partition!)!.queueFor(name).has(r.task_id!)).toBe(false);

    // Back in its queue, lost again; then the partition is given up during the scan.
    const r2 = await enqueueAndLoseHead(node, matching, '2');
    await new Promise((res) => setTimeout(res, 100));
    const p = node.owner.get(r2.partition!)!;
    expect(await resyncAfterScanRead(node, () => p.unload('lease-lost'))).toBe(0);
    expect(await restoredRefs(node)).toBe(0);
  });
});
