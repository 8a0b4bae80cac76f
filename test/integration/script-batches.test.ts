/**
 * Group commit of the hot-path scripts over a real redis-server: the starts
 * and completions a node makes in one event-loop turn go to Redis as one
 * startTasks / completeTasks call, each task still judged on its own (one
 * stale attempt refuses itself, not its neighbours), and a failed call fails
 * every caller in it.
 */
import type { NewTask, StartedTask } from '../../src/store/task-store';
import type { Refusal } from '../../src/store/codes';
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
let observed: string[] = [];
const fx = useTaskStore(redis, 'batch', { observe: (command) => observed.push(command) });
beforeEach(() => {
  observed = [];
});

const newTask = taskBuilder((n) => ({ flowId: `flow-${n}`, stepExecutionId: `s${n}`, input: Buffer.from(`in-${n}`) }));
/**
 * Script calls Redis ran. A script the server does not know yet goes as EVAL
 * after an EVALSHA that failed with NOSCRIPT: that one ran nothing.
 */
async function scriptCalls(): Promise<number> {
  const stats = await fx.client.info('commandstats');
  const stat = (cmd: string, field: string) => Number(new RegExp(`cmdstat_${cmd}:.*\\b${field}=(\\d+)`).exec(stats)?.[1] ?? 0);
  const ran = (cmd: string) => stat(cmd, 'calls') - stat(cmd, 'failed_calls');
  return ran('evalsha') + ran('eval');
}

async function enqueued(count: number): Promise<NewTask[]> {
  const tasks = Array.from({ length: count }, newTask);
  await fx.store.enqueueMany(tasks, Date.now());
  // more than one partition, so one call spans partitions on one Redis
  expect(new Set(tasks.map((t) => t.partition)).size).toBeGreaterThan(1);
  return tasks;
}

it('sends the starts of one turn as one startTasks call and judges each task on its own', async () => {
  const tasks = await enqueued(6);
  await fx.client.config('RESETSTAT');
  observed = [];
  const now = Date.now();
  const results = await Promise.all([
    ...tasks.map((t, i) => fx.store.start(t.partition, t.taskId, 0, testSlot, `nonce-${i}`, now)),
    fx.store.start(tasks[0]!.partition, 'no-such-task', 0, testSlot, 'nonce-x', now),
    fx.store.start(tasks[1]!.partition, tasks[1]!.taskId, 7, testSlot, 'nonce-y', now),
  ]);
  expect(await scriptCalls()).toBe(1);
  expect(observed).toEqual(['startTasks']);
  // the second start of tasks[1] in the same call finds it running: stale
  expect(results.slice(6)).toEqual([{ kind: 'not-found' }, { kind: 'stale' }]);
  results.slice(0, 6).forEach((r, i) => {
    const s = r as StartedTask;
    expect(s.taskId).toBe(tasks[i]!.taskId);
    expect(s.attempt).toBe(1);
    expect(s.nonce).toBe(`nonce-${i}`);
    expect(s.input.toString()).toBe(tasks[i]!.input.toString());
    expect(s.stepExecutionId).toBe(tasks[i]!.stepExecutionId);
  });
  for (const t of tasks) {
    const h = await fx.store.readTask(t.partition, t.taskId);
    expect(h!.state!.toString()).toBe('running');
    expect(await fx.client.zscore(fx.keys.inflight(t.partition), t.taskId)).not.toBeNull();
  }
});

it('sends the completions of one turn as one completeTasks call; a stale nonce refuses only itself', async () => {
  const tasks = await enqueued(5);
  const now = Date.now();
  await Promise.all(tasks.map((t, i) => fx.store.start(t.partition, t.taskId, 0, testSlot, `nonce-${i}`, now)));
  await fx.client.config('RESETSTAT');
  observed = [];
  const results = await Promise.all(tasks.map((t, i) =>
    fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: i === 2 ? 'wrong' : `nonce-${i}` },
      Buffer.from(`out-${i}`), now)));
  expect(await scriptCalls()).toBe(1);
  expect(observed).toEqual(['completeTasks']);
  expect(results[2]).toEqual<Refusal>({ kind: 'stale' });
  for (const [i, t] of tasks.entries()) {
    if (i === 2) {
      expect((await fx.store.readTask(t.partition, t.taskId))!.state!.toString()).toBe('running');
      expect(await fx.store.readDone(t.partition, t.taskId)).toBeNull();
      continue;
    }
    expect(results[i]).toEqual({ kind: 'completed', outcomeId: expect.stringMatching(/^\d+-\d+$/) });
    expect(await fx.store.readTask(t.partition, t.taskId)).toBeNull();
    const done = await fx.store.readDone(t.partition, t.taskId);
    expect(done!.status!.toString()).toBe('COMPLETED');
    expect(done!.output!.toString()).toBe(`out-${i}`);
    expect(await fx.client.get(`${fx.keys.tag(t.partition)}sticky:acme:${t.flowId}`)).toBe('w1');
  }
  // another start's completion of an ended task says so, in a call of its own turn
  expect(await fx.store.complete({ partition: tasks[0]!.partition, taskId: tasks[0]!.taskId, attempt: 1, nonce: 'nonce-x' }, Buffer.from('again'), now))
    .toEqual({ kind: 'ended', status: 'COMPLETED' });
  expect(await scriptCalls()).toBe(2);
  // the same completion again answers as it did (its reply lost), with its outcome unchanged
  expect(await fx.store.complete({ partition: tasks[0]!.partition, taskId: tasks[0]!.taskId, attempt: 1, nonce: 'nonce-0' }, Buffer.from('again'), now))
    .toEqual(results[0]);
  expect((await fx.store.readDone(tasks[0]!.partition, tasks[0]!.taskId))!.output!.toString()).toBe('out-0');
});

it('sends a call alone in its turn at once, and splits a turn into calls of at most 8 tasks', async () => {
  const tasks = await enqueued(22);
  await fx.client.config('RESETSTAT');
  const now = Date.now();
  const first = await fx.store.start(tasks[0]!.partition, tasks[0]!.taskId, 0, testSlot, 'n0', now);
  expect('input' in first).toBe(true);
  expect(await scriptCalls()).toBe(1);
  const rest = await Promise.all(tasks.slice(1).map((t, i) => fx.store.start(t.partition, t.taskId, 0, testSlot, `n${i + 1}`, now)));
  expect(rest.every((r) => 'input' in r)).toBe(true);
  expect(await scriptCalls()).toBe(1 + 3); // 21 starts: 8 + 8 + 5
});

it('fails every caller of a call that fails', async () => {
  const tasks = await enqueued(3);
  // a task key of the wrong type makes the script itself fail (WRONGTYPE)
  await fx.client.del(fx.keys.task(tasks[1]!.partition, tasks[1]!.taskId));
  await fx.client.set(fx.keys.task(tasks[1]!.partition, tasks[1]!.taskId), 'not a hash');
  const now = Date.now();
  const settled = await Promise.allSettled(tasks.map((t, i) => fx.store.start(t.partition, t.taskId, 0, testSlot, `n${i}`, now)));
  expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
  expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/);
});

it('sends starts for another node or boot id, and a stopping worker\'s completions, in calls of their own', async () => {
  const tasks = await enqueued(4);
  const now = Date.now();
  const other = { ...testSlot, appWorkerId: 'w2', nodeId: 'n2', bootId: 'b2' };
  await fx.client.config('RESETSTAT');
  await Promise.all(tasks.map((t, i) => fx.store.start(t.partition, t.taskId, 0, i % 2 ? other : testSlot, `nonce-${i}`, now)));
  expect(await scriptCalls()).toBe(2);
  for (const [i, t] of tasks.entries()) {
    const h = await fx.store.readTask(t.partition, t.taskId);
    expect([h!.node!.toString(), h!.boot!.toString()]).toEqual(i % 2 ? ['n2', 'b2'] : ['n1', 'b1']);
  }
  // w2 is stopping: the flows of its tasks remember no worker; w1's remember w1
  await fx.client.config('RESETSTAT');
  const results = await Promise.all(tasks.map((t, i) => fx.store.complete(
    { partition: t.partition, taskId: t.taskId, attempt: 1, nonce: `nonce-${i}` }, Buffer.from(`out-${i}`), now, i % 2 === 1)));
  expect(results.every((r) => r.kind === 'completed')).toBe(true);
  expect(await scriptCalls()).toBe(2);
  for (const [i, t] of tasks.entries()) {
    expect(await fx.client.get(`${fx.keys.tag(t.partition)}sticky:acme:${t.flowId}`)).toBe(i % 2 ? null : 'w1');
  }
});

it('sends starts of one node under another boot id in a call of their own: each attempt records its own boot', async () => {
  const tasks = await enqueued(4);
  const now = Date.now();
  const rebooted = { ...testSlot, bootId: 'b9' };
  await fx.client.config('RESETSTAT');
  await Promise.all(tasks.map((t, i) => fx.store.start(t.partition, t.taskId, 0, i % 2 ? rebooted : testSlot, `nonce-${i}`, now)));
  expect(await scriptCalls()).toBe(2);
  for (const [i, t] of tasks.entries()) {
    const h = await fx.store.readTask(t.partition, t.taskId);
    expect([h!.node!.toString(), h!.boot!.toString()]).toEqual(['n1', i % 2 ? 'b9' : 'b1']);
  }
});
