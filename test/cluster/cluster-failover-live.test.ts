/**
 * Redis Cluster failovers while Steps flow (DESIGN §11.1, §11.3): two nodes on
 * a real 3-primary Cluster, producers enqueueing, worker slots and a fetch
 * worker completing, an engine consuming outcomes — and meanwhile a graceful
 * CLUSTER FAILOVER of one primary and a FORCE failover of another, each run on
 * its replica. Every acknowledged enqueue gets exactly one outcome, callers see
 * only retryable ZD_STORE_UNAVAILABLE (never INTERNAL), and every partition is
 * leased again afterwards.
 */
import { Cluster } from 'ioredis';
import { ClientError, Status } from 'nice-grpc';
import { sendCommand, startRedisCluster, type RedisCluster } from '../../src/store/embedded-redis';
import { pb } from '../../src/wire';
import { fetchClients } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { uniquePrefix } from '../helpers/redis';
import { sleep, waitFor } from '../helpers/wait';

let cluster: RedisCluster;
const nodes: TestNode[] = [];
let admin: Cluster | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicaOf: [0, 1] });
}, 90_000);
afterAll(async () => {
  admin?.disconnect();
  for (const t of nodes.splice(0)) await t.close().catch(() => undefined);
  await cluster?.stop();
});

/** What callers were answered other than success: code and details. */
type Refusal = { who: string; code: Status | string; details: string };
const describe_ = (who: string, err: unknown): Refusal =>
  err instanceof ClientError ? { who, code: err.code, details: err.details } : { who, code: 'thrown', details: String(err) };
const retryable = (r: Refusal) => r.code === Status.UNAVAILABLE && /^ZD_STORE_UNAVAILABLE: /.test(r.details);

/** Runs `fn` until `stop` aborts; each loop bounded by the caller. */
async function until(stop: AbortSignal, fn: () => Promise<void>): Promise<void> {
  while (!stop.aborted) await fn();
}

async function promoted(port: number): Promise<void> {
  await waitFor(async () => /role:master/.test(String(await sendCommand(port, ['INFO', 'replication']))), {
    timeoutMs: 20_000, description: `the replica on ${port} taking over`,
  });
}

it('keeps every acknowledged Step, one outcome each, through a graceful and a forced CLUSTER FAILOVER under load', async () => {
  const prefix = uniquePrefix('cfl');
  const overrides = { 'redis.clusterNodes': [...cluster.seeds], 'cluster.partitions': 12 };
  nodes.push(await startTestNode('', prefix, overrides), await startTestNode('', prefix, overrides));
  const partitions = 12;

  const stop = new AbortController();
  const refusals: Refusal[] = [];
  const acked = new Map<string, string>(); // task id -> step execution id
  const outcomes = new Map<string, Set<string>>(); // task id -> outcome ids

  // Worker slots on both nodes: each completes what it gets, and opens a new stream when its stream ends.
  const slotLoop = (t: TestNode, id: string) => until(stop.signal, async () => {
    const s = openSlot(t.worker, registerFrame({ app_worker_id: id }));
    try {
      await s.nextOf('registered', 5000);
      while (!stop.signal.aborted) {
        const f = await s.next(500).catch((e: Error) => (/no frame within/.test(e.message) ? undefined : Promise.reject(e)));
        if (f?.frame !== 'step_task') continue;
        s.send({ step_result: { task_token: f.step_task!.task_token, output: Buffer.from('ok') } });
      }
    } catch (err) {
      refusals.push(describe_(`slot ${id}`, err));
      await sleep(100);
    } finally {
      s.reset();
    }
  });

  // A fetch worker on each node: long polls, and completes each task (retried with its idempotency key).
  const fetchLoop = (t: TestNode, id: string) => until(stop.signal, async () => {
    const { external } = fetchClients(t);
    try {
      const r = await external.fetchAndLock({
        worker_id: id, max_tasks: 5, lock_duration_ms: 20_000, wait_ms: 1000,
        topics: [{ tenant: 'acme', flow_type: 'order', step_type: 'charge' }],
      });
      for (const task of r.tasks) {
        for (let i = 0; ; i++) {
          try {
            await external.complete({ task_id: task.task_id, worker_id: id, idempotency_key: `k-${task.task_id}` });
            break;
          } catch (err) {
            refusals.push(describe_(`complete ${id}`, err));
            if (i >= 50) throw err;
            await sleep(100);
          }
        }
      }
    } catch (err) {
      refusals.push(describe_(`fetch ${id}`, err));
      await sleep(100);
    }
  });

  // An engine reading outcomes through node 0, acking each batch with its next read.
  let ack: string[] = [];
  const consumeLoop = until(stop.signal, async () => {
    try {
      const r = await nodes[0]!.matching.consumeOutcomes({ group: 'engine', consumer: 'c', max_count: 200, wait_ms: 500, ack });
      ack = r.outcomes.map((o) => o.outcome_id!);
      for (const o of r.outcomes) {
        expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
        const ids = outcomes.get(o.task_id!) ?? new Set<string>();
        ids.add(o.outcome_id!);
        outcomes.set(o.task_id!, ids);
      }
    } catch (err) {
      refusals.push(describe_('consume', err));
      await sleep(100);
    }
  });

  // Producers: 240 Steps, half for slots and half for the fetch worker, through both nodes; each
  // retried (idempotently) until acknowledged.
  const TOTAL = 240;
  const produce = async (from: number) => {
    for (let i = from; i < TOTAL; i += 2) {
      const step = {
        tenant: 'acme', flow_id: `f${i}`, flow_type: 'order', step_type: i % 4 < 2 ? 's' : 'charge', step_execution_id: `x${i}`,
      };
      for (let tries = 0; ; tries++) {
        try {
          const r = await nodes[i % 2]!.matching.enqueueStep({ step });
          acked.set(r.task_id!, step.step_execution_id);
          break;
        } catch (err) {
          refusals.push(describe_('enqueue', err));
          if (tries >= 100) throw err;
          await sleep(100);
        }
      }
      await sleep(15);
    }
  };

  const loops = [
    ...nodes.flatMap((t, n) => [slotLoop(t, `w${n}a`), slotLoop(t, `w${n}b`), fetchLoop(t, `fw${n}`)]),
    consumeLoop,
  ];
  const producing = Promise.all([produce(0), produce(1)]);

  // A graceful failover of primary 0 once Steps flow, then a forced one of primary 1.
  await waitFor(() => acked.size >= 40, { timeoutMs: 20_000, description: 'Steps flowing before the failover' });
  expect(await sendCommand(cluster.replicas[0]!.port, ['CLUSTER', 'FAILOVER'])).toBe('OK');
  await promoted(cluster.replicas[0]!.port);
  await waitFor(() => acked.size >= 120, { timeoutMs: 30_000, description: 'Steps flowing after the graceful failover' });
  expect(await sendCommand(cluster.replicas[1]!.port, ['CLUSTER', 'FAILOVER', 'FORCE'])).toBe('OK');
  await promoted(cluster.replicas[1]!.port);

  await producing;
  await waitFor(() => [...acked.keys()].every((id) => outcomes.has(id)), {
    timeoutMs: 40_000, intervalMs: 200, description: 'an outcome for every acknowledged Step',
  }).catch((err: Error) => {
    throw new Error(`${err.message}; missing: ${[...acked.keys()].filter((id) => !outcomes.has(id)).length} of ${acked.size}`);
  });
  stop.abort();
  await Promise.all(loops);

  expect(acked.size).toBe(TOTAL);
  // Exactly one outcome per Step: a redelivery repeats its outcome id, never a second one.
  const twice = [...outcomes].filter(([, ids]) => ids.size !== 1);
  expect(twice).toEqual([]);
  expect([...outcomes.keys()].filter((id) => !acked.has(id))).toEqual([]);
  // Nothing but the retryable store-unavailable answer, and no INTERNAL anywhere. Slot streams
  // that ended are counted too; a stream reset by this test is not an error it sees.
  const wrong = refusals.filter((r) => !retryable(r));
  expect(wrong).toEqual([]);

  // Both failovers moved partitions of this cluster: each promoted replica serves some now.
  for (const replica of cluster.replicas) {
    const served = await Promise.all(Array.from({ length: partitions }, async (_, p) =>
      !((await sendCommand(replica.port, ['GET', `${nodes[0]!.node.keys.tag(p)}probe`])) instanceof Error)));
    expect(served.filter(Boolean).length).toBeGreaterThan(0);
  }

  // Every partition is leased again, by one of the two nodes.
  admin = new Cluster(cluster.seeds.map((s) => ({ host: '127.0.0.1', port: Number(s.split(':')[1]) })));
  const ids = new Set(nodes.map((t) => t.node.nodeId));
  await waitFor(async () => {
    for (let p = 0; p < partitions; p++) {
      const lease = await admin!.get(nodes[0]!.node.keys.lease(p));
      if (!lease || !ids.has(lease.slice(0, lease.lastIndexOf(':')))) return false;
    }
    return nodes.reduce((n, t) => n + t.node.owner.owned().length, 0) === partitions;
  }, { timeoutMs: 15_000, description: 'every partition leased by one node' });
}, 120_000);
