/**
 * Payloads the SDK clients take (a Step's input, an RPC's input, a fetch
 * worker's result) are bytes or a string. protobufjs sends anything else (an
 * object, a number, a boolean) as empty bytes, so a plain JavaScript caller
 * passing `{ orderId: 1 }` enqueued a Step with no input (and, enqueue being
 * idempotent, a corrected retry changed nothing), or completed a task with an
 * empty result. They are refused, naming the option, before anything is sent.
 */
import { Client, FetchClient } from '../../src';
import { pb } from '../../src/wire';
import { step } from '../helpers/fetch';
import { startTestNode, type TestNode } from '../helpers/node';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';

const redis = useEmbeddedRedis();
let t: TestNode;
const clients: { close(): void }[] = [];

beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('payload'));
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t.close();
});

function client(): Client {
  const c = new Client({ address: t.node.apiAddress, defaultTimeoutMs: 5000 });
  clients.push(c);
  return c;
}

const spec = (flowId: string) => ({ tenant: 'acme', flowId, flowType: 'order', stepType: 'charge', stepExecutionId: 's1' });
const stateOf = async (id: string) => pb.TaskState[(await t.matching.getTask({ task_id: id })).task!.state ?? 0];

it('refuses a Step input that is neither bytes nor a string, naming it, and enqueues nothing', async () => {
  const c = client();
  await expect(c.enqueueStep({ ...spec('f1'), input: { orderId: 1 } as never })).rejects.toThrow(
    'StepSpec option step.input: must be a string, Buffer or Uint8Array, got object',
  );
  await expect(c.enqueueSteps([{ ...spec('f2'), input: 'ok' }, { ...spec('f3'), input: 42 as never }])).rejects.toThrow(
    'StepSpec option steps[1].input: must be a string, Buffer or Uint8Array, got number',
  );
  // Nothing was enqueued: the corrected enqueues create their Steps, with their input.
  const r1 = await c.enqueueStep({ ...spec('f1'), input: JSON.stringify({ orderId: 1 }) });
  const [r2] = await c.enqueueSteps([{ ...spec('f2'), input: 'ok' }]);
  expect(r1.created).toBe(true);
  expect(r2!.created).toBe(true);
  expect((await c.getTask(r1.taskId)).input.toString()).toBe('{"orderId":1}');
});

it('refuses an RPC input that is neither bytes nor a string, naming it', async () => {
  const c = client();
  const call = c.invokeRpc({ tenant: 'acme', flowId: 'f', flowType: 'order', rpcName: 'status', input: { q: 1 } as never, timeoutMs: 500 });
  await expect(call).rejects.toThrow('invokeRpc option request.input: must be a string, Buffer or Uint8Array, got object');
});

it('refuses a fetch result that is neither bytes nor a string, naming it: the task stays locked, and a valid result completes it', async () => {
  const f = new FetchClient({ address: t.node.apiAddress, workerId: 'A' });
  clients.push(f);
  const id = (await t.matching.enqueueStep({ step: step() })).task_id!;
  await f.fetchAndLock({ topics: [{ tenant: 'acme', flowType: 'order', stepType: 'charge' }], waitMs: 1000 });
  await expect(f.complete(id, { result: { ok: true } as never })).rejects.toThrow(
    'FetchClient.complete option result: must be a string, Buffer or Uint8Array, got object',
  );
  expect(await stateOf(id)).toBe('LOCKED');
  await f.complete(id, { result: '{"ok":true}' });
  const o = (await t.matching.waitOutcome({ task_id: id, wait_ms: 2000 })).outcome!;
  expect(o.status).toBe(pb.OutcomeStatus.COMPLETED);
  expect(Buffer.from(o.output!).toString()).toBe('{"ok":true}');
});
