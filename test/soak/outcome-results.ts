/**
 * The result a COMPLETED outcome holds, checked against every result a run produced
 * (DESIGN §8, §11.3): an outcome records the result of the run it names, and of no
 * other task, attempt or claim.
 *
 * Every result in the soak is unique to its run, and the run tells it before it can
 * reach a node:
 * - a stream worker's (worker-process.js) is `done <taskId>/<nonce> #<attempt>`, told
 *   with its `taskId#attempt` before the handler returns it;
 * - a fetch worker's (fetch-worker-process.js) is `fetched <worker>:<taskId>:<lockUntil>`,
 *   its Complete's idempotency key, which the parent rebuilds from the `completing` it
 *   is told before the first send.
 * So a COMPLETED outcome of a `work` Step must hold a result that a run of its task's
 * attempt `o.attempt` produced, and one of a `fetchwork` Step a result that a claim of
 * its task sent with a Complete. Anything else (another attempt's result, another
 * task's, the input, nothing) is named with the run it came from, if any did.
 */
import type { Outcome } from '../../src';

export class OutcomeResults {
  /** `taskId#attempt` (a stream run) or `taskId` (fetch Completes) → the results produced. */
  private readonly produced = new Map<string, Set<string>>();
  /** Result → the run that produced it. */
  private readonly from = new Map<string, string>();

  /** A stream worker's IPC message; true when it told a result. */
  onStreamMessage(m: { result?: string; output?: string }): boolean {
    if (m.result === undefined || m.output === undefined) return false;
    const [taskId, attempt] = m.result.split('#');
    this.add(m.result, m.output, `task ${taskId}'s attempt ${attempt}`);
    return true;
  }

  /** A fetch worker is about to send a Complete of `taskId` for its claim answered with `lockUntil`. */
  fetchCompleting(taskId: string, worker: string, lockUntil: number): void {
    this.add(taskId, `fetched ${worker}:${taskId}:${lockUntil}`, `${worker}'s claim of ${taskId} (lockUntil ${lockUntil})`);
  }

  /** Violations among `outcomes`; call once the workers are quiet. */
  check(outcomes: Iterable<Outcome>): string[] {
    const out: string[] = [];
    for (const o of outcomes) {
      if (o.status !== 'COMPLETED') continue;
      const fetched = o.stepType === 'fetchwork';
      const run = fetched ? o.taskId : `${o.taskId}#${o.attempt}`;
      const output = o.output.toString();
      if (this.produced.get(run)?.has(output)) continue;
      const source = this.from.get(output);
      const what = fetched ? `task ${o.taskId} (fetched)` : `task ${o.taskId}'s outcome of attempt ${o.attempt}`;
      out.push(source
        ? `${what} holds the result of ${source}`
        : `${what} holds ${JSON.stringify(output.slice(0, 80))}, which no ${fetched ? 'Complete of it sent' : 'run of that attempt returned'}`);
    }
    return out;
  }

  private add(run: string, output: string, source: string): void {
    const set = this.produced.get(run) ?? new Set<string>();
    set.add(output);
    this.produced.set(run, set);
    this.from.set(output, source);
  }
}
