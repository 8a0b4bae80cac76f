/**
 * An EnqueueSteps batch sent as several script calls (more than a call holds, or one
 * per partition on a Redis Cluster) whose one call fails while another, holding a
 * slot bound at enqueue, is still on its way: the batch fails once every call has
 * answered, so the slots given back find the Steps their calls started. One node,
 * real gRPC and a real redis-server; the failure is injected into one script call.
 */
import { pb } from '../../src/wire';
import { hotScripts } from '../../src/store/scripts';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';
import { sleep } from '../helpers/wait';

const redis = useEmbeddedRedis();
let t: TestNode;
beforeEach(async () => {
  t = await startTestNode(redis.url, uniquePrefix('batch-fail'));
});
afterEach(() => {
  jest.restoreAllMocks();
  return t.close();
});

it('leaves no Step started in a slot it gave back when another call of the batch failed first', async () => {
  // Guards the batch's failure waiting for all its calls: it rejected at the first failure,
  // the slots were given back while a slow call was still on its way, that call then started
  // its Step in a freed slot, and the Step stayed RUNNING with no worker ever told.
  const slots = [openSlot(t.worker, registerFrame({ app_worker_id: 'a' })), openSlot(t.worker, registerFrame({ app_worker_id: 'b' }))];
  for (const s of slots) await s.nextOf('registered');
  const script = hotScripts.enqueueTasks;
  const call = script.call.bind(script);
  let n = 0;
  jest.spyOn(script, 'call').mockImplementation((client, args) => {
    n++;
    if (n === 1) return sleep(300).then(() => call(client, args)); // slow: commits after the failure
    if (n === 2) return Promise.reject(new Error('injected: this call failed'));
    return call(client, args);
  });
  // 101 Steps: two calls; the first Step of each can start in an idle slot at enqueue
  const steps = Array.from({ length: 101 }, (_, i) => ({
    tenant: 'acme', flow_id: `f${i}`, flow_type: i === 0 || i === 100 ? 'order' : 'nobody', step_type: 's', step_execution_id: '1',
  }));
  await expect(t.matching.enqueueSteps({ steps })).rejects.toThrow();
  jest.restoreAllMocks();
  await sleep(500);
  const [first] = (await t.matching.enqueueSteps({ steps: [steps[0]!] })).results;
  const task = (await t.matching.getTask({ task_id: first!.task_id })).task!;
  if (task.state === pb.TaskState.RUNNING) {
    // running only where a worker was told
    const told = await Promise.all(slots.map((s) => s.nextOf('step_task', 500).then((f) => f.step_task?.task_id, () => undefined)));
    expect(told).toContain(first!.task_id);
  } else {
    expect(task).toMatchObject({ state: pb.TaskState.QUEUED, attempt: 1 });
  }
  for (const s of slots) s.reset();
});
