/**
 * A StepSpec's retry policy against the server defaults (steps.*): an asked-for
 * first or longest backoff is kept as asked, and a policy whose longest backoff
 * is shorter than its first is refused naming the field.
 */
import { toNewTask } from '../../../src/api/step-spec';
import { loadConfig } from '../../../src/config';
import type { pb } from '../../../src/wire';

const config = loadConfig({ env: {}, overrides: { 'steps.initialInterval': '1s', 'steps.maxInterval': '100s' } });
const spec = (retry_policy: pb.IRetryPolicy): pb.IStepSpec => ({
  tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1', retry_policy,
});
const bounds = (rp: pb.IRetryPolicy) => {
  const t = toNewTask(spec(rp), 'step', config);
  return [t.initialInterval, t.maxInterval];
};

it('takes the defaults for an empty policy', () => {
  expect(bounds({})).toEqual([1000, 100_000]);
});

it('keeps both bounds as asked', () => {
  expect(bounds({ initial_interval_ms: 200, max_interval_ms: 5000 })).toEqual([200, 5000]);
  expect(bounds({ initial_interval_ms: 3000, max_interval_ms: 3000 })).toEqual([3000, 3000]);
});

it('raises the default longest backoff to a first backoff past it', () => {
  expect(bounds({ initial_interval_ms: 150_000 })).toEqual([150_000, 150_000]);
  expect(bounds({ initial_interval_ms: 2000 })).toEqual([2000, 100_000]);
});

it('lowers the default first backoff to a longest backoff under it', () => {
  expect(bounds({ max_interval_ms: 400 })).toEqual([400, 400]);
  expect(bounds({ max_interval_ms: 5000 })).toEqual([1000, 5000]);
});

it('refuses a longest backoff shorter than the first, naming max_interval_ms', () => {
  expect(() => bounds({ initial_interval_ms: 5000, max_interval_ms: 1000 })).toThrow(/step\.retry_policy\.max_interval_ms.*at least initial_interval_ms/);
});

it('keeps the policy\'s maxAttempts and backoffCoefficient, and takes the defaults (steps.*) for 0 or omitted', () => {
  const policy = (rp: pb.IRetryPolicy) => {
    const t = toNewTask(spec(rp), 'step', config);
    return [t.maxAttempts, t.backoffCoefficient];
  };
  expect(policy({ max_attempts: 7, backoff_coefficient: 1.5 })).toEqual([7, 1.5]);
  expect(policy({ max_attempts: 1, backoff_coefficient: 1 })).toEqual([1, 1]);
  expect(policy({ max_attempts: 0, backoff_coefficient: 0 })).toEqual([3, 2]);
  expect(policy({})).toEqual([3, 2]);
});
