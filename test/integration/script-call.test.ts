/**
 * The hot-path script calls (store/script-call.ts) over a real redis-server:
 * a server that lost its script cache gets EVAL and keeps working, binary and
 * multi-byte payloads arrive byte for byte, and an error inside a script
 * rejects the call instead of reading as a reply.
 */
import { readDone } from '../../src/store/outcomes';
import type { NewTask } from '../../src/store/task-store';
import { useEmbeddedRedis } from '../helpers/redis';
import { taskBuilder, testSlot, useTaskStore } from '../helpers/store';

const redis = useEmbeddedRedis();
const fx = useTaskStore(redis, 'hot');
const newTask = taskBuilder();

async function calls(command: string): Promise<number> {
  const m = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await fx.client.info('commandstats'));
  return m ? Number(m[1]) : 0;
}

/** Enqueues, starts and completes `tasks`; returns what each start read and each completion's reply. */
async function cycle(tasks: NewTask[], output: Buffer) {
  const now = Date.now();
  const enq = await fx.store.enqueueMany(tasks, now);
  const started = await Promise.all(tasks.map((t) => fx.store.start(t.partition, t.taskId, 0, testSlot, 'nonce-1', now)));
  const done = await Promise.all(tasks.map((t) => fx.store.complete({ partition: t.partition, taskId: t.taskId, attempt: 1, nonce: 'nonce-1' }, output, now)));
  return { enq, started, done };
}

test('a server that lost its script cache gets the script again, and the next call is EVALSHA', async () => {
  await fx.client.script('FLUSH');
  await fx.client.config('RESETSTAT');
  const { enq, started, done } = await cycle([newTask(), newTask()], Buffer.from('ok'));
  expect(enq.map((e) => e.result)).toEqual(['created', 'created']);
  expect(started.map((s) => 'kind' in s ? s.kind : 'started')).toEqual(['started', 'started']);
  expect(done.map((d) => d.kind)).toEqual(['completed', 'completed']);
  // each of the three scripts failed over to EVAL once: the cache was empty
  expect(await calls('eval')).toBe(3);
  const evalsha = await calls('evalsha');
  await cycle([newTask(), newTask()], Buffer.from('ok'));
  expect(await calls('eval')).toBe(3);
  expect(await calls('evalsha')).toBe(evalsha + 3);
});

test('binary and multi-byte payloads and names arrive byte for byte', async () => {
  const input = Buffer.from([0xff, 0x00, 0xfe, 0x0d, 0x0a, 0x24, 0x80]);
  const output = Buffer.from([0xc3, 0x28, 0x00, 0xff, 0x0d, 0x0a]);
  const t = newTask({ input, flowId: 'flöw ünïcode 🚀', stepExecutionId: 'ß/\r\n$3' });
  const plain = newTask({ input: Buffer.from('ünïcode ✓') });
  const { enq, started, done } = await cycle([t, plain], output);
  expect(enq.map((e) => e.result)).toEqual(['created', 'created']);
  const [s, p] = started;
  if (!s || 'kind' in s || !p || 'kind' in p) throw new Error(`not started: ${JSON.stringify(started)}`);
  expect([...s.input]).toEqual([...input]);
  expect(s.flowId).toBe('flöw ünïcode 🚀');
  expect(s.stepExecutionId).toBe('ß/\r\n$3');
  expect(p.input.toString()).toBe('ünïcode ✓');
  expect(done.map((d) => d.kind)).toEqual(['completed', 'completed']);
  const rec = await readDone(fx.client, fx.keys, t.partition, t.taskId);
  expect([...(rec?.output ?? [])]).toEqual([...output]);
  expect(rec?.flowId?.toString()).toBe('flöw ünïcode 🚀');
});

test('an error inside a script rejects the call and leaves the task as it was', async () => {
  const t = newTask();
  // The queue index of the partition made the wrong type: SADD inside enqueueTasks fails.
  await fx.client.set(`${fx.keys.tag(t.partition)}queues`, 'not a set');
  await expect(fx.store.enqueueMany([t, newTask({ flowId: t.flowId })], Date.now())).rejects.toThrow(/WRONGTYPE/);
  expect(await fx.client.exists(fx.keys.task(t.partition, t.taskId))).toBe(0);
  // A start of a task that is not there is a refusal, not a success.
  const r = await fx.store.start(t.partition, t.taskId, 0, testSlot, 'nonce-1', Date.now());
  expect(r).toEqual({ kind: 'not-found' });
});
