/**
 * Every Redis key zdmatch uses, built in one place (DESIGN §2). All keys of
 * partition p share the hash tag `{p}`, so one Lua script can touch them
 * atomically on Redis Cluster too.
 */
import { createHash } from 'node:crypto';

export class Keys {
  constructor(readonly prefix: string) {}

  /** The prefix with the partition's hash tag, "zd:{p}:"; scripts derive dynamic keys from it. */
  tag(p: number): string {
    return `${this.prefix}:{${p}}:`;
  }
  task(p: number, taskId: string): string {
    return `${this.tag(p)}t:${taskId}`;
  }
  queue(p: number, queueName: string): string {
    return `${this.tag(p)}q:${queueName}`;
  }
  queues(p: number): string {
    return `${this.tag(p)}queues`;
  }
  inflight(p: number): string {
    return `${this.tag(p)}inflight`;
  }
  deadlines(p: number): string {
    return `${this.tag(p)}deadlines`;
  }
  flow(p: number, tenant: string, flowId: string): string {
    return `${this.tag(p)}flow:${tenant}:${flowId}`;
  }
  sticky(p: number, tenant: string, flowId: string): string {
    return `${this.tag(p)}sticky:${tenant}:${flowId}`;
  }
  /** Fetch-surface terminal tasks of the partition, scored by when they turned terminal. */
  terminal(p: number): string {
    return `${this.tag(p)}terminal`;
  }
  out(p: number): string {
    return `${this.tag(p)}out`;
  }
  done(p: number, taskId: string): string {
    return `${this.tag(p)}done:${taskId}`;
  }
  lease(p: number): string {
    return `${this.tag(p)}lease`;
  }
  epoch(p: number): string {
    return `${this.tag(p)}epoch`;
  }
  members(): string {
    return `${this.prefix}:members`;
  }
  node(nodeId: string): string {
    return `${this.prefix}:node:${nodeId}`;
  }
  /** Registered outcome consumer groups (trimming waits for all of them). */
  groups(): string {
    return `${this.prefix}:groups`;
  }
  /** Records the partition count so a node with a different one refuses to boot. */
  meta(): string {
    return `${this.prefix}:meta`;
  }
}

/** The queue name of a Step type: "<tenant>:<flowType>:<stepType>" (names never contain ':'). */
export function queueName(tenant: string, flowType: string, stepType: string): string {
  return `${tenant}:${flowType}:${stepType}`;
}

export function parseQueueName(name: string): { tenant: string; flowType: string; stepType: string } {
  const [tenant = '', flowType = '', stepType = ''] = name.split(':');
  return { tenant, flowType, stepType };
}

/** Every Step of a flow lives in one partition. */
export function partitionOf(tenant: string, flowId: string, partitions: number): number {
  const h = createHash('sha1').update(tenant).update('\0').update(flowId).digest();
  return h.readUInt32BE(0) % partitions;
}

/**
 * Deterministic task id: the same (tenant, flowId, stepExecutionId) always
 * gives the same id, so a retried enqueue is idempotent. It starts with the
 * partition so any node can find the task from the id alone.
 */
export function taskIdOf(tenant: string, flowId: string, stepExecutionId: string, partitions: number): string {
  const p = partitionOf(tenant, flowId, partitions);
  const h = createHash('sha1').update(tenant).update('\0').update(flowId).update('\0').update(stepExecutionId).digest('hex');
  return `${p}-${h.slice(0, 24)}`;
}

/** The partition of a task id, or undefined when the id is malformed. */
export function partitionOfTaskId(taskId: string, partitions: number): number | undefined {
  const m = /^(\d{1,6})-[0-9a-f]{24}$/.exec(taskId);
  if (!m) return undefined;
  const p = Number(m[1]);
  return p < partitions ? p : undefined;
}
