/**
 * Consumes outcomes as an engine would (group "engine", acking each batch with
 * the next read) until every id in `ids` has one, or the time is up. A second
 * outcome for a task throws: every task gets exactly one.
 */
import type { Client } from '../../src';

export async function collectOutcomes(client: Client, ids: Set<string>, timeoutMs: number): Promise<Map<string, string>> {
  const outcomes = new Map<string, string>();
  let ack: string[] = [];
  const deadline = Date.now() + timeoutMs;
  while ([...ids].some((id) => !outcomes.has(id)) && Date.now() < deadline) {
    const got = await client.consumeOutcomes({ group: 'engine', consumer: 'c', maxCount: 1000, waitMs: 1000, ack }).catch(() => []);
    ack = got.map((o) => o.outcomeId);
    for (const o of got) {
      if (outcomes.has(o.taskId)) throw new Error(`second outcome for ${o.taskId}`);
      outcomes.set(o.taskId, o.status);
    }
  }
  return outcomes;
}
