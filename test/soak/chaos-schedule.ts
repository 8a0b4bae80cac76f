/**
 * The schedule the soak's chaos modules run their events on (freezes.ts,
 * mesh-partitions.ts): one event at a time, each after a pause of 1 to 3 s drawn
 * from the module's own dice, until `until` or stop(). An event heals what it
 * broke before it returns (in a `finally`), and waits with pause(), so stop() and
 * halt() cut its wait short too: stop() then waits for the event under way,
 * halt() (afterAll, a failed run) does not, and its caller heals at once.
 */
const MIN_GAP_MS = 1000;
const MAX_GAP_MS = 3000;

export class ChaosSchedule {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly random: () => number, private readonly until: number) {}

  start(event: () => Promise<void>): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running && Date.now() < this.until) {
        await this.pause(MIN_GAP_MS + Math.floor(this.random() * (MAX_GAP_MS - MIN_GAP_MS)));
        if (!this.running || Date.now() >= this.until) break;
        await event();
      }
    })();
  }

  /** Ends the schedule and waits for the event under way. */
  async stop(): Promise<void> {
    this.halt();
    await this.loop;
  }

  /** Ends the schedule at once. */
  halt(): void {
    this.running = false;
    this.wake?.();
  }

  /** Sleeps `ms`, or less once the schedule ends. */
  pause(ms: number): Promise<void> {
    return new Promise((r) => {
      const timer = setTimeout(() => { this.wake = undefined; r(); }, ms);
      this.wake = () => { clearTimeout(timer); this.wake = undefined; r(); };
    });
  }
}
