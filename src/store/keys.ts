/**
 * Every Redis key zdmatch uses, built in one place (DESIGN §2). All keys of
 * partition p share the hash tag `{p}`, so one Lua script can touch them
 * atomically on Redis Cluster too.
 */
import crypto from 'node:crypto';
import { sha1Ascii, wordHex } from '../util/sha1-ascii';

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
  /** Written before a WAIT that confirms a read of the partition (WaitOutcome with redis.waitReplicas): a read alone writes nothing a WAIT counts. */
  readMark(p: number): string {
    return `${this.tag(p)}mark`;
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
  /** When each outcome group was last read (ms), by any node: Redis 7.0's consumer idle times do not move on empty reads. */
  groupsSeen(): string {
    return `${this.prefix}:groups:seen`;
  }
  /** Groups an operator dropped, until a consumer makes them again: their acks are not a typo's. */
  groupsDropped(): string {
    return `${this.prefix}:groups:dropped`;
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
  const s = `${tenant}\0${flowId}`;
  const h = sha1Ascii(s);
  return (h ? h[0]! >>> 0 : sha1(s).readUInt32BE(0)) % partitions;
}

/**
 * Deterministic task id: the same (tenant, flowId, stepExecutionId) always
 * gives the same id, so a retried enqueue is idempotent. It starts with the
 * partition so any node can find the task from the id alone.
 */
export function taskIdOf(tenant: string, flowId: string, stepExecutionId: string, partitions: number): string {
  return taskIdIn(partitionOf(tenant, flowId, partitions), tenant, flowId, stepExecutionId);
}

/** taskIdOf for a caller that already knows the partition (enqueue hashes once, not twice). */
export function taskIdIn(partition: number, tenant: string, flowId: string, stepExecutionId: string): string {
  const s = `${tenant}\0${flowId}\0${stepExecutionId}`;
  const h = sha1Ascii(s);
  return `${partition}-${h ? wordHex(h[0]!) + wordHex(h[1]!) + wordHex(h[2]!) : sha1(s).toString('hex', 0, 12)}`;
}

// The JavaScript SHA-1 where it is faster (util/sha1-ascii.ts); else one-shot
// hashing where Node has it (20.12+): half the cost of a Hash object per call.
const sha1: (s: string) => Buffer = typeof crypto.hash === 'function'
  ? (s) => crypto.hash('sha1', s, 'buffer')
  : (s) => crypto.createHash('sha1').update(s).digest();

/** The partition of a task id, or undefined when the id is malformed. */
export function partitionOfTaskId(taskId: string, partitions: number): number | undefined {
  const m = /^(\d{1,6})-[0-9a-f]{24}$/.exec(taskId);
  if (!m) return undefined;
  const p = Number(m[1]);
  return p < partitions ? p : undefined;
}
