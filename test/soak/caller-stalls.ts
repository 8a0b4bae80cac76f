/**
 * Stalls of the soak's own process (chaos.test.ts), the caller of every RPC:
 * a timer ticks every 20 ms and any tick that comes more than 150 ms late is
 * a stall of that length. On 2 cores shared by three nodes, their Redis, a
 * dozen worker processes and whatever else runs on the machine, the soak
 * process is sometimes not scheduled for a second or more.
 *
 * A stall is the one thing that excuses an RPC's DEADLINE_EXCEEDED at a node
 * that was not frozen (rpc-load.ts): the node answers UNAVAILABLE at the
 * caller's timeout, and the Client gives it a 1-s margin past that for its own
 * deadline; when the caller's process does not run for a long part of that
 * margin, the answer waits unread in its socket, and on the next turn of the
 * event loop the deadline's timer fires before the socket is read. Only a
 * stall inside the margin excuses the call, and every excused call is counted
 * in the summary, so a run where they are many says so.
 */

const TICK_MS = 20;
/** A tick this late is a stall. */
const STALL_MS = 150;

export class CallerStalls {
  /** [start, end] of each stall, epoch ms. */
  private readonly stalls: [number, number][] = [];
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  start(): void {
    this.last = Date.now();
    this.timer = setInterval(() => {
      const now = Date.now();
      if (now - this.last > TICK_MS + STALL_MS) this.stalls.push([this.last + TICK_MS, now]);
      this.last = now;
    }, TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The longest stall that overlaps [from, to], in ms (0: none). */
  longestDuring(from: number, to: number): number {
    let longest = 0;
    for (const [s, e] of this.stalls) {
      if (e < from || s > to) continue;
      longest = Math.max(longest, Math.min(e, to) - Math.max(s, from));
    }
    return longest;
  }

  /** How many stalls there were, and the longest. */
  summary(): string {
    const longest = this.stalls.reduce((m, [s, e]) => Math.max(m, e - s), 0);
    return `${this.stalls.length} stalls of the soak process over ${STALL_MS} ms (longest ${longest} ms)`;
  }
}
