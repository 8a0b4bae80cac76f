/**
 * The task scripts' guards and edges, called on the store with exact times: a
 * call that names the running start's nonce but another attempt, and the
 * millisecond at which a deadline, a readiness or a timeout turns over. The
 * reference-model race test drives the scripts at random; these pin the checks
 * whose one-off changes it cannot tell apart.
 */
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'edges');

const newTask = taskBuilder();
const failure = { message: 'boom', type: 'Io', nonRetryable: false, retryAfterMs: 0 };

describe('a call under the running start\'s nonce that names another attempt', () => {
  it('is refused as stale by heartbeat, release, fail and complete, and changes nothing', async () => {
    const t = newTask({ heartbeatTimeout: 5000 });
    const now = 1_000_000;
    await fx.store.enqueue(t, now);
    const started = await fx.store.start(t.partition, t.taskId, 0, testSlot, 'n1', now);
    expect(started).toMatchObject({ attempt: 1, deadlineAt: now + 5000 });
    const other = { partition: t.partition, taskId: t.taskId, attempt: 2, nonce: 'n1' };
    const inflight = () => fx.client.zscore(fx.keys.inflight(t.partition), t.taskId);

    expect(await fx.store.heartbeat(other, now + 100)).toEqual({ kind: 'stale' });
    expect(await fx.store.release(other)).toEqual({ kind: 'stale' });
    expect(await fx.store.fail(other, failure, now + 100)).toEqual({ kind: 'stale' });
    expect(await fx.store.complete(other, Buffer.from('x'), now + 100)).toEqual({ kind: 'stale' });
    expect(await fx.client.hmget(fx.keys.task(t.partition, t.taskId), 'state', 'attempt', 'nonce')).toEqual(['running', '1', 'n1']);
    expect(await inflight()).toBe(String(now + 5000));
    expect(await fx.client.xlen(fx.keys.out(t.partition))).toBe(0);
  });
});
