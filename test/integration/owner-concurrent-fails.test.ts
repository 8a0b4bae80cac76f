/**
 * An owner may fail one attempt from two of its passes at once: two dead-node
 * sweeps (two membership changes in quick succession: one node leaves as
 * another joins, two nodes die together), or a sweep and an attempt expiry.
 * Both may read the task before either fail lands. The fail script answers the
 * second call, which carries the same attempt, nonce and lease token, as a
 * replay of the first ("the same call run again"), so the owner took the one
 * outcome for two: dexzd_outcomes_total counted it twice and its waiters were
 * rung twice (a retry was made ready twice, a timeout's slot sent two Cancels).
 *
 * The overlap is made sure of by holding each pass's read of the task until
 * the other pass has read it too, over a real node and a real redis-server.
 */
import { TaskStore } from '../../src/store/task-store';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';
import { taskBuilder, testSlot } from '../helpers/store';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'ocf');

type Hmget = (...args: unknown[]) => Promise<(string | null)[]>;

async function failedOutcomesCounted(): Promise<number> {
  const m = await env.t.node.metrics.outcomes.get();
  return m.values.filter((v) => v.labels.status === 'FAILED').reduce((n, v) => n + v.value, 0);
}

/**
 * Holds the owner's reads of the task's attempt until `n` of them were asked for
 * (or 300 ms passed: a pass that does not read again must not hang the test).
 */
function gateAttemptReads(taskId: string, n: number): void {
  const rc = env.t.node.redis as unknown as { hmget: Hmget };
  const orig = rc.hmget.bind(rc);
  let asked = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  setTimeout(() => open(), 300).unref();
  rc.hmget = async (...args: unknown[]) => {
    if (String(args[0]).endsWith(`:t:${taskId}`) && args.includes('nonce')) {
      const answer = await orig(...args);
      if (++asked >= n) open();
      await opened;
      return answer;
    }
    return orig(...args);
  };
}

it("counts a dead node's attempt failed once when two dead-node sweeps run at once", async () => {
  const store = new TaskStore(env.t.node.redis, env.t.node.keys, 60_000, 60_000);
  // One attempt only: the worker_lost failure writes the FAILED outcome.
  const task = taskBuilder()({ maxAttempts: 1 });
  const p = task.partition;
  const dead = { ...testSlot, nodeId: 'gone', bootId: 'b-gone', streamId: 's-dead' };
  await store.enqueue(task, Date.now());
  expect(await store.start(p, task.taskId, 0, dead, 'n-dead', Date.now())).toMatchObject({ attempt: 1 });
  const before = await failedOutcomesCounted();
  const rung: string[] = [];
  const routing = env.t.node.routing as unknown as { outcomeWritten: (p: number, taskId: string) => void };
  const ring = routing.outcomeWritten.bind(routing);
  routing.outcomeWritten = (part, taskId) => {
    if (taskId === task.taskId) rung.push(taskId);
    ring(part, taskId);
  };
  gateAttemptReads(task.taskId, 2);

  await Promise.all([env.t.node.owner.membershipChanged(), env.t.node.owner.membershipChanged()]);

  expect(await env.t.node.redis.xlen(env.t.node.keys.out(p))).toBe(1);
  expect(await failedOutcomesCounted()).toBe(before + 1);
  expect(rung).toEqual([task.taskId]);
}, 20_000);

it('makes a dead node\'s attempt ready for its retry once when two dead-node sweeps run at once', async () => {
  const store = new TaskStore(env.t.node.redis, env.t.node.keys, 60_000, 60_000);
  const task = taskBuilder()({ maxAttempts: 3, initialInterval: 60_000 });
  const p = task.partition;
  const dead = { ...testSlot, nodeId: 'gone', bootId: 'b-gone', streamId: 's-dead' };
  await store.enqueue(task, Date.now());
  expect(await store.start(p, task.taskId, 0, dead, 'n-dead', Date.now())).toMatchObject({ attempt: 1 });
  const owner = env.t.node.owner.get(p)!;
  const readies: number[] = [];
  const ready = owner.taskReady.bind(owner);
  owner.taskReady = (name, taskId, readyAt, sticky) => {
    if (taskId === task.taskId) readies.push(readyAt);
    ready(name, taskId, readyAt, sticky);
  };
  gateAttemptReads(task.taskId, 2);

  await Promise.all([env.t.node.owner.membershipChanged(), env.t.node.owner.membershipChanged()]);

  expect(await env.t.node.redis.hget(env.t.node.keys.task(p, task.taskId), 'attempt')).toBe('2');
  expect(readies).toHaveLength(1);
}, 20_000);
