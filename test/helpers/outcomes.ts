/**
 * Consumes outcomes as an engine would (group "engine", acking each batch with
 * the next read) until every id in `ids` has one, or the time is up. A second
 * outcome for a task throws: every task gets exactly one.
 */
import type { Client } from '../../src';
import { pb } from '../../src/wire';
import type { TestNode } from './node';
import { openSlot, registerFrame } from './raw-slot';

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

let completed = 0;

/**
 * Completes `count` new Steps through one raw slot of `t`, each with `output`,
 * and returns their task ids.
 */
export async function completeSteps(t: TestNode, count: number, output: Buffer = Buffer.from('ok')): Promise<Set<string>> {
  const s = openSlot(t.worker, registerFrame());
  try {
    await s.nextOf('registered');
    const ids = new Set<string>();
    for (let i = 0; i < count; i++) {
      const step = { tenant: 'acme', flow_id: `done-${++completed}`, flow_type: 'order', step_type: 's', step_execution_id: 'x' };
      ids.add((await t.matching.enqueueStep({ step })).task_id!);
      const task = (await s.nextOf('step_task')).step_task!;
      s.send({ step_result: { task_token: task.task_token, output } });
      const verdict = (await s.nextOf('result_ack')).result_ack!.verdict;
      if (verdict !== pb.ResultVerdict.ACCEPTED) throw new Error(`result of ${task.task_id} not accepted: ${verdict}`);
    }
    return ids;
  } finally {
    s.reset();
  }
}

/** An output of 900 KiB: four fit one 4 MiB gRPC message. */
export const BIG_OUTPUT = Buffer.alloc(900 * 1024, 7);
