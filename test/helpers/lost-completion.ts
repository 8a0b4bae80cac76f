/**
 * Redis losing a completion it acknowledged (a failover to a replica the write had not
 * reached, a restart from an older snapshot), played on a real redis-server: what
 * Redis held of the running attempt is kept before the result is sent, and put back
 * after it, undoing what the completion script changed (the task hash, its inflight
 * entry and flow set entry, the done record, the outcome stream entry).
 */
import { partitionOfTaskId } from '../../src/store/keys';
import type { TestNode } from './node';

/** Keeps what Redis holds of `taskId`'s running attempt; the returned call puts it back once the completion landed. */
export async function keepRunningAttempt(t: TestNode, taskId: string): Promise<{ p: number; loseCompletion(): Promise<void> }> {
  const p = partitionOfTaskId(taskId, t.config.cluster.partitions)!;
  const r = t.node.redis;
  const k = t.node.keys;
  const hash = (await r.dumpBuffer(k.task(p, taskId)))!;
  const deadline = (await r.zscore(k.inflight(p), taskId))!;
  const { tenant, flow_id: flowId } = (await t.matching.getTask({ task_id: taskId })).task!;
  return {
    p,
    async loseCompletion() {
      const outcomeId = (await t.matching.getTask({ task_id: taskId })).task!.outcome!.outcome_id!;
      await r.restore(k.task(p, taskId), 0, hash, 'REPLACE');
      await r.zadd(k.inflight(p), deadline, taskId);
      await r.sadd(k.flow(p, tenant!, flowId!), taskId);
      await r.del(k.done(p, taskId));
      await r.xdel(k.out(p), outcomeId.slice(`${p}-`.length));
    },
  };
}
