/**
 * An RPC held for its busy sticky worker moves on at once when that worker
 * goes away or starts stopping (DESIGN §4: "When it has no connected stream,
 * is draining, or has declined the type, skip this phase at once: a graceful
 * restart must cost no sticky wait"), as a Step waiting for it does — not
 * when matching.stickyWait runs out. One node, raw streams, real redis-server.
 */
import { pb } from '../../src/wire';
import { useEmbeddedRedis } from '../helpers/redis';
import { type RawSlot } from '../helpers/raw-slot';
import { useSlotNode } from '../helpers/slot-node';

const redis = useEmbeddedRedis();
const STICKY_WAIT = 3000;
const env = useSlotNode(redis, 'rpcstickygone', {
  'matching.stickyWait': `${STICKY_WAIT}ms`, 'matching.dispatchWait': '5000ms', 'matching.syncMatchWait': '200ms',
});

const slot = (app: string, over: Partial<pb.IRegister> = {}) => env.registeredSlot({ app_worker_id: app, ...over });

/** A Step that keeps one of A's slots busy; one attempt, so a lost stream ends it for good. */
async function busyWithStep(flowId: string): Promise<void> {
  await env.t.matching.enqueueStep({
    step: { tenant: 'acme', flow_id: flowId, flow_type: 'order', step_type: 'charge', step_execution_id: 's', retry_policy: { max_attempts: 1 } },
  });
}

it.each<[string, number, (a: RawSlot[]) => void]>([
  ['has no connected stream any more', 1, (a) => a[0]!.reset()],
  ['starts stopping (a stream half-closes)', 2, (a) => a[0]!.halfClose()],
])('gives an RPC held for its busy sticky worker to an idle worker at once when that worker %s', async (_how, streams, leave) => {
  // A: every stream busy with a Step; B: an idle RPC-only slot (it can take the call, never A's Steps)
  const a: RawSlot[] = [];
  for (let i = 0; i < streams; i++) {
    const s = await slot('A');
    await busyWithStep(`busy${i}`);
    await s.nextOf('step_task');
    a.push(s);
  }
  const b = await slot('B', { slot_kind: pb.SlotKind.RPC_ONLY });
  const call = env.t.matching.invokeRpc({
    tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), sticky_worker_id: 'A', timeout_ms: 8000,
  });
  // held for A while A is connected and busy
  await expect(b.nextOf('rpc_task', 300)).rejects.toThrow(/no frame/);

  const leftAt = Date.now();
  leave(a);
  const task = (await b.nextOf('rpc_task', STICKY_WAIT + 1000)).rpc_task!;
  expect(Date.now() - leftAt).toBeLessThan(STICKY_WAIT / 3);
  b.send({ rpc_result: { task_token: task.task_token, output: Buffer.from('from B') } });
  expect((await call).app_worker_id).toBe('B');
});
