/**
 * Pongs of a worker's running tasks (DESIGN §5: a stream never looks idle to
 * a proxy while its task runs) from one timer, not one per task: the running
 * tasks are swept four times per interval, and each gets a Pong once its
 * interval has passed since it started or last ponged.
 */
export interface Ponging {
  pong(now: number): void;
}

export class PongSweep {
  private readonly due = new Map<Ponging, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly intervalMs: number) {}

  get running(): number {
    return this.due.size;
  }

  add(task: Ponging): void {
    this.due.set(task, Date.now() + this.intervalMs);
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), Math.max(1, Math.floor(this.intervalMs / 4)));
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
    const now = Date.now();
    for (const [task, at] of this.due) {
      if (at > now) continue;
      this.due.set(task, now + this.intervalMs);
      task.pong(now);
    }
  }
}
