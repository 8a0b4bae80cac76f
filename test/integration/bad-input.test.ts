/**
 * Bad input on every MatchingService method gets INVALID_ARGUMENT naming the
 * field, and writes nothing to Redis (DESIGN §11.8).
 */
import { ClientError, Status, createClient } from 'nice-grpc';
import { MatchingServiceDefinition, pb } from '../../src/wire';
import { useEmbeddedRedis, uniquePrefix } from '../helpers/redis';
import { startTestNode, type TestNode } from '../helpers/node';
import { openSlot, registerFrame } from '../helpers/raw-slot';

const redis = useEmbeddedRedis();
let t: TestNode;
let prefix: string;

beforeAll(async () => {
  prefix = uniquePrefix('bad');
  t = await startTestNode(redis.url, prefix, { 'limits.maxPayloadBytes': 1024, 'limits.maxBatch': 5 });
});
afterAll(() => t.close());

const good: pb.IStepSpec = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1' };
const spec = (over: Partial<pb.IStepSpec>) => ({ ...good, ...over });

/** Every key of this test's prefix with its type and size: what "Redis unchanged" compares. */
async function snapshot(): Promise<string[]> {
  const keys = ((await redis.command('KEYS', `${prefix}:*`)) as string[]).filter((k) => !k.endsWith(':members') && !k.includes(':node:'));
  const out: string[] = [];
  for (const k of keys.sort()) {
    const type = String(await redis.command('TYPE', k));
    const size = type === 'zset' ? await redis.command('ZCARD', k) : type === 'stream' ? await redis.command('XLEN', k) : type === 'set' ? await redis.command('SCARD', k) : type === 'hash' ? await redis.command('HLEN', k) : '';
    out.push(`${k} ${type} ${String(size)}`);
  }
  return out;
}

async function rejects(call: () => Promise<unknown>, field: string, code = Status.INVALID_ARGUMENT): Promise<void> {
  const before = await snapshot();
  const err = await call().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ClientError);
  expect((err as ClientError).code).toBe(code);
  expect((err as ClientError).details).toContain(field);
  expect(await snapshot()).toEqual(before);
}

const long = (n: number) => 'x'.repeat(n);

describe('EnqueueStep', () => {
  it.each<[string, pb.IStepSpec | null, string]>([
    ['missing step', null, 'step'],
    ['missing tenant', spec({ tenant: '' }), 'step.tenant'],
    ['tenant with a colon', spec({ tenant: 'a:b' }), 'step.tenant'],
    ['tenant with a hash tag', spec({ tenant: '{0}' }), 'step.tenant'],
    ['tenant with unicode', spec({ tenant: 'ténant' }), 'step.tenant'],
    ['flow type over maxFlowTypeLength', spec({ flow_type: long(257) }), 'step.flow_type'],
    ['step type with spaces', spec({ step_type: 'two words' }), 'step.step_type'],
    ['missing flow id', spec({ flow_id: '' }), 'step.flow_id'],
    ['flow id with a control character', spec({ flow_id: 'f\u0001' }), 'step.flow_id'],
    ['step execution id over 512 characters', spec({ step_execution_id: long(513) }), 'step.step_execution_id'],
    ['oversized input', spec({ input: Buffer.alloc(1025) }), 'step.input'],
    ['method timeout over a year', spec({ method_timeout_ms: 400 * 86_400_000 }), 'step.method_timeout_ms'],
    ['ready_at beyond any date', spec({ ready_at_ms: 9e15 }), 'step.ready_at_ms'],
    ['absurd max attempts', spec({ retry_policy: { max_attempts: 100000 } }), 'step.retry_policy.max_attempts'],
    ['backoff coefficient below 1', spec({ retry_policy: { backoff_coefficient: 0.5 } }), 'step.retry_policy.backoff_coefficient'],
    ['too many non-retryable types', spec({ retry_policy: { non_retryable: Array.from({ length: 65 }, (_, i) => `T${i}`) } }), 'step.retry_policy.non_retryable'],
    ['sticky worker id with a control character', spec({ sticky_worker_id: 'w\n' }), 'step.sticky_worker_id'],
  ])('%s', async (_name, step, field) => {
    await rejects(() => t.matching.enqueueStep({ step }), field);
  });

  it('names the request when the bytes are not a protobuf message at all', async () => {
    const raw = createClient({
      enqueueStep: {
        ...MatchingServiceDefinition.enqueueStep,
        requestSerialize: (b: Uint8Array) => b,
      },
    }, t.channel);
    await rejects(() => raw.enqueueStep(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01])), 'request');
  });
});

describe('EnqueueSteps', () => {
  it('refuses an empty batch and one over limits.maxBatch', async () => {
    await rejects(() => t.matching.enqueueSteps({ steps: [] }), 'steps');
    await rejects(() => t.matching.enqueueSteps({ steps: Array.from({ length: 6 }, (_, i) => spec({ step_execution_id: `s${i}` })) }), 'limits.maxBatch');
  });

  it('writes none of a batch when one entry is bad, and names its index', async () => {
    await rejects(
      () => t.matching.enqueueSteps({ steps: [spec({ step_execution_id: 'ok1' }), spec({ step_execution_id: 'ok2' }), spec({ tenant: 'bad tenant' })] }),
      'steps[2].tenant',
    );
  });
});

const rpc: pb.IInvokeRpcRequest = { tenant: 'acme', flow_id: 'f1', flow_type: 'order', rpc_name: 'status', input: Buffer.from('q'), timeout_ms: 100 };

describe('reads and outcome methods', () => {
  const cases: [string, () => Promise<unknown>, string, Status?][] = [
    ['GetTask without an id', () => t.matching.getTask({ task_id: '' }), 'task_id'],
    ['GetTask with a malformed id', () => t.matching.getTask({ task_id: 'not-an-id' }), 'task_id'],
    ['GetTask with a partition out of range', () => t.matching.getTask({ task_id: `99-${'a'.repeat(24)}` }), 'task_id'],
    ['GetTask of an unknown task', () => t.matching.getTask({ task_id: `1-${'a'.repeat(24)}` }), 'not found', Status.NOT_FOUND],
    ['WaitOutcome with a malformed id', () => t.matching.waitOutcome({ task_id: '{0}', wait_ms: 10 }), 'task_id'],
    ['WaitOutcome waiting past limits.maxWait', () => t.matching.waitOutcome({ task_id: `1-${'a'.repeat(24)}`, wait_ms: 3_600_000 }), 'wait_ms'],
    ['ConsumeOutcomes without a group', () => t.matching.consumeOutcomes({ group: '', consumer: 'c' }), 'group'],
    ['ConsumeOutcomes with a bad consumer', () => t.matching.consumeOutcomes({ group: 'g', consumer: 'a b' }), 'consumer'],
    ['ConsumeOutcomes over the max count', () => t.matching.consumeOutcomes({ group: 'g', consumer: 'c', max_count: 5000 }), 'max_count'],
    ['ConsumeOutcomes acking a malformed id', () => t.matching.consumeOutcomes({ group: 'g', consumer: 'c', ack: ['zzz'] }), 'ack[0]'],
    ['AckOutcomes with no ids', () => t.matching.ackOutcomes({ group: 'g', outcome_ids: [] }), 'outcome_ids'],
    ['AckOutcomes with a malformed id', () => t.matching.ackOutcomes({ group: 'g', outcome_ids: ['1-1-1', 'x'] }), 'outcome_ids[1]'],
    ['CancelFlow without a tenant', () => t.matching.cancelFlow({ tenant: '', flow_id: 'f' }), 'tenant'],
    ['CancelFlow with a control character', () => t.matching.cancelFlow({ tenant: 'acme', flow_id: '\u0000' }), 'flow_id'],
    ['DescribeQueues without a tenant', () => t.matching.describeQueues({ tenant: '' }), 'tenant'],
    ['DescribeQueues with a bad flow type', () => t.matching.describeQueues({ tenant: 'acme', flow_type: 'a:b' }), 'flow_type'],
    ['InvokeRpc without a tenant', () => t.matching.invokeRpc({ ...rpc, tenant: '' }), 'tenant'],
    ['InvokeRpc without a flow id', () => t.matching.invokeRpc({ ...rpc, flow_id: '' }), 'flow_id'],
    ['InvokeRpc with a flow type over maxFlowTypeLength', () => t.matching.invokeRpc({ ...rpc, flow_type: long(257) }), 'flow_type'],
    ['InvokeRpc with an rpc name over maxQueueLength', () => t.matching.invokeRpc({ ...rpc, rpc_name: long(257) }), 'rpc_name'],
    ['InvokeRpc with an oversized input', () => t.matching.invokeRpc({ ...rpc, input: Buffer.alloc(1025) }), 'input'],
    ['InvokeRpc with a timeout over a year', () => t.matching.invokeRpc({ ...rpc, timeout_ms: 400 * 86_400_000 }), 'timeout_ms'],
    ['InvokeRpc with a sticky worker id with a control character', () => t.matching.invokeRpc({ ...rpc, sticky_worker_id: 'w\n' }), 'sticky_worker_id'],
  ];
  for (const [name, call, field, code] of cases) {
    it(name, async () => {
      await rejects(call, field, code);
    });
  }
});

describe('Register', () => {
  it.each<[string, Partial<pb.IRegister>, string]>([
    ['tenant over maxQueueLength', { tenant: long(257) }, 'register.tenant'],
    ['app worker id over maxQueueLength', { app_worker_id: long(257) }, 'register.app_worker_id'],
    ['app worker id with a space', { app_worker_id: 'w 1' }, 'register.app_worker_id'],
    ['flow type over maxFlowTypeLength', { flow_types: ['order', long(257)] }, 'register.flow_types[1]'],
  ])('%s', async (_name, over, field) => {
    const before = await snapshot();
    const slot = openSlot(t.worker, registerFrame(over));
    const err = (await slot.ended) as (Error & { code?: Status; details?: string }) | null;
    expect(err?.code).toBe(Status.INVALID_ARGUMENT);
    expect(err?.details).toContain(field);
    expect(t.node.gateway.streamCount).toBe(0);
    expect(await snapshot()).toEqual(before);
  });
});

it('still works after all that: a good enqueue is accepted', async () => {
  const r = await t.matching.enqueueStep({ step: good });
  expect(r.created).toBe(true);
});
