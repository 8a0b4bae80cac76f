/**
 * The epoch grows on every acquire (DESIGN §3), also when the lease found in
 * Redis carries this node's own id: it is then the lease of another boot of
 * this id (one that crashed, or froze past cluster.nodeTtl and was replaced)
 * or one this process already unloaded as lapsed. Kept under the old token,
 * the old boot's renewals and owner-initiated scripts still matched it, and
 * two processes served the partition's heads, neither ever finding its lease
 * lost. Real redis-server.
 */
import { LeaseManager, type HeldLease, type UnloadCause } from '../../src/cluster/leases';
import { createLogger } from '../../src/util/logger';
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'lease-same-id');
const newTask = taskBuilder();
const TTL = 30_000;
const log = createLogger('silent');

function manager(): { m: LeaseManager; unloads: [number, UnloadCause][] } {
  const m = new LeaseManager(fx.client, fx.keys, 'n1', TTL, log);
  const unloads: [number, UnloadCause][] = [];
  m.on('unload', (l: HeldLease, cause: UnloadCause) => void unloads.push([l.partition, cause]));
  return { m, unloads };
}

it("a new boot under the same node id takes the old boot's lease with a new epoch, and the old boot finds it lost", async () => {
  const now = Date.now();
  const task = newTask({ flowDeadline: now - 1 });
  const p = task.partition;
  await fx.store.enqueue(task, now);

  const old = manager();
  await old.m.setTargets(new Set([p]));
  const oldLease = old.m.holds(p)!;
  expect(oldLease).toMatchObject({ epoch: 1, token: 'n1:1' });

  // The same id boots again while the old boot's lease still runs (it froze, or crashed a moment ago).
  const fresh = manager();
  await fresh.m.setTargets(new Set([p]));
  expect(fresh.m.holds(p)).toMatchObject({ epoch: 2, token: 'n1:2' });
  expect(await fx.client.get(fx.keys.lease(p))).toBe('n1:2');

  // The old boot's owner-initiated scripts are refused, and its renewal finds the lease lost.
  expect(await fx.store.timeout(p, task.taskId, now, oldLease.token)).toBe('lease-moved');
  await old.m.tick();
  expect(old.m.holds(p)).toBeUndefined();
  expect(old.unloads).toEqual([[p, 'lease-lost']]);
  expect(await fx.client.get(fx.keys.lease(p))).toBe('n1:2');
  expect(fresh.m.holds(p)?.token).toBe('n1:2');

  old.m.stop();
  fresh.m.stop();
});
