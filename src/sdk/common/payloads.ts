/** The check of payloads callers hand the SDK clients (not re-exported: internal). */
import { kindOf } from './kind-of';
import { toBytes } from './values';

/**
 * A payload a caller handed in, as bytes; null and undefined are none. Anything else
 * is refused with a TypeError naming it (`${what} option ${field}: …`): protobufjs
 * sends an object, a number or a boolean as empty bytes, so `input: { orderId: 1 }`
 * from plain JavaScript went out as no input at all.
 */
export function checkedPayload(what: string, field: string, value: unknown): Uint8Array {
  if (value === undefined || value === null || typeof value === 'string' || value instanceof Uint8Array) return toBytes(value);
  throw new TypeError(`${what} option ${field}: must be a string, Buffer or Uint8Array, got ${kindOf(value)}`);
}
