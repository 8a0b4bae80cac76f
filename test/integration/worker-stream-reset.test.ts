/**
 * How the node reads the end of a busy worker stream (DESIGN §5, §6). A reset
 * means the worker may have run what it held; only a half-close without a
 * result says it did not. The SDK resets a stream still busy at its
 * stopDrainTimeout, and that reset reaches the node as the end of the request
 * side followed by the cancellation: the end alone is no half-close.
 */
import { Worker } from '../../src';
import { useEmbeddedRedis } from '../helpers/redis';
import { useSlotNode } from '../helpers/slot-node';
import { aborted, gate } from '../helpers/sdk';

const redis = useEmbeddedRedis();
const env = useSlotNode(redis, 'wreset');
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

it('an RPC whose stream the SDK resets at its stopDrainTimeout is not run again on another worker: the caller hears the worker went away', async () => {
  const started = gate();
  const w = new Worker({
    address: env.t.node.apiAddress, tenant: 'acme', appWorkerId: 'stopping', maxConcurrentTasks: 1, reservedRpcTasks: 0,
    stopDrainTimeout: 200,
    flowTypes: {
      order: {
        steps: {},
        rpcs: {
          lookup: async (ctx) => {
            started.open();
            await aborted(ctx.signal);
            return 'too late';
          },
        },
      },
    },
  });
  stops.push(() => w.stop());
  const running = w.start().catch((err: unknown) => err);
  await w.waitPullRegistered(AbortSignal.timeout(5000));
  const call = env.t.matching.invokeRpc({
    tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'lookup', input: Buffer.from('x'), timeout_ms: 4000,
  }).then(() => 'answered', (err: Error) => err.message);
  await started.opened;
  // An idle worker of the flow type, there to take the call were it given back.
  const other = await env.registeredSlot({ app_worker_id: 'other' });

  await w.stop(); // the handler still runs at stopDrainTimeout: stop() resets its stream
  await running;
  // The handler may have done its work: the call is not handed to another worker.
  await expect(other.nextOf('rpc_task', 500)).rejects.toThrow(/no frame/);
  expect(await call).toMatch(/worker stopping went away while running rpc lookup/);
});
