/**
 * The fetch workers' claims against the clock of their own calls (DESIGN §7): a claim
 * locks a task for the lockDuration asked, and no task is claimed again before the
 * lock it is under ends.
 *
 * A fetch worker (fetch-worker-process.js) tells, with each claim, the lockUntil the
 * node answered and when the fetch that made it was `sent` and answered (`got`, told
 * before the worker acts on it). The node made the claim between the two, so:
 * - its lockUntil lies within [sent, got] plus the lockDuration asked: a lock shorter
 *   or longer than asked shows on every claim, whatever the load. This also makes the
 *   claim time the end-of-run check (chaos.test.ts) reads off lockUntil less the
 *   lock, with which it orders a task's claims, the node's own;
 * - a claim whose answer came before the previous claim's lock ended (its lockUntil as
 *   last extended, or the time a Fail or Unlock of it that the node took was sent) was
 *   made early: the node claimed it no later than that answer. This reads no clock of
 *   the node's, so it holds however the node computed the second lockUntil.
 * All times are Date.now() on one machine; CLOCK_SLACK_MS covers reading it.
 */

/** What a fetch worker tells (fetch-worker-process.js); `claim` is the lockUntil a claim was answered with, naming it. */
export interface FetchEvent {
  worker: string;
  claimed?: string; lockUntil?: number; attempt?: number; via?: string; sent?: number; got?: number;
  extended?: string; claim?: number;
  completing?: string; at?: number;
  completed?: string;
  releasing?: string;
  released?: string; ok?: boolean;
}

/** Reading Date.now() in two processes, and a timer's turn between a call's answer and its reading. */
export const CLOCK_SLACK_MS = 10;

/** Violations of the claims in `log` (task id → what the fetch workers told of it, in order per worker). */
export function checkClaimTimes(log: Map<string, FetchEvent[]>, lockMs: number): string[] {
  const out: string[] = [];
  for (const [taskId, events] of log) {
    interface Claim { worker: string; lockUntil: number; got: number; end: number; releasedAt?: number }
    const claims = new Map<string, Claim>();
    const key = (worker: string, lockUntil: number) => `${worker}@${lockUntil}`;
    const releasing = new Map<string, number>();
    for (const e of events) {
      if (e.claimed && e.sent !== undefined && e.got !== undefined) {
        const lockUntil = e.lockUntil!;
        if (lockUntil < e.sent + lockMs - CLOCK_SLACK_MS) {
          out.push(`fetch task ${taskId}: ${e.worker} asked a ${lockMs} ms lock at ${e.sent} and was answered lockUntil ${lockUntil}, ${e.sent + lockMs - lockUntil} ms short`);
        } else if (lockUntil > e.got + lockMs + CLOCK_SLACK_MS) {
          out.push(`fetch task ${taskId}: ${e.worker} asked a ${lockMs} ms lock, answered at ${e.got} with lockUntil ${lockUntil}, ${lockUntil - e.got - lockMs} ms long`);
        }
        claims.set(key(e.worker, lockUntil), { worker: e.worker, lockUntil, got: e.got, end: lockUntil });
        continue;
      }
      const c = e.claim === undefined ? undefined : claims.get(key(e.worker, e.claim));
      if (!c) continue; // chaos.test.ts names an act on a claim never told
      if (e.extended) c.end = Math.max(c.end, e.lockUntil!);
      else if (e.releasing && !releasing.has(key(c.worker, c.lockUntil))) releasing.set(key(c.worker, c.lockUntil), e.at!);
      else if (e.released && e.ok !== false) c.releasedAt = releasing.get(key(c.worker, c.lockUntil));
    }
    // In the node's order: the locks' ends, lockUntil less the same lockDuration.
    const ordered = [...claims.values()].sort((a, b) => a.lockUntil - b.lockUntil);
    for (let k = 1; k < ordered.length; k++) {
      const prev = ordered[k - 1]!;
      const next = ordered[k]!;
      const end = prev.releasedAt !== undefined ? Math.min(prev.releasedAt, prev.end) : prev.end;
      if (next.got < end - CLOCK_SLACK_MS) {
        out.push(`fetch task ${taskId}: ${next.worker}'s claim was answered at ${next.got}, ${end - next.got} ms before ${prev.worker}'s lock ended (lockUntil ${prev.end}${prev.releasedAt !== undefined ? `, given back at ${prev.releasedAt}` : ''})`);
      }
    }
  }
  return out;
}
