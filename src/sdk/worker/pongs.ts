/**
 * Pongs of a worker's running tasks (DESIGN §5: a stream never looks idle to
 * a proxy while its task runs) from one timer, not one per task: the running
 * tasks are swept four times per interval, and each gets a Pong once three
 * quarters of it have passed since it started or last ponged, so that no gap
 * is longer than the interval (a proxy's idle timeout is set just above it).
 */
import { monotonicMs } from '../common/monotonic';

export interface Ponging {
  pong(now: number): void;
}

export class PongSweep {
  private readonly due = new Map<Ponging, number>();
  private timer: NodeJS.Timeout | undefined;

  private readonly sweepMs: number;

  constructor(readonly intervalMs: number) {
    this.sweepMs = Math.max(1, Math.floor(intervalMs / 4));
  }

  /** When a task that ponged (or started) at `now` is due again: one sweep early, never late. */
  private dueAfter(now: number): number {
    return now + this.intervalMs - this.sweepMs;
  }

  get running(): number {
    return this.due.size;
  }

  add(task: Ponging): void {
    this.due.set(task, this.dueAfter(monotonicMs()));
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  delete(task: Ponging): void {
    this.due.delete(task);
  }

  private sweep(): void {
    // Stopped here rather than in delete(): tasks coming and going between
    // sweeps would otherwise recreate the timer for each task.
    if (this.due.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = monotonicMs();
    const sentAt = Date.now(); // on the wire: wall-clock
    for (const [task, at] of this.due) {
      if (at > now) continue;
      this.due.set(task, this.dueAfter(now));
      task.pong(sentAt);
    }
  }
}
