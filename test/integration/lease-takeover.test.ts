/**
 * A partition whose owner died stays unowned until that node's lease runs out
 * (DESIGN §3: SET NX PX cluster.leaseTtl); the node it moves to must take it
 * then, not up to a third of the TTL later at a lease poll it armed before it
 * knew of the move. The membership change (setTargets) is typically seen just
 * before the dead node's lease runs out when cluster.nodeTtl equals
 * cluster.leaseTtl (the defaults): its acquire is refused, and the retry has to
 * come when the lease is free. Real redis-server; the dead node's lease is set
 * as it left it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LeaseManager } from '../../src/cluster/leases';
import { Keys } from '../../src/store/keys';
import { createRedis, type RedisClient } from '../../src/store/redis';
import { createLogger } from '../../src/util/logger';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

const redis = useEmbeddedRedis();
const TTL = 3000; // polls every 1 s while it holds every target
let client: RedisClient;
let m: LeaseManager | undefined;
beforeAll(() => {
  client = createRedis({ url: redis.url, clusterNodes: [], sentinels: [], sentinelName: '', password: '' });
});
afterEach(() => m?.stop());
afterAll(async () => {
  await client.quit();
});

it("takes a dead holder's partition as soon as its lease runs out, not at the next lease poll", async () => {
  // Two later takes this rules out: the poll armed at start() (a third of SLOW_TTL, 3 s, away)
  // and the retry of a refused target (RETRY_MS, 500 ms after the refusal, which comes after
  // setAt). The lease runs out 150 ms after setAt: the bound sits halfway between, 175 ms
  // either side, so a stall of this process up to then neither fails it nor lets those pass.
  const SLOW_TTL = 9000;
  const left = 150;
  let keys: Keys;
  // The lease is set between these two readings: it runs out no sooner than `left` after the
  // first and no later than `left` after the second, whatever this process stalled between.
  let sentAt = 0;
  let setAt = 0;
  // The refusal, and the retry it arms, must come well before the lease runs out: a stall
  // there lets the first acquire win. Set the scene again then, with a fresh lease key.
  for (let attempt = 0; ; attempt++) {
    keys = new Keys(uniquePrefix('takeover'));
    m?.stop();
    sentAt = Date.now();
    await client.set(keys.lease(0), 'n-dead:7', 'PX', left);
    setAt = Date.now();
    m = new LeaseManager(client, keys, 'n-survivor', SLOW_TTL, createLogger('silent'));
    m.start(); // nothing to acquire yet: its next pass is a third of the TTL away
    await m.setTargets(new Set([0])); // the dead node's lease still lives
    if ((m.holds(0) === undefined && Date.now() - setAt < left - 50) || attempt === 4) break;
  }
  expect(m.holds(0)).toBeUndefined();

  // How late this process's timers ran while it waited: a stall past the bound's room makes a take at
  // the lease's end read as late as the retry would (626 ms once, on a loaded machine).
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  await waitFor(() => m!.holds(0), { timeoutMs: SLOW_TTL, intervalMs: 5, description: 'the survivor holds partition 0' })
    .finally(() => lag.disable());
  const stalled = lag.max / 1e6;
  const takenAt = Date.now();
  expect(takenAt - sentAt).toBeGreaterThanOrEqual(left - 50);
  // Less the longest stall seen: the process itself ran late, not the take. With no stall, the retry
  // (500 ms after the refusal) and the poll still come too late for the bound.
  expect(takenAt - setAt - stalled).toBeLessThan(left + 175);
  expect(m.holds(0)).toMatchObject({ token: 'n-survivor:1' });
});

it('still retries a target held by a live node (whose lease is renewed) every half second at the latest', async () => {
  const keys = new Keys(uniquePrefix('takeover'));
  await client.set(keys.lease(0), 'n-live:3', 'PX', TTL);
  m = new LeaseManager(client, keys, 'n-other', TTL, createLogger('silent'));
  m.start();
  await m.setTargets(new Set([0]));
  expect(m.holds(0)).toBeUndefined();
  // the holder gives it up (as a node leaving does, whose notice got lost)
  await client.del(keys.lease(0));
  const freedAt = Date.now();
  await waitFor(() => m!.holds(0), { timeoutMs: TTL, intervalMs: 5, description: 'the other node holds partition 0' });
  expect(Date.now() - freedAt).toBeLessThan(650);
});

it('takes a refused target at once when the lease that refused it ran out while the pass waited for another call', async () => {
  // A pass waits for all its calls (up to a renewal period): here partition 1's acquire, answered
  // slowly, as a busy Cluster primary does. Partition 0's refusal read a lease 100 ms from its end;
  // by the time the pass ends it is free, and the next pass must come at once, not RETRY_MS (500 ms)
  // later. The bound sits halfway between.
  const keys = new Keys(uniquePrefix('takeover'));
  await client.set(keys.lease(0), 'n-dead:7', 'PX', 100);
  let passEndedAt = 0;
  const slowOnOne = new Proxy(client, {
    get(target, key, receiver) {
      if (key === 'zdAcquireLease') {
        return async (leaseKey: string, ...rest: unknown[]) => {
          const out = await (target.zdAcquireLease as (...a: unknown[]) => Promise<unknown>)(leaseKey, ...rest);
          if (leaseKey === keys.lease(1)) {
            await sleep(400);
            passEndedAt = Date.now();
          }
          return out;
        };
      }
      const v = Reflect.get(target, key, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  m = new LeaseManager(slowOnOne, keys, 'n-survivor', TTL, createLogger('silent'));
  m.start();
  await m.setTargets(new Set([0, 1]));
  expect(m.holds(1)).toMatchObject({ token: 'n-survivor:1' });
  await waitFor(() => m!.holds(0), { timeoutMs: TTL, intervalMs: 5, description: 'the survivor holds partition 0' });
  expect(Date.now() - passEndedAt).toBeLessThan(250);
});
