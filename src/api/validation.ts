/**
 * Request validation: every input from the network is checked before anything
 * is written; a failure names the field (DESIGN §11.8).
 */
import { invalidArgument } from '../errors';
import { queueName } from '../store/keys';

/** Names that become parts of Redis keys and queue names: no ':' or braces. */
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.\-]*$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
export const MAX_ID_LENGTH = 512;
const MAX_DURATION_MS = 366 * 86_400_000;
const MAX_TIMESTAMP_MS = 8_640_000_000_000;

/** A name: required, at most `maxLength` characters (the config key `limitKey` sets it, named in the error). */
export function requireName(field: string, value: unknown, maxLength: number, limitKey: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidArgument(field, 'is required');
  if (value.length > maxLength) throw invalidArgument(field, `is ${value.length} characters long; the limit is ${maxLength} (${limitKey})`);
  if (!NAME.test(value)) throw invalidArgument(field, 'must match [A-Za-z0-9_][A-Za-z0-9_.-]* (letters, digits, "_", ".", "-")');
  return value;
}

/**
 * A queue's name, "<tenant>:<flowType>:<stepType>", within matching.maxQueueLength
 * ("longest queue name, in characters"); an over-long one is blamed on `field`
 * (the step type, the part that names the queue).
 */
export function requireQueueName(field: string, tenant: string, flowType: string, stepType: string, maxLength: number): string {
  const queue = queueName(tenant, flowType, stepType);
  if (queue.length > maxLength) {
    throw invalidArgument(field, `makes the queue name "<tenant>:<flow type>:<step type>" ${queue.length} characters long; the limit is ${maxLength} (matching.maxQueueLength)`);
  }
  return queue;
}

/** Ids chosen by callers (flow ids, step execution ids, group names): printable, bounded. */
export function requireId(field: string, value: unknown, maxLength = MAX_ID_LENGTH): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidArgument(field, 'is required');
  if (value.length > maxLength) throw invalidArgument(field, `is ${value.length} characters long; the limit is ${maxLength}`);
  if (CONTROL.test(value)) throw invalidArgument(field, 'must not contain control characters');
  return value;
}

export function optionalId(field: string, value: unknown, maxLength = MAX_ID_LENGTH): string {
  if (value === undefined || value === null || value === '') return '';
  return requireId(field, value, maxLength);
}

export function requireDuration(field: string, value: unknown, max = MAX_DURATION_MS): number {
  const n = Number(value ?? 0);
  if (!Number.isSafeInteger(n) || n < 0) throw invalidArgument(field, 'must be a non-negative whole number of milliseconds');
  if (n > max) throw invalidArgument(field, `${n} ms exceeds the ceiling of ${max} ms`);
  return n;
}

export function requireTimestamp(field: string, value: unknown): number {
  const n = Number(value ?? 0);
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_TIMESTAMP_MS) throw invalidArgument(field, 'must be epoch milliseconds (0 = unset)');
  return n;
}

export function requireBytes(field: string, value: Uint8Array | null | undefined, max: number): Buffer {
  const b = value ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : Buffer.alloc(0);
  if (b.length > max) throw invalidArgument(field, `is ${b.length} bytes; the limit is ${max} (limits.maxPayloadBytes)`);
  return b;
}

export function requireCount(field: string, value: unknown, max: number, dflt: number): number {
  const n = Number(value ?? 0);
  if (!Number.isSafeInteger(n) || n < 0) throw invalidArgument(field, 'must be a non-negative whole number');
  if (n > max) throw invalidArgument(field, `${n} exceeds the ceiling of ${max}`);
  return n === 0 ? dflt : n;
}
