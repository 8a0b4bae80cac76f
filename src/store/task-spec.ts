/**
 * A task's spec: what enqueue was given that never changes, kept as one field
 * (`spec`) of the task hash rather than fifteen. A small hash is a list that
 * every field read or write searches from its head, so each field costs on
 * every script that touches the task. Layout: store/lua/includes/task.lua.
 */
import type { RedisClient } from './redis';
import type { Keys } from './keys';

/** The values of a spec, in order. */
export const SPEC_FIELDS = [
  'methodTimeout', 'hbTimeout', 'deadline', 'enqueuedAt', 'tenant', 'flowId', 'flowType', 'stepType', 'seid',
  'maxAttempts', 'initialInterval', 'backoffCoefficient', 'maxInterval', 'nonRetryable', 'sticky',
] as const;

export type SpecField = (typeof SPEC_FIELDS)[number];

/**
 * Ends every value but the last: a control character (RS), which validation
 * never lets into names, ids or non-retryable types (api/validation.ts). The
 * spec then goes to Redis as a plain string: a Buffer argument switches
 * ioredis into a slower encoding of the whole command.
 */
const SEP = '\x1e';

export interface SpecValues {
  tenant: string;
  flowId: string;
  flowType: string;
  stepType: string;
  stepExecutionId: string;
  flowDeadline: number;
  maxAttempts: number;
  initialInterval: number;
  backoffCoefficient: number;
  maxInterval: number;
  nonRetryable: string[];
  methodTimeout: number;
  heartbeatTimeout: number;
  stickyWorkerId: string;
}

export function encodeSpec(t: SpecValues, enqueuedAt: number): string {
  return [
    t.methodTimeout, t.heartbeatTimeout, t.flowDeadline, enqueuedAt, t.tenant, t.flowId, t.flowType, t.stepType,
    t.stepExecutionId, t.maxAttempts, t.initialInterval, t.backoffCoefficient, t.maxInterval, t.nonRetryable.join('\x1f'),
    t.stickyWorkerId,
  ].join(SEP);
}

/**
 * One string conversion and one split: a conversion per field (15 native calls,
 * and as many indexOf) cost ≈ 2 µs of every start; this ≈ 0.6 µs. RS is ASCII,
 * so it never falls inside a UTF-8 sequence and splitting after decoding finds
 * the same fields. The last value runs to the end, as it was written.
 */
export function decodeSpec(b: Buffer): Record<SpecField, string> {
  const v = b.toString('utf8').split(SEP);
  if (v.length < SPEC_FIELDS.length) throw new Error(`task spec ends before ${SPEC_FIELDS[v.length]}`);
  // A literal in SPEC_FIELDS order: one object shape for every spec.
  return {
    methodTimeout: v[0]!, hbTimeout: v[1]!, deadline: v[2]!, enqueuedAt: v[3]!, tenant: v[4]!, flowId: v[5]!,
    flowType: v[6]!, stepType: v[7]!, seid: v[8]!, maxAttempts: v[9]!, initialInterval: v[10]!,
    backoffCoefficient: v[11]!, maxInterval: v[12]!, nonRetryable: v[13]!,
    sticky: v.length === SPEC_FIELDS.length ? v[14]! : v.slice(14).join(SEP),
  };
}

/**
 * The task hash's fields with its spec spread out, as if each were a field of
 * its own (a task enqueued before the spec was packed has them so already).
 */
export function spreadSpec(h: Record<string, Buffer>): Record<string, Buffer> {
  const spec = h.spec;
  if (!spec) return h;
  const out: Record<string, Buffer> = { ...h };
  delete out.spec;
  for (const [k, v] of Object.entries(decodeSpec(spec))) out[k] = Buffer.from(v);
  return out;
}

/** The tenant of a live task, or null when there is no such task. */
export async function readTaskTenant(redis: RedisClient, keys: Keys, partition: number, taskId: string): Promise<string | null> {
  const [spec, tenant] = await redis.hmgetBuffer(keys.task(partition, taskId), 'spec', 'tenant');
  if (spec) return decodeSpec(spec).tenant;
  return tenant ? tenant.toString() : null;
}
