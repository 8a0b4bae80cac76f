/**
 * Partition leases (DESIGN §3) on a real Redis: `SET NX PX` with an epoch
 * that grows on every new acquire, renewal by compare-and-set on the exact
 * token, release only of a lease still ours, and the owner-initiated scripts
 * (timeouts, dead-node failures) refused once the lease has moved, leaving the
 * task as it was.
 */
import { LeaseManager, type HeldLease, type UnloadCause } from '../../src/cluster/leases';
import { createLogger } from '../../src/util/logger';
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, useTaskStore } from '../helpers/store';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'lease');
const newTask = taskBuilder();
const TTL = 3000;
const log = createLogger('silent');

function manager(nodeId: string): { m: LeaseManager; unloads: [number, UnloadCause][] } {
  const m = new LeaseManager(fx.client, fx.keys, nodeId, TTL, log);
  const unloads: [number, UnloadCause][] = [];
  m.on('unload', (l: HeldLease, cause: UnloadCause) => void unloads.push([l.partition, cause]));
  return { m, unloads };
}

describe('a partition lease', () => {
  it('is taken once, renewed by its holder only, and given up only by it', async () => {
    const a = manager('a');
    const b = manager('b');
    await a.m.setTargets(new Set([0, 1]));
    expect(a.m.holds(0)).toMatchObject({ partition: 0, epoch: 1, token: 'a:1' });
    expect(await fx.client.get(fx.keys.lease(0))).toBe('a:1');
    const ttl = await fx.client.pttl(fx.keys.lease(0));
    expect(ttl).toBeGreaterThan(TTL - 1000);
    expect(ttl).toBeLessThanOrEqual(TTL);

    // held: another node cannot take it
    await b.m.setTargets(new Set([0]));
    expect(b.m.holds(0)).toBeUndefined();
    expect(await fx.client.get(fx.keys.lease(0))).toBe('a:1');

    // renewal refreshes the TTL of the exact token, to leaseTtl in ms and no longer: a holder
    // that dies right after a renewal frees the partition a leaseTtl later, not 1000 times that
    await fx.client.pexpire(fx.keys.lease(0), 500);
    await a.m.tick();
    const renewed = await fx.client.pttl(fx.keys.lease(0));
    expect(renewed).toBeGreaterThan(TTL - 1000);
    expect(renewed).toBeLessThanOrEqual(TTL);

    // handed over on a membership change: released, and the next acquire has a new epoch
    await a.m.setTargets(new Set([1]));
    expect(a.unloads).toEqual([[0, 'membership']]);
    expect(await fx.client.exists(fx.keys.lease(0))).toBe(0);
    await b.m.tick();
    expect(b.m.holds(0)).toMatchObject({ epoch: 2, token: 'b:2' });

    a.m.stop();
    b.m.stop();
  });

  it('is found lost when another node holds it, and its old holder does not delete it', async () => {
    const a = manager('a');
    await a.m.setTargets(new Set([3, 6]));
    expect(a.m.holds(3)?.token).toBe('a:1');
    // a's leases expired while it was away, and b took them
    await fx.client.set(fx.keys.lease(3), 'b:2', 'PX', TTL);
    await fx.client.set(fx.keys.lease(6), 'b:2', 'PX', TTL);
    await a.m.tick(); // its renewal finds both taken
    expect(a.m.holds(3)).toBeUndefined();
    expect(a.unloads.sort()).toEqual([[3, 'lease-lost'], [6, 'lease-lost']]);
    expect(await fx.client.get(fx.keys.lease(3))).toBe('b:2');

    // released on a membership change before its renewal noticed: b's lease stays
    const c = manager('c');
    await c.m.setTargets(new Set([7]));
    await fx.client.set(fx.keys.lease(7), 'b:3', 'PX', TTL);
    await c.m.setTargets(new Set());
    expect(c.unloads).toEqual([[7, 'membership']]);
    expect(await fx.client.get(fx.keys.lease(7))).toBe('b:3');
    a.m.stop();
    c.m.stop();
  });

  it('is given back at once when its partition left the targets while the acquire was in flight', async () => {
    const a = manager('a');
    const b = manager('b');
    const acquired: number[] = [];
    a.m.on('acquired', (l: HeldLease) => void acquired.push(l.partition));
    // The acquire goes out at once; the targets change before Redis answers.
    const first = a.m.setTargets(new Set([4]));
    const second = a.m.setTargets(new Set());
    await Promise.all([first, second]);
    expect(a.m.holds(4)).toBeUndefined();
    // Never loaded here: the node does not serve, even for a pass, a partition it no longer targets.
    expect(acquired).toEqual([]);
    expect(a.unloads).toEqual([]);
    // Not left to expire: the partition's new owner takes it now, not a TTL later.
    expect(await fx.client.exists(fx.keys.lease(4))).toBe(0);
    await b.m.setTargets(new Set([4]));
    expect(b.m.holds(4)).toMatchObject({ partition: 4, token: 'b:2' });
    a.m.stop();
    b.m.stop();
  });

  it('is kept with the same epoch well past its TTL by a running manager that renews every third of it', async () => {
    // Guards the renewal loop that start() runs (not a hand-driven tick()):
    // were it to stop, the key would expire within one short TTL, and a
    // re-acquire would bump the epoch (a:2).
    const shortTtl = 600;
    const m = new LeaseManager(fx.client, fx.keys, 'a', shortTtl, log);
    const unloads: UnloadCause[] = [];
    m.on('unload', (_l: HeldLease, cause: UnloadCause) => void unloads.push(cause));
    m.start();
    try {
      await m.setTargets(new Set([2]));
      expect(await fx.client.get(fx.keys.lease(2))).toBe('a:1');
      // Watch the key for 2.5 TTLs: at every look it is still a:1 and has time left.
      const until = Date.now() + 2.5 * shortTtl;
      let looks = 0;
      while (Date.now() < until) {
        const [token, pttl] = await Promise.all([fx.client.get(fx.keys.lease(2)), fx.client.pttl(fx.keys.lease(2))]);
        expect(token).toBe('a:1');
        expect(pttl).toBeGreaterThan(0);
        looks++;
        await sleep(50);
      }
      expect(looks).toBeGreaterThan(10);
      expect(m.holds(2)).toMatchObject({ epoch: 1, token: 'a:1' });
      expect(await fx.client.get(fx.keys.epoch(2))).toBe('1');
      expect(unloads).toEqual([]);
    } finally {
      m.stop();
    }
  });

  it('is taken on a peer\'s notice only when the partition is one of the targets', async () => {
    // Guards acquireNow: a notice from a peer whose member list differs from ours took a
    // partition rendezvous gives another node, which then waited for our next pass to give it back.
    const a = manager('a');
    a.m.start();
    await a.m.setTargets(new Set([1]));
    expect(a.m.acquireNow(2)).toBe(false);
    await a.m.tick();
    expect(a.m.holds(2)).toBeUndefined();
    expect(await fx.client.exists(fx.keys.lease(2))).toBe(0);
    // a target it does not hold yet (freed a moment ago by its peer) is taken
    await fx.client.set(fx.keys.lease(3), 'b:7', 'PX', TTL);
    await a.m.setTargets(new Set([1, 3]));
    await fx.client.del(fx.keys.lease(3));
    expect(a.m.acquireNow(3)).toBe(true);
    await waitFor(() => a.m.holds(3), { description: 'partition 3 taken' });
    a.m.stop();
  });

  it('a graceful stop gives up every lease it still holds', async () => {
    const a = manager('a');
    await a.m.setTargets(new Set([4, 5]));
    await a.m.releaseAll();
    expect(a.unloads.sort()).toEqual([[4, 'shutdown'], [5, 'shutdown']]);
    expect(await fx.client.exists(fx.keys.lease(4), fx.keys.lease(5))).toBe(0);
  });
});

describe('owner-initiated scripts', () => {
  it('are refused once the lease has moved, and change nothing', async () => {
    const now = Date.now();
    const late = newTask({ flowDeadline: now - 1 });
    await fx.store.enqueue(late, now);
    await fx.client.set(fx.keys.lease(late.partition), 'b:2');
    const before = await fx.client.hgetall(fx.keys.task(late.partition, late.taskId));

    // a flow-deadline timeout by the old owner a:1
    expect(await fx.store.timeout(late.partition, late.taskId, now, 'a:1')).toBe('lease-moved');
    expect(await fx.client.hgetall(fx.keys.task(late.partition, late.taskId))).toEqual(before);
    expect(await fx.store.readDone(late.partition, late.taskId)).toBeNull();

    // a dead-node failure of a running attempt by the old owner
    const running = newTask();
    await fx.store.enqueue(running, now);
    const slot = { appWorkerId: 'w1', streamId: 's1', nodeId: 'n1', bootId: 'b1' };
    await fx.store.start(running.partition, running.taskId, 0, slot, 'nonce-1', now);
    await fx.client.set(fx.keys.lease(running.partition), 'b:2');
    const attempt = { partition: running.partition, taskId: running.taskId, attempt: 1, nonce: 'nonce-1' };
    const failure = { message: 'worker lost', type: 'worker_lost', nonRetryable: false, retryAfterMs: 0 };
    expect(await fx.store.fail(attempt, failure, now + 1, 'a:1')).toEqual({ kind: 'lease-moved' });
    expect(await fx.client.hget(fx.keys.task(running.partition, running.taskId), 'state')).toBe('running');
    expect(await fx.client.zscore(fx.keys.inflight(running.partition), running.taskId)).not.toBeNull();

    // the owner that holds the lease may
    expect(await fx.store.fail(attempt, failure, now + 1, 'b:2')).toMatchObject({ kind: 'retry', attempt: 2 });
    expect(await fx.store.timeout(late.partition, late.taskId, now, 'b:2')).toBe('timed-out');
  });
});

it('takes nothing back after releaseAll, whoever asks for a pass', async () => {
  // Guards the stopped manager's passes: a fenced script refused after the give-back
  // (leaseMoved) or a membership read answered after leaving asked for one, and it took
  // every lease again under a new epoch, to give it back or leave it for a TTL.
  const { m } = manager('a');
  m.start();
  await m.setTargets(new Set([0, 1, 2]));
  expect(m.heldPartitions()).toHaveLength(3);
  await m.releaseAll();
  const epoch = await fx.client.get(fx.keys.epoch(0));
  await m.tick();
  await sleep(100);
  expect(await fx.client.get(fx.keys.epoch(0))).toBe(epoch);
  expect(await Promise.all([0, 1, 2].map((p) => fx.client.get(fx.keys.lease(p))))).toEqual([null, null, null]);
  expect(m.heldPartitions()).toEqual([]);
});

it('runs one more pass for any number of asks made during a pass', async () => {
  // Guards the coalescing: every refused script of a batch asked for a pass, and each got one.
  const { m } = manager('a');
  await m.setTargets(new Set([0, 1, 2]));
  const calls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(String(await fx.client.info('commandstats')))?.[1] ?? 0);
  const before = await calls();
  await Promise.all(Array.from({ length: 10 }, () => m.tick()));
  // two passes (the one asked first, one for the nine asked during it), a renewal a lease each at
  // most (one still in flight when the next pass starts is not sent again); ten passes sent 29
  const renewals = (await calls()) - before;
  expect(renewals).toBeGreaterThanOrEqual(3);
  expect(renewals).toBeLessThanOrEqual(6);
  m.stop();
});

it('a node refused a lease held by another is told the holder and how long its lease has left, to try again then', async () => {
  await fx.client.set(fx.keys.lease(2), 'n-other:7', 'PX', 5000);
  const r = await fx.client.zdAcquireLease(fx.keys.lease(2), fx.keys.epoch(2), 'n-me', 3000);
  expect([Number(r[0]), String(r[1])]).toEqual([0, 'n-other:7']);
  expect(Number(r[2])).toBeGreaterThan(4000);
  expect(Number(r[2])).toBeLessThanOrEqual(5000);
  expect(await fx.client.get(fx.keys.lease(2))).toBe('n-other:7');
});
