/**
 * How a task hash holds a running attempt's slot, node, boot id and start
 * time. Every script of this build reads both layouts; a node writes the
 * newest one that every live member of the cluster reads
 * (Membership.taskLayout), so a rolling upgrade switches to it once the last
 * older node has left, and a cluster never writes what one of its nodes
 * cannot read.
 *
 * 1: four fields of their own (`slot`, `node`, `boot`, `startedAt`).
 * 2: one field `run`, "slot\x1enode\x1eboot\x1estartedAt" (store/lua/includes/task.lua):
 *    three fewer fields for Redis to allocate at every start and free at every
 *    end, ≈ 5 200 instructions a start (docs/benchmarks.md).
 */
export const TASK_LAYOUT = 2;

/** What a member that does not say (a node of an earlier version) reads. */
export const OLDEST_TASK_LAYOUT = 1;

export interface RunningFields {
  slot: string;
  node: string;
  boot: string;
  startedAt: string;
}

/** A layout-2 `run` field's four values. */
export function parseRun(run: string): RunningFields {
  const [slot = '', node = '', boot = '', startedAt = ''] = run.split('\x1e');
  return { slot, node, boot, startedAt };
}

/** The slot (stream id) and node of a running attempt, from its hash's `run`, `slot` and `node` fields (either layout). */
export function attemptSlot(run: string | null, slot: string | null, node: string | null): { streamId: string; nodeId: string } {
  if (run) {
    const r = parseRun(run);
    return { streamId: r.slot, nodeId: r.node };
  }
  return { streamId: slot ?? '', nodeId: node ?? '' };
}

/** The node and boot id of a running attempt, from its hash's `run`, `node` and `boot` fields (either layout). */
export function attemptNode(run: string | null, node: string | null, boot: string | null): { node: string | null; boot: string } {
  if (run) {
    const r = parseRun(run);
    return { node: r.node || null, boot: r.boot };
  }
  return { node, boot: boot ?? '' };
}

/** A layout-2 task hash's `run` field as the four fields of layout 1, as operators read a task. */
export function spreadRun(h: Record<string, Buffer>): Record<string, Buffer> {
  const run = h.run;
  if (!run) return h;
  const out: Record<string, Buffer> = { ...h };
  delete out.run;
  for (const [k, v] of Object.entries(parseRun(run.toString()))) out[k] = Buffer.from(v);
  return out;
}
