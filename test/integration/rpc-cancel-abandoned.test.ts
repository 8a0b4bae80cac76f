/**
 * An RPC nobody waits for any more gets a Cancel on the stream that runs it
 * (DESIGN §6: running work gets Cancel; proto Cancel): its caller went away,
 * or its run deadline passed. The handler hears it (its context's signal) and
 * may stop, instead of holding its slot to the end of a run nobody reads. An
 * RPC answered in time gets none.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame, type RawSlot } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;
let slot: RawSlot;
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('rpc-cancel'));
  slot = openSlot(t.worker, registerFrame({ app_worker_id: 'w1', slot_kind: pb.SlotKind.RPC_ONLY }));
  await slot.nextOf('registered');
});
afterEach(async () => {
  slot.reset();
  await t.close();
});

const invoke = (over: Partial<pb.IInvokeRpcRequest>, signal?: AbortSignal) =>
  t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), ...over }, { signal })
    .then(() => 'answered', (e: Error) => e.message);

it('cancels a running RPC whose caller went away', async () => {
  const caller = new AbortController();
  const call = invoke({ timeout_ms: 10_000 }, caller.signal);
  const task = (await slot.nextOf('rpc_task')).rpc_task!;
  caller.abort();
  await call;
  const cancel = (await slot.nextOf('cancel', 2000)).cancel!;
  expect(cancel.task_token).toBe(task.task_token);
  expect(cancel.reason).toMatch(/caller went away/);
  // The late result is refused, and the slot is free again for the next call.
  slot.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('late') } });
  expect((await slot.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.REFUSED_STALE);
  const next = invoke({ flow_id: 'g', timeout_ms: 2000 });
  const t2 = (await slot.nextOf('rpc_task')).rpc_task!;
  slot.send({ rpc_result: { task_token: t2.task_token, output: Buffer.from('ok') } });
  expect(await next).toBe('answered');
});

it('cancels a running RPC whose run deadline passed', async () => {
  const call = invoke({ timeout_ms: 300 });
  const task = (await slot.nextOf('rpc_task')).rpc_task!;
  // Says what happened: the worker took it (the message said "no worker took rpc status within … ms").
  const message = await call;
  expect(message).toMatch(/ZD_RPC_UNAVAILABLE: rpc status: worker w1 took it but did not answer in time \(within \d+ ms of its arrival\)/);
  expect(message).not.toMatch(/no worker took/);
  const cancel = (await slot.nextOf('cancel', 2000)).cancel!;
  expect(cancel.task_token).toBe(task.task_token);
});

it('sends no Cancel for an RPC answered in time', async () => {
  const call = invoke({ timeout_ms: 2000 });
  const task = (await slot.nextOf('rpc_task')).rpc_task!;
  slot.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('ok') } });
  expect(await call).toBe('answered');
  await slot.nextOf('result_ack');
  await expect(slot.nextOf('cancel', 300)).rejects.toThrow(/no frame/);
});

it('says no worker took an RPC, and within how long, when none did', async () => {
  const message = await invoke({ flow_type: 'nobody-serves-this', timeout_ms: 300 });
  expect(message).toMatch(/ZD_RPC_UNAVAILABLE: rpc status: no worker took it within 300 ms/);
});
