/**
 * Group commit for the per-task scripts of the hot path (start, complete).
 * The calls made in one event-loop turn go to Redis together: one script call
 * per group (everything on one Redis; one partition on a Redis Cluster, where
 * a script must stay in one hash slot), at most `max` tasks a call. A group
 * that reaches `max` leaves at once; the rest at the end of the turn.
 *
 * A turn's worth of work arrives together: the worker frames of one socket
 * read, the slots an outcome batch frees. Sent one command each, every task
 * cost the node a socket write and Redis a command to parse and a Lua entry;
 * sent as one, they cost that once. Nothing waits for company: a call alone in
 * its turn leaves at the end of that turn (setImmediate), microseconds later.
 */
export class CallBatch<T, R> {
  private pending = new Map<string | number, Pending<T, R>[]>();
  private scheduled = false;

  constructor(
    /** Runs one group's items as one script call; replies in the items' order. */
    private readonly run: (items: T[]) => Promise<R[]>,
    /** Items of the same group may share a call. */
    private readonly groupOf: (item: T) => string | number,
    private readonly max: number,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const g = this.groupOf(item);
      const list = this.pending.get(g);
      if (list) {
        list.push({ item, resolve, reject });
        if (list.length >= this.max) {
          this.pending.delete(g);
          this.send(list);
        }
      } else this.pending.set(g, [{ item, resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O callbacks of this turn: the frames read with this one join it.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = this.pending;
    this.pending = new Map();
    for (const list of groups.values()) {
      for (let i = 0; i < list.length; i += this.max) this.send(list.slice(i, i + this.max));
    }
  }

  private send(batch: Pending<T, R>[]): void {
    this.run(batch.map((p) => p.item)).then(
      (replies) => {
        if (replies.length !== batch.length) {
          const err = new Error(`${replies.length} replies for ${batch.length} calls`);
          for (const p of batch) p.reject(err);
          return;
        }
        batch.forEach((p, i) => p.resolve(replies[i]!));
      },
      (err: unknown) => {
        for (const p of batch) p.reject(err);
      },
    );
  }
}

interface Pending<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}
