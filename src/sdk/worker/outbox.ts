/**
 * The outgoing side of one slot stream: a tiny queue read by an async
 * generator that nice-grpc pipes into the call (with its own backpressure).
 * Frames pushed under a key replace a pending frame with the same key, so a
 * handler that heartbeats in a loop holds at most one frame, and the queue
 * never grows beyond what one slot needs. `end()` half-closes the stream
 * once the queue is flushed.
 */
export class Outbox<T> {
  private readonly queue: Array<{ frame: T; key: string | undefined }> = [];
  private ended = false;
  private wake: (() => void) | null = null;

  get isEnded(): boolean {
    return this.ended;
  }

  /** Returns false when the outbox has already ended (the frame is dropped). */
  push(frame: T, key?: string): boolean {
    if (this.ended) return false;
    const pending = key === undefined ? undefined : this.queue.find((e) => e.key === key);
    if (pending) pending.frame = frame;
    else this.queue.push({ frame, key });
    this.notify();
    return true;
  }

  /** Half-close after the frames already queued. Idempotent. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  async *frames(): AsyncGenerator<T, void, undefined> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next.frame;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
