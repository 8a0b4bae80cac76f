/**
 * Heartbeat throttling for one running task. Each Heartbeat frame costs the
 * node a Redis script call (DESIGN §3 budgets three per Step), so a handler
 * that calls ctx.heartbeat() in a tight loop must not send a frame each time.
 * The first heartbeat goes at once; later ones go at most once per interval,
 * a held one at the end of it, carrying the latest details.
 */

import { MAX_TIMER_MS } from '../common';
import { monotonicMs } from '../common/monotonic';

/** A third of the heartbeat timeout: two frames may be late or lost before the attempt times out. */
const INTERVALS_PER_TIMEOUT = 3;
/**
 * Without a heartbeat timeout a Heartbeat only lets the node say the attempt
 * is no longer held (DESIGN §6); once a second is plenty for that.
 */
export const UNTIMED_HEARTBEAT_INTERVAL_MS = 1_000;

/** The least time between two Heartbeat frames of a task with this heartbeat timeout (0 = none). */
export function heartbeatIntervalMs(heartbeatTimeoutMs: number): number {
  // Never past what a timer holds: a longer delay fires after 1 ms, and the throttle with it.
  return heartbeatTimeoutMs > 0 ? Math.min(heartbeatTimeoutMs / INTERVALS_PER_TIMEOUT, MAX_TIMER_MS) : UNTIMED_HEARTBEAT_INTERVAL_MS;
}

export class HeartbeatThrottle {
  private lastSentAt = -Infinity;
  /** The details of a heartbeat held for the end of the interval. */
  private held: Uint8Array | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly intervalMs: number, private readonly send: (details: Uint8Array) => void) {}

  beat(details: Uint8Array): void {
    if (this.stopped) return;
    const wait = this.lastSentAt + this.intervalMs - monotonicMs();
    if (wait <= 0 && !this.timer) return this.sendNow(details);
    this.held = details;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), wait);
      this.timer.unref(); // the handler, not its heartbeat, keeps the process up
    }
  }

  /** The task's handler returned or was abandoned: nothing held is sent. */
  stop(): void {
    this.stopped = true;
    this.held = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    this.timer = undefined;
    const details = this.held;
    this.held = undefined;
    if (details && !this.stopped) this.sendNow(details);
  }

  private sendNow(details: Uint8Array): void {
    this.lastSentAt = monotonicMs();
    this.send(details);
  }
}
