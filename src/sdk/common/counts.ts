/**
 * Checks of the SDK clients' count options (not re-exported: internal).
 * protobufjs sends NaN, Infinity and undefined as 0 (the server's default,
 * or for a Fail's retries: terminal), cuts fractions and wraps a count past
 * what its field holds (a uint32's 2^32 as 0, an int32's 2^31 as negative):
 * refused, naming the option (DESIGN §11.8).
 */

/** What a uint32 field holds. */
export const UINT32_MAX = 2 ** 32 - 1;
/** What a non-negative int32 field holds. */
export const INT32_MAX = 2 ** 31 - 1;

/** The count, a whole number from 0 to `max`; else a TypeError `${what} option ${field}: …`. */
export function checkCount(what: string, field: string, value: number | undefined, max: number): number {
  if (!Number.isSafeInteger(value) || value! < 0 || value! > max) {
    throw new TypeError(`${what} option ${field}: must be a whole number from 0 to ${max}, got ${String(value)}`);
  }
  return value!;
}
