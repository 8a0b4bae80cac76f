/**
 * Validation of fetch-surface requests, shared by gRPC and HTTP/JSON. Fields
 * are read from one neutral camelCase shape; errors name the field the way
 * the caller spelt it (`lock_duration_ms` over gRPC, `lockDurationMs` over
 * HTTP). Bounds are rejections, never clamps; 0 or omitted takes the default
 * (DESIGN §7, §11.6).
 */
import type { Config } from '../config';
import { invalidArgument } from '../errors';
import { partitionOfTaskId } from '../store/keys';
import { FAILURE_LIMITS } from '../wire';
import { requireId, requireName, requireQueueName } from './validation';

export type Naming = 'grpc' | 'http';

/** `topics[0].flowType` → `topics[0].flow_type` for gRPC; HTTP keeps camelCase. */
export function fieldName(naming: Naming, camel: string): string {
  return naming === 'http' ? camel : camel.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`);
}

export interface TopicRef {
  tenant: string;
  flowType: string;
  stepType: string;
  /** The queue name, also the doorbell key. */
  queue: string;
}

export interface FetchRequest {
  workerId: string;
  topics: TopicRef[];
  maxTasks: number;
  lockMs: number;
  waitMs: number;
}

export interface TaskRef {
  taskId: string;
  partition: number;
}

const MAX_MESSAGE = FAILURE_LIMITS.messageChars;
const MAX_TYPE = FAILURE_LIMITS.typeChars;
const MAX_RETRIES = 2_147_483_647;
const MAX_RETRY_TIMEOUT_MS = 366 * 86_400_000;

/**
 * A non-negative whole number from a number (or a decimal string, as proto3 JSON writes 64-bit fields).
 * Past 2^53 too: such a value (a uint64 field, a long decimal string) is over every ceiling, and the
 * caller's check says so, naming the ceiling, rather than calling it no whole number.
 */
function wholeNumber(field: string, value: unknown, what = 'a non-negative whole number'): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw invalidArgument(field, `must be ${what}`);
  return n;
}

/** A bound with a default and a ceiling: 0/omitted → default; over the ceiling → rejected naming both. */
export function bounded(field: string, value: unknown, ceiling: number, dflt: number, ceilingKey: string, unit: 'ms' | ''): number {
  const n = wholeNumber(field, value, unit === 'ms' ? 'a non-negative whole number of milliseconds' : 'a non-negative whole number');
  const u = unit ? ` ${unit}` : '';
  // A decimal string as sent: past 2^53 its Number is rounded.
  const shown = typeof value === 'string' ? value : String(n);
  if (n > ceiling) throw invalidArgument(field, `${shown}${u} exceeds the ceiling of ${ceiling}${u} (${ceilingKey})`);
  return n === 0 ? dflt : n;
}

/**
 * A string field as it arrived: over HTTP it can be any JSON type, and a number or an object
 * is not a missing value — it is named as the wrong type, not as "is required".
 */
function stringOrAbsent(field: string, value: unknown): unknown {
  if (value !== undefined && value !== null && typeof value !== 'string') throw invalidArgument(field, 'must be a string');
  return value;
}

export function workerIdOf(naming: Naming, value: unknown, c: Config): string {
  const field = fieldName(naming, 'workerId');
  return requireId(field, stringOrAbsent(field, value), c.matching.maxQueueLength);
}

export function taskRefOf(naming: Naming, value: unknown, c: Config): TaskRef {
  const field = fieldName(naming, 'taskId');
  const taskId = requireId(field, value, 64);
  const partition = partitionOfTaskId(taskId, c.cluster.partitions);
  if (partition === undefined) throw invalidArgument(field, 'is not a zdmatch task id');
  return { taskId, partition };
}

export interface RawFetch {
  workerId?: unknown;
  topics?: unknown;
  maxTasks?: unknown;
  lockDurationMs?: unknown;
  waitMs?: unknown;
}

export function parseFetch(naming: Naming, raw: RawFetch, c: Config): FetchRequest {
  const f = (n: string) => fieldName(naming, n);
  const workerId = workerIdOf(naming, raw.workerId, c);
  if (raw.topics !== undefined && raw.topics !== null && !Array.isArray(raw.topics)) {
    throw invalidArgument(f('topics'), 'must be an array of topics {tenant, flowType, stepType}');
  }
  if (!Array.isArray(raw.topics) || raw.topics.length === 0) throw invalidArgument(f('topics'), 'must name at least one topic');
  if (raw.topics.length > c.matching.maxFlowTypes) {
    throw invalidArgument(f('topics'), `names ${raw.topics.length} topics; the limit is ${c.matching.maxFlowTypes} (matching.maxFlowTypes)`);
  }
  const m = c.matching;
  const topics = raw.topics.map((t: unknown, i): TopicRef => {
    if (!t || typeof t !== 'object' || Array.isArray(t)) throw invalidArgument(f(`topics[${i}]`), 'must be an object {tenant, flowType, stepType}');
    const o = t as Record<string, unknown>;
    const name = (key: string, maxLength: number, limitKey: string) => {
      const field = f(`topics[${i}].${key}`);
      return requireName(field, stringOrAbsent(field, o[key]), maxLength, limitKey);
    };
    const tenant = name('tenant', m.maxQueueLength, 'matching.maxQueueLength');
    const flowType = name('flowType', m.maxFlowTypeLength, 'matching.maxFlowTypeLength');
    const stepType = name('stepType', m.maxQueueLength, 'matching.maxQueueLength');
    return { tenant, flowType, stepType, queue: requireQueueName(f(`topics[${i}].stepType`), tenant, flowType, stepType, m.maxQueueLength) };
  });
  const x = c.fetch;
  return {
    workerId, topics,
    maxTasks: bounded(f('maxTasks'), raw.maxTasks, x.maxMaxTasks, x.maxTasks, 'fetch.maxMaxTasks', ''),
    lockMs: bounded(f('lockDurationMs'), raw.lockDurationMs, x.maxLockDuration, x.lockDuration, 'fetch.maxLockDuration', 'ms'),
    waitMs: bounded(f('waitMs'), raw.waitMs, x.maxWait, x.wait, 'fetch.maxWait', 'ms'),
  };
}

export function lockDurationOf(naming: Naming, value: unknown, c: Config): number {
  return bounded(fieldName(naming, 'lockDurationMs'), value, c.fetch.maxLockDuration, c.fetch.lockDuration, 'fetch.maxLockDuration', 'ms');
}

export function idempotencyKeyOf(naming: Naming, value: unknown): string {
  if (value === undefined || value === null || value === '') return '';
  const field = fieldName(naming, 'idempotencyKey');
  return requireId(field, stringOrAbsent(field, value));
}

export function resultOf(naming: Naming, value: Buffer | undefined, c: Config): Buffer | undefined {
  if (value && value.length > c.limits.maxPayloadBytes) {
    throw invalidArgument(fieldName(naming, 'result'), `is ${value.length} bytes; the limit is ${c.limits.maxPayloadBytes} (limits.maxPayloadBytes)`);
  }
  return value;
}

export interface FailInput {
  message: string;
  type: string;
  retries: number;
  retryTimeoutMs: number;
}

export function parseFail(
  naming: Naming, failure: { message?: unknown; type?: unknown } | null | undefined, retries: unknown, retryTimeoutMs: unknown,
): FailInput {
  const f = (n: string) => fieldName(naming, n);
  const message = failure?.message ?? '';
  const type = failure?.type ?? '';
  if (typeof message !== 'string') throw invalidArgument(f('failure.message'), 'must be a string');
  if (message.length > MAX_MESSAGE) throw invalidArgument(f('failure.message'), `is ${message.length} characters long; the limit is ${MAX_MESSAGE}`);
  if (typeof type !== 'string') throw invalidArgument(f('failure.type'), 'must be a string');
  if (type.length > MAX_TYPE) throw invalidArgument(f('failure.type'), `is ${type.length} characters long; the limit is ${MAX_TYPE}`);
  const r = typeof retries === 'number' && retries < 0 ? -1 : wholeNumber(f('retries'), retries);
  if (r < 0 || r > MAX_RETRIES) throw invalidArgument(f('retries'), `must be between 0 (terminal) and ${MAX_RETRIES}`);
  const timeout = wholeNumber(f('retryTimeoutMs'), retryTimeoutMs, 'a non-negative whole number of milliseconds');
  if (timeout > MAX_RETRY_TIMEOUT_MS) throw invalidArgument(f('retryTimeoutMs'), `${timeout} ms exceeds the ceiling of ${MAX_RETRY_TIMEOUT_MS} ms`);
  return { message, type, retries: r, retryTimeoutMs: timeout };
}
