/**
 * Each time an RPC is handed to a slot it carries a token of its own. A slot that
 * declines with NO_CAPACITY (an older SDK's "busy") may get the same call back (after
 * a short pause); with one token for the call's whole life, a result or a second
 * decline the worker sent about the first hand-out was applied to the second, which
 * it had not read yet: the caller got an output from a run the worker had declined.
 * As a Step's token names its attempt's start, a frame about an earlier hand-out is
 * stale. The frames about the first hand-out are sent here once the second is out,
 * as from a worker that has not read it yet.
 * One node, a raw slot, a real redis-server.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('handouts'), { 'matching.dispatchWait': '2000ms', 'matching.stickyWait': '500ms' });
});
afterEach(() => t.close());

async function slotWithCall() {
  const s = openSlot(t.worker);
  await s.nextOf('registered');
  const call = t.matching.invokeRpc({ tenant: 'acme', flow_id: 'f', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 5000 })
    .then((r) => ({ output: Buffer.from(r.output ?? []).toString() }), (e: Error) => ({ error: e.message }));
  const first = (await s.nextOf('rpc_task')).rpc_task!;
  return { s, call, first };
}

it('refuses as stale a result about a hand-out the slot declined, and takes the result of the one it runs', async () => {
  const { s, call, first } = await slotWithCall();
  s.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
  const second = (await s.nextOf('rpc_task')).rpc_task!;
  expect(second.task_token).not.toBe(first.task_token);
  s.send({ rpc_result: { task_token: first.task_token, output: Buffer.from('from the declined hand-out') } });
  const ack = (await s.nextOf('result_ack')).result_ack!;
  expect(ack).toMatchObject({ task_token: first.task_token, verdict: pb.ResultVerdict.REFUSED_STALE });
  s.send({ rpc_result: { task_token: second.task_token, output: Buffer.from('from the run') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(await call).toEqual({ output: 'from the run' });
  s.reset();
});

it('a decline sent twice returns the call once', async () => {
  const { s, call, first } = await slotWithCall();
  s.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
  const second = (await s.nextOf('rpc_task')).rpc_task!;
  s.send({ decline: { task_token: first.task_token, reason: pb.DeclineReason.NO_CAPACITY } });
  // The second decline names a hand-out that is over: refused, and nothing is returned.
  expect((await s.nextOf('result_ack')).result_ack).toMatchObject({ task_token: first.task_token, verdict: pb.ResultVerdict.REFUSED_STALE });
  s.send({ rpc_result: { task_token: second.task_token, output: Buffer.from('ran once') } });
  expect((await s.nextOf('result_ack')).result_ack!.verdict).toBe(pb.ResultVerdict.ACCEPTED);
  expect(await call).toEqual({ output: 'ran once' });
  s.reset();
});
