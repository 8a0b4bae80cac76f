/**
 * One timer for many deadlines: a min-heap of due times served by a single
 * setTimeout, so delayed tasks, attempt deadlines and flow deadlines cost no
 * per-task timers. Fires callbacks whose time has come, in due order.
 *
 * A cancelled entry leaves the heap when it reaches the top, or, once most of
 * the heap is cancelled, with all the others at once: an entry cancelled days
 * ahead of its time (a timer armed for a far delayed Step, replaced by an
 * earlier one again and again) would otherwise stay that long, with its callback.
 */
import { MAX_TIMER_MS, type Clock } from '../util/clock';

interface Entry {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
  /** In the heap (not fired, popped or stopped yet). */
  queued: boolean;
}

/** Cancelled entries the heap may hold before it drops them all at once (when they are most of it). */
const COMPACT_MIN = 64;

export interface TimerHandle {
  cancel(): void;
  readonly at: number;
}

export class Timers {
  private heap: Entry[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  /** Cancelled entries still in the heap. */
  private cancelled = 0;

  constructor(private readonly clock: Clock) {}

  schedule(at: number, fn: () => void): TimerHandle {
    const e: Entry = { at, seq: this.seq++, fn, cancelled: false, queued: true };
    this.push(e);
    this.arm();
    return { at, cancel: () => this.cancel(e) };
  }

  private cancel(e: Entry): void {
    if (e.cancelled) return;
    e.cancelled = true;
    if (!e.queued) return;
    if (++this.cancelled < COMPACT_MIN || this.cancelled * 2 <= this.heap.length) return;
    // Most of the heap is cancelled: drop them all. A sorted array is a heap; the armed
    // timer stays (fired early for a cancelled entry, it arms again for the first live one).
    this.heap = this.heap.filter((x) => {
      if (x.cancelled) x.queued = false;
      return !x.cancelled;
    }).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.cancelled = 0;
  }

  get size(): number {
    return this.heap.length;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const e of this.heap) e.queued = false;
    this.heap = [];
    this.cancelled = 0;
    this.armedAt = Infinity;
  }

  private arm(): void {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
    const next = this.heap[0];
    if (!next) return;
    if (this.timer && next.at >= this.armedAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = next.at;
    // setTimeout holds at most 2^31-1 ms; a farther deadline re-arms when this one fires.
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(0, next.at - this.clock.now())));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.clock.now();
    while (this.heap.length > 0 && this.heap[0]!.at <= now) {
      const e = this.pop()!;
      if (!e.cancelled) e.fn();
    }
    this.arm();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    if (top) {
      top.queued = false;
      if (top.cancelled) this.cancelled--;
    }
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
