/**
 * A small async queue feeding one stream of messages: a worker slot's
 * frames (at most one task, its acks and pings in flight, so it stays tiny),
 * an enqueue stream's answers and requests. `close` ends the stream after
 * what is queued; the iterator's `return` drops it. Subclasses that merge
 * queued items (cluster/link-outbox.ts) see each item leave through `take`.
 */
export class Channel<T> implements AsyncIterable<T> {
  protected items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private closed = false;

  push(item: T): boolean {
    if (this.closed) return false;
    this.items.push(item);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w({ value: this.take()!, done: false });
    }
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.waiter && this.items.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      w({ value: undefined, done: true });
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Takes back an item the reader has not taken yet; false when it has (or was never queued). */
  withdraw(item: T): boolean {
    // Withdrawn items are most often the oldest (callers time out in order): found near the front.
    return this.withdrawWhere((x) => x === item);
  }

  /** Takes back the first item not read yet that `matches`; false when there is none. */
  withdrawWhere(matches: (item: T) => boolean): boolean {
    const i = this.items.findIndex(matches);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }

  /** Drops every item the reader has not taken yet. */
  clear(): void {
    this.discard();
  }

  /** Items waiting for the reader. */
  get size(): number {
    return this.items.length;
  }

  /** The next item leaves the queue for the reader. */
  protected take(): T | undefined {
    return this.items.shift();
  }

  /** The reader stopped (the iterator's `return`): what is queued will never be read. */
  protected discard(): void {
    this.items = [];
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.length > 0 ? this.take() : undefined;
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: () => {
        this.closed = true;
        this.discard();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
