/**
 * A StepResult and the stream's reset read in one turn (one socket read): the result
 * is recorded, not thrown away for a worker_lost failure. Results go to Redis in
 * batches at the turn's end, and the reset's failure used to get there first. Drives
 * the node's gateway as the worker service does (stepResult, then unregister), on a
 * real node and redis-server: a real socket cannot be made to deliver the two together.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('result-reset'));
});
afterEach(() => t.close());

it.each([
  ['an older worker (its slot freed by the ack)', false],
  ['a worker whose slot is freed by its result', true],
])('records a result read in the same turn as the reset: %s', async (_how, early) => {
  const g = t.node.gateway;
  const slot = g.register({
    tenant: 'acme', appWorkerId: 'w', flowTypes: ['order'], kind: 'STEP_AND_RPC', taskLimit: 1, sdk: 'test',
    acceptsTaskAfterAck: early, acceptsTaskInAck: early,
  });
  const frames = slot.out[Symbol.asyncIterator]();
  const r = await t.matching.enqueueStep({ step: { tenant: 'acme', flow_id: 'f', flow_type: 'order', step_type: 's', step_execution_id: '1' } });
  let task: pb.IStepTask | undefined;
  while (!task) task = ((await frames.next()).value as pb.IServerFrame).step_task ?? undefined;
  const result = g.stepResult(slot, { task_token: task.task_token, output: Buffer.from('done') }).catch(() => undefined);
  const reset = g.unregister(slot, false);
  await Promise.all([result, reset]);
  const o = await t.matching.waitOutcome({ task_id: r.task_id, wait_ms: 2000 });
  expect(o.outcome).toMatchObject({ status: pb.OutcomeStatus.COMPLETED, attempt: 1 });
  expect(Buffer.from(o.outcome!.output!).toString()).toBe('done');
});
