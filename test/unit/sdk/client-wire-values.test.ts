/**
 * Values protobufjs would put on the wire as something else: an invalid Date
 * or NaN as a time becomes 0 ("unset": ready now, no flow deadline), NaN or
 * Infinity as a uint32 count becomes 0 (the server's default), a fraction is
 * cut, a count past 2^32 - 1 wraps. The Client refuses them with a TypeError
 * naming the field instead of letting the Step lose its deadline or its retry
 * policy, or a consumer its max count (DESIGN §11.6 and
 * §11.8: bounds are rejected, never clamped; bad input gets an error naming
 * the field).
 */
import { pb } from '../../../src/wire';
import { toConsumeRequest, toStepSpec } from '../../../src/sdk/client/mappers';
import { Client, FetchClient, TerminalTasksClient } from '../../../src';
import { wireFlag, wireText } from '../../../src/sdk/common/wire-values';
import { checkedPayload } from '../../../src/sdk/common/payloads';

const step = { tenant: 't', flowId: 'f', flowType: 'o', stepType: 's', stepExecutionId: 'e' };

/** What the node would decode from the StepSpec the Client sends. */
const onTheWire = (spec: pb.IStepSpec) => pb.StepSpec.decode(pb.StepSpec.encode(spec).finish());

describe('the Client refuses a time it cannot send as given', () => {
  it.each([
    ['flowDeadline', new Date('not a date')],
    ['flowDeadline', NaN],
    ['flowDeadline', Infinity],
    ['readyAt', new Date('not a date')],
    ['readyAt', -1],
  ])('%s = %p', (field, value) => {
    expect(() => toStepSpec({ ...step, [field]: value }, 'steps[2]')).toThrow(TypeError);
    expect(() => toStepSpec({ ...step, [field]: value }, 'steps[2]')).toThrow(`steps[2].${field}`);
  });

  it('still sends a valid Date or epoch ms as it is, and none as 0', () => {
    const at = new Date('2030-01-02T03:04:05.678Z');
    const wire = onTheWire(toStepSpec({ ...step, flowDeadline: at, readyAt: at.getTime() + 1 }));
    expect(Number(wire.flow_deadline_ms)).toBe(at.getTime());
    expect(Number(wire.ready_at_ms)).toBe(at.getTime() + 1);
    expect(Number(onTheWire(toStepSpec(step)).flow_deadline_ms)).toBe(0);
  });
});

describe('the Client refuses a count it cannot send as given', () => {
  it.each([NaN, Infinity, 2.5, -1])('retryPolicy.maxAttempts = %p', (maxAttempts) => {
    expect(() => toStepSpec({ ...step, retryPolicy: { maxAttempts } })).toThrow(/step\.retryPolicy\.maxAttempts/);
  });

  it.each([NaN, Infinity, 1.5, -1])('consumeOutcomes maxCount = %p', (maxCount) => {
    expect(() => toConsumeRequest({ group: 'g', consumer: 'c', maxCount })).toThrow(/maxCount/);
  });

  // protobufjs writes a uint32 as value >>> 0: 2^32 went out as 0 (the server's default), 2^32 + 1 as 1.
  it.each([2 ** 32, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER])('a count past what a uint32 holds, %p', (n) => {
    expect(() => toConsumeRequest({ group: 'g', consumer: 'c', maxCount: n })).toThrow(/consumeOutcomes option maxCount: .*4294967295/);
    expect(() => toStepSpec({ ...step, retryPolicy: { maxAttempts: n } })).toThrow(/step\.retryPolicy\.maxAttempts/);
  });

  it('still sends a whole count as it is, and none as 0 (the server default)', () => {
    expect(pb.ConsumeOutcomesRequest.decode(pb.ConsumeOutcomesRequest.encode(
      toConsumeRequest({ group: 'g', consumer: 'c', maxCount: 2 ** 32 - 1 })).finish()).max_count).toBe(2 ** 32 - 1);
    expect(toStepSpec({ ...step, retryPolicy: { maxAttempts: 5 } }).retry_policy!.max_attempts).toBe(5);
    expect(toStepSpec({ ...step, retryPolicy: {} }).retry_policy!.max_attempts).toBe(0);
    expect(toConsumeRequest({ group: 'g', consumer: 'c', maxCount: 7 }).max_count).toBe(7);
    expect(toConsumeRequest({ group: 'g', consumer: 'c' }).max_count).toBe(0);
  });
});

describe('the clients refuse a string or flag option of another type, before anything is sent', () => {
  // protobufjs sends a number for a string field as '' and any truthy value for a bool as true:
  // dropOutcomeGroup(g, { force: 'false' }) dropped a live group, describeQueues('t', 5) listed every
  // flow type, and an invokeRpc's numeric stickyWorkerId was dropped.
  const c = new Client({ address: '127.0.0.1:1' });
  const f = new FetchClient({ address: '127.0.0.1:1', workerId: 'w' });
  const ops = new TerminalTasksClient({ address: '127.0.0.1:1' });
  afterAll(() => {
    c.close();
    f.close();
    ops.close();
  });
  const bad = 5 as unknown as string;
  it.each<[string, () => Promise<unknown>, string]>([
    ['dropOutcomeGroup force', () => c.dropOutcomeGroup('g', { force: 'false' as unknown as boolean }), 'dropOutcomeGroup option force: must be true or false, got string'],
    ['dropOutcomeGroup tenant', () => c.dropOutcomeGroup('g', { tenant: bad }), 'dropOutcomeGroup option tenant: must be a string, got number'],
    ['describeQueues flowType', () => c.describeQueues('t', bad), 'describeQueues option flowType: must be a string, got number'],
    ['cancelFlow reason', () => c.cancelFlow('t', 'f', bad), 'cancelFlow option reason: must be a string, got number'],
    ['cancelFlow flowId', () => c.cancelFlow('t', bad), 'cancelFlow option flowId: must be a string, got number'],
    ['invokeRpc stickyWorkerId', () => c.invokeRpc({ tenant: 't', flowId: 'f', flowType: 'o', rpcName: 'r', stickyWorkerId: bad }), 'invokeRpc option request.stickyWorkerId: must be a string, got number'],
    ['getTask taskId', () => c.getTask(bad), 'getTask option taskId: must be a string, got number'],
    ['ackOutcomes outcomeIds', () => c.ackOutcomes('g', 'a-b' as unknown as string[]), 'ackOutcomes option outcomeIds: must be an array of strings, got string'],
    ['consumeOutcomes ack', () => c.consumeOutcomes({ group: 'g', consumer: 'c', ack: [bad] }), 'consumeOutcomes option ack[0]: must be a string, got number'],
    ['enqueueStep tenant', () => c.enqueueStep({ ...step, tenant: bad }), 'StepSpec option step.tenant: must be a string, got number'],
    ['FetchClient.complete idempotencyKey', () => f.complete('t', { idempotencyKey: bad }), 'FetchClient.complete option idempotencyKey: must be a string, got number'],
    ['FetchClient.fail message', () => f.fail('t', { message: bad, retries: 1 }), 'FetchClient.fail option message: must be a string, got number'],
    ['TerminalTasksClient.list flowType', () => ops.list('t', { flowType: bad }), 'TerminalTasksClient.list option flowType: must be a string, got number'],
    ['TerminalTasksClient.abandon reason', () => ops.abandon('t', bad), 'TerminalTasksClient.abandon option reason: must be a string, got number'],
  ])('%s', async (_name, call, message) => {
    const err = await call().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe(message);
  });

  it('a FetchClient with a workerId that is not a string', () => {
    expect(() => new FetchClient({ address: '127.0.0.1:1', workerId: 7 as unknown as string })).toThrow('FetchClient option workerId: must be a string, got number');
  });
});

describe('what the clients send for an option left out, and how they name a refused one', () => {
  it('sends a flag left out as false, a text left out as empty', () => {
    // force left out must never drop a live outcome group.
    expect(wireFlag('dropOutcomeGroup', 'force', undefined)).toBe(false);
    expect(wireText('describeQueues', 'flowType', undefined)).toBe('');
  });

  it('takes a null payload (JSON passed through) as none, and names an array as an array', () => {
    expect(checkedPayload('StepSpec', 'step.input', null)).toEqual(new Uint8Array(0));
    expect(toStepSpec({ ...step, input: null as unknown as string }).input).toEqual(new Uint8Array(0));
    expect(() => checkedPayload('StepSpec', 'step.input', [1, 2])).toThrow('StepSpec option step.input: must be a string, Buffer or Uint8Array, got an array');
    expect(() => wireText('getTask', 'taskId', ['a'])).toThrow('getTask option taskId: must be a string, got an array');
    expect(() => wireText('getTask', 'taskId', null)).toThrow('getTask option taskId: must be a string, got null');
  });
});
