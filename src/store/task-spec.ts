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
const SEP_BYTE = 0x1e;

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

export function decodeSpec(b: Buffer): Record<SpecField, string> {
  const out = {} as Record<SpecField, string>;
  let o = 0;
  SPEC_FIELDS.forEach((name, i) => {
    const end = i === SPEC_FIELDS.length - 1 ? b.length : b.indexOf(SEP_BYTE, o);
    if (end < 0) throw new Error(`task spec ends before ${name}`);
    out[name] = b.toString('utf8', o, end);
    o = end + 1;
  });
  return out;
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
