/**
 * Values the SDK hands protobufjs, checked first: protobufjs sends a string
 * field given a number as '' and a bool field given any truthy value as true,
 * so `force: 'false'` dropped a live outcome group and `flowType: 5` listed
 * every flow type. A wrong type is a TypeError naming the option instead.
 */
import { kindOf } from './kind-of';

/** A string field; undefined is '' (the field's "unset"). */
export function wireText(what: string, field: string, value: unknown): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new TypeError(`${what} option ${field}: must be a string, got ${kindOf(value)}`);
  return value;
}

/** A repeated string field; undefined is []. */
export function wireTexts(what: string, field: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${what} option ${field}: must be an array of strings, got ${kindOf(value)}`);
  return value.map((v, i) => wireText(what, `${field}[${i}]`, v));
}

/** A bool field; undefined is false. */
export function wireFlag(what: string, field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${what} option ${field}: must be true or false, got ${kindOf(value)}`);
  return value;
}
