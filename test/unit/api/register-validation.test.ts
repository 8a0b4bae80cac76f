/**
 * A worker stream's Register frame as the node reads it: the protocol versions it
 * serves, the slot kind older SDKs leave out, the limits on its fields, and the
 * options that only make sense together.
 */
import { MIN_PROTOCOL_VERSION, PONG_PROTOCOL_VERSION, validateRegister } from '../../../src/api/worker-service';
import { loadConfig } from '../../../src/config';
import { pb, PROTOCOL_VERSION } from '../../../src/wire';

const config = loadConfig({ env: {}, overrides: { 'matching.maxFlowTypes': 3 } });
const register = (over: Partial<pb.IRegister> = {}): pb.IRegister => ({
  protocol_version: PROTOCOL_VERSION, tenant: 'acme', app_worker_id: 'w1', flow_types: ['order'],
  slot_kind: pb.SlotKind.STEP_AND_RPC, task_limit: 1, sdk_name: 'sdk', sdk_version: '1.2', ...over,
});
const refusal = (over: Partial<pb.IRegister>) => {
  try {
    validateRegister(register(over), config);
  } catch (err) {
    return (err as Error).message;
  }
  return 'taken';
};

it('serves the oldest and the newest protocol and nothing outside them', () => {
  expect(validateRegister(register({ protocol_version: MIN_PROTOCOL_VERSION }), config).tenant).toBe('acme');
  expect(validateRegister(register({ protocol_version: PROTOCOL_VERSION }), config).tenant).toBe('acme');
  expect(refusal({ protocol_version: MIN_PROTOCOL_VERSION - 1 })).toContain(`protocol version ${MIN_PROTOCOL_VERSION - 1}`);
  expect(refusal({ protocol_version: PROTOCOL_VERSION + 1 })).toContain(`protocol version ${PROTOCOL_VERSION + 1}`);
});

it('reads a slot kind left out as a shared slot only from an SDK older than reserved RPC slots', () => {
  const older = validateRegister(register({ protocol_version: PONG_PROTOCOL_VERSION - 1, slot_kind: pb.SlotKind.SLOT_KIND_UNSPECIFIED }), config);
  expect(older.kind).toBe('STEP_AND_RPC');
  expect(validateRegister(register({ protocol_version: PONG_PROTOCOL_VERSION - 1, slot_kind: pb.SlotKind.RPC_ONLY }), config).kind).toBe('RPC_ONLY');
  expect(refusal({ slot_kind: pb.SlotKind.SLOT_KIND_UNSPECIFIED })).toContain('register.slot_kind');
});

it('takes the silence of a busy stream for nothing only from SDKs older than Pong while busy', () => {
  expect(validateRegister(register({ protocol_version: PONG_PROTOCOL_VERSION - 1 }), config).quietWhileBusy).toBe(true);
  expect(validateRegister(register({ protocol_version: PONG_PROTOCOL_VERSION }), config).quietWhileBusy).toBe(false);
});

it('takes a task limit up to a million and refuses one past it', () => {
  expect(validateRegister(register({ task_limit: 1_000_000 }), config).taskLimit).toBe(1_000_000);
  expect(validateRegister(register({ task_limit: 0 }), config).taskLimit).toBe(0);
  expect(refusal({ task_limit: 1_000_001 })).toContain('register.task_limit');
});

it('takes as many flow types as matching.maxFlowTypes allows, each once, and refuses one more', () => {
  const reg = validateRegister(register({ flow_types: ['order', 'refund', 'order'] }), config);
  expect(reg.flowTypes).toEqual(['order', 'refund']);
  expect(refusal({ flow_types: ['a', 'b', 'c', 'd'] })).toContain('matching.maxFlowTypes');
  expect(refusal({ flow_types: [] })).toContain('register.flow_types');
});

it('names the SDK as name/version', () => {
  expect(validateRegister(register(), config).sdk).toBe('sdk/1.2');
  expect(validateRegister(register({ sdk_name: undefined, sdk_version: undefined }), config).sdk).toBe('/');
});

it('takes an SDK name and version of up to 64 characters and refuses one longer, naming the field', () => {
  const long = 'x'.repeat(64);
  expect(validateRegister(register({ sdk_name: long, sdk_version: long }), config).sdk).toBe(`${long}/${long}`);
  expect(refusal({ sdk_name: `${long}x` })).toContain('register.sdk_name');
  expect(refusal({ sdk_version: `${long}x` })).toContain('register.sdk_version');
});

it('lets a task ride in an ack only for a worker that also takes a task right after an ack', () => {
  const both = validateRegister(register({ accepts_task_after_ack: true, accepts_task_in_ack: true }), config);
  expect([both.acceptsTaskAfterAck, both.acceptsTaskInAck]).toEqual([true, true]);
  const inAckOnly = validateRegister(register({ accepts_task_in_ack: true }), config);
  expect([inAckOnly.acceptsTaskAfterAck, inAckOnly.acceptsTaskInAck]).toEqual([false, false]);
  const afterOnly = validateRegister(register({ accepts_task_after_ack: true }), config);
  expect([afterOnly.acceptsTaskAfterAck, afterOnly.acceptsTaskInAck]).toEqual([true, false]);
});
