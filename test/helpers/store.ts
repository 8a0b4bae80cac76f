/**
 * The store over a real redis-server for tests that call it directly: a
 * client, a key prefix of its own and a TaskStore per test, and NewTask
 * builders that number their tasks.
 *
 *   const redis = useEmbeddedRedis();
 *   const s = useTaskStore(redis, 'hot');        // s.client, s.keys, s.store inside tests
 *   const newTask = taskBuilder((n) => ({ input: Buffer.from(`in-${n}`) }));
 */
import { Keys, partitionOf, queueName } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { TaskStore, type NewTask } from '../../src/store/task-store';
import type { ObserveCall } from '../../src/store/observed-call';
import { uniquePrefix, type TestRedis } from './redis';

export interface StoreFixture {
  readonly client: RedisClient;
  readonly keys: Keys;
  readonly store: TaskStore;
}

export interface StoreOptions {
  /** outcomes.retention (ms). @default 60_000 */
  retentionMs?: number;
  /** Told of every script call (the Redis latency histogram's hook). */
  observe?: ObserveCall;
  /** The task layout starts write (src/store/layout.ts). @default TASK_LAYOUT */
  layout?: number;
}

/** A fresh client, prefix and TaskStore before each test; the client closes after it. */
export function useTaskStore(redis: TestRedis, prefix: string, opts: StoreOptions = {}): StoreFixture {
  let current: StoreFixture | undefined;
  beforeEach(() => {
    const client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
    const keys = new Keys(uniquePrefix(prefix));
    const layout = opts.layout;
    current = {
      client, keys,
      store: new TaskStore(client, keys, opts.retentionMs ?? 60_000, 60_000, opts.observe, layout === undefined ? undefined : () => layout),
    };
  });
  afterEach(() => current?.client.disconnect());
  const get = (): StoreFixture => {
    if (!current) throw new Error('useTaskStore: the store is made in beforeEach; use it inside a test');
    return current;
  };
  return {
    get client() {
      return get().client;
    },
    get keys() {
      return get().keys;
    },
    get store() {
      return get().store;
    },
  };
}

/** The slot identity the store tests start tasks in. */
export const testSlot = { appWorkerId: 'w1', streamId: 's1', nodeId: 'n1', bootId: 'b1' };

/**
 * A NewTask builder: task n of tenant acme's order/charge in one of 8
 * partitions, with `defaults(n)` and then the call's own fields on top.
 */
export function taskBuilder(defaults: (n: number) => Partial<NewTask> = () => ({})): (over?: Partial<NewTask>) => NewTask {
  let n = 0;
  return (over = {}) => {
    n += 1;
    const base = { ...defaults(n), ...over };
    const tenant = base.tenant ?? 'acme';
    const flowId = base.flowId ?? `flow ${n}`;
    const partition = partitionOf(tenant, flowId, 8);
    return {
      partition, taskId: `${partition}-${n.toString(16).padStart(24, '0')}`, queue: queueName(tenant, 'order', 'charge'),
      tenant, flowId, flowType: 'order', stepType: 'charge', stepExecutionId: `step/${n}`, input: Buffer.from('{}'),
      readyAt: 0, flowDeadline: 0, maxAttempts: 3, initialInterval: 1000, backoffCoefficient: 2, maxInterval: 60_000,
      nonRetryable: [], methodTimeout: 0, heartbeatTimeout: 0, stickyWorkerId: '', ...base,
    };
  };
}
