/**
 * A small async queue feeding one stream of messages: a worker slot's
 * frames (at most one task, its acks and pings in flight, so it stays tiny),
 * an enqueue stream's answers and requests. `close` ends the stream after
 * what is queued; the iterator's `return` drops it.
 */
export class Channel<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private closed = false;

  push(item: T): boolean {
    if (this.closed) return false;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
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

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: () => {
        this.closed = true;
        this.items = [];
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
