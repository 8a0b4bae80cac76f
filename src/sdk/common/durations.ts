/**
 * Checks of the SDK clients' duration options (not re-exported: internal).
 * A Node.js timer holds at most MAX_TIMER_MS; a longer delay, Infinity too,
 * fires after 1 ms, and protobufjs sends Infinity and NaN as 0 ("none", "the
 * server's default"), a negative as a huge uint64, and cuts a fraction to
 * whole ms. So a user's value past a bound, or not a whole number of ms, is
 * refused naming the option (DESIGN §11: refused, never clamped); only a
 * delay the SDK computes itself is capped (`timerDelayMs`).
 */
import { MAX_TIMER_MS } from './backoff';

export interface DurationBounds {
  /** Whether 0 is a valid value (it means "unset" or "none" on the wire). */
  zero: boolean;
  /** Refuse values past MAX_TIMER_MS: the SDK arms a timer of it. @default true */
  timer?: boolean;
}

/** What is wrong with a duration in ms; undefined when nothing is. */
export function durationProblem(value: unknown, bounds: DurationBounds): string | undefined {
  const low = bounds.zero ? '≥ 0' : '> 0';
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || (!bounds.zero && value === 0)) {
    return `must be a number of ms ${low}, got ${String(value)}`;
  }
  if ((bounds.timer ?? true) && value > MAX_TIMER_MS) return `must be at most ${MAX_TIMER_MS} ms (what a timer holds), got ${value}`;
  if (!Number.isFinite(value)) return `must be a finite number of ms, got ${value}`;
  // protobufjs would cut it to whole ms (the HTTP surface refuses a fraction too).
  if (!Number.isInteger(value)) return `must be a whole number of ms, got ${value}`;
  return undefined;
}

/**
 * The duration, undefined staying undefined; throws a TypeError naming it
 * (`${what} option ${field}: …`) when it is out of bounds.
 */
export function checkDuration<T extends number | undefined>(what: string, field: string, value: T, bounds: DurationBounds): T {
  if (value === undefined) return value;
  const problem = durationProblem(value, bounds);
  if (problem) throw new TypeError(`${what} option ${field}: ${problem}`);
  return value;
}

/** A delay the SDK computed (a sum, a deadline's distance), never past what a timer holds. */
export function timerDelayMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}
