/**
 * Delayed Steps of the chaos soak (chaos.test.ts): the engine enqueues some
 * Steps with a `readyAt` a few hundred ms to a few s ahead, and the worker
 * processes report when each attempt starts. DESIGN §2 and §4: a delayed task
 * waits in its queue, scored by readyAt, until it becomes ready; no attempt of
 * it may start before then. All processes run on one machine and one clock, so
 * only a few ms of skew between them are allowed. That each delayed Step got
 * exactly one outcome the soak checks for every Step.
 */
export interface DelayedStepsOptions {
  random: () => number;
  /** Share of Steps enqueued delayed; 0 turns them off (and draws no dice). */
  share: number;
}

/** Clock skew allowed between the engine and a worker process on one machine. */
const SKEW_MS = 5;
const MIN_DELAY_MS = 300;
const MAX_DELAY_MS = 3000;

export class DelayedSteps {
  readonly violations: string[] = [];
  /** Task id → its readyAt (epoch ms). */
  private readonly readyAt = new Map<string, number>();
  /** Task id → the start of each attempt reported, as `attempt@epochMs`. */
  private readonly starts = new Map<string, { attempt: string; at: number }[]>();

  constructor(private readonly opts: DelayedStepsOptions) {}

  /** readyAt for each of a batch's Steps, undefined for one ready now. Fixed before the enqueue, so a retried enqueue sends the same. */
  plan(count: number): (number | undefined)[] {
    if (this.opts.share <= 0) return new Array<undefined>(count).fill(undefined);
    const now = Date.now();
    return Array.from({ length: count }, () => (this.opts.random() < this.opts.share
      ? now + MIN_DELAY_MS + Math.floor(this.opts.random() * (MAX_DELAY_MS - MIN_DELAY_MS)) : undefined));
  }

  /** The enqueue of a planned batch was acknowledged with these task ids. */
  enqueued(taskIds: string[], plan: (number | undefined)[]): void {
    taskIds.forEach((id, k) => {
      const at = plan[k];
      if (at !== undefined) this.readyAt.set(id, at);
    });
  }

  /** A worker started `taskId#attempt` at `at` (its clock). */
  started(run: string, at: number | undefined): void {
    if (at === undefined) return;
    const [taskId, attempt] = run.split('#') as [string, string];
    const list = this.starts.get(taskId) ?? [];
    list.push({ attempt, at });
    this.starts.set(taskId, list);
  }

  get count(): number {
    return this.readyAt.size;
  }

  /** Every delayed Step's attempts started at its readyAt or later; call at the end. */
  finish(): void {
    for (const [taskId, ready] of this.readyAt) {
      for (const s of this.starts.get(taskId) ?? []) {
        if (s.at < ready - SKEW_MS) this.violations.push(`delayed task ${taskId} attempt ${s.attempt} started ${ready - s.at} ms before its readyAt`);
      }
    }
  }

  /** Delayed Steps with a reported start. */
  get startedCount(): number {
    return [...this.readyAt.keys()].filter((id) => this.starts.has(id)).length;
  }
}
