/** Validation of a StepSpec into the store's NewTask. */
import type { Config } from '../config';
import { invalidArgument } from '../errors';
import { partitionOf, taskIdIn } from '../store/keys';
import type { NewTask } from '../store/task-store';
import type { pb } from '../wire';
import { optionalId, requireBytes, requireDuration, requireId, requireName, requireQueueName, requireTimestamp } from './validation';

const MAX_ATTEMPTS = 10_000;

export function toNewTask(spec: pb.IStepSpec | null | undefined, field: string, c: Config): NewTask {
  if (!spec) throw invalidArgument(field, 'is required');
  const m = c.matching;
  const tenant = requireName(`${field}.tenant`, spec.tenant, m.maxQueueLength, 'matching.maxQueueLength');
  const flowId = requireId(`${field}.flow_id`, spec.flow_id);
  const flowType = requireName(`${field}.flow_type`, spec.flow_type, m.maxFlowTypeLength, 'matching.maxFlowTypeLength');
  const stepType = requireName(`${field}.step_type`, spec.step_type, m.maxQueueLength, 'matching.maxQueueLength');
  const stepExecutionId = requireId(`${field}.step_execution_id`, spec.step_execution_id);
  const queue = requireQueueName(`${field}.step_type`, tenant, flowType, stepType, m.maxQueueLength);
  const input = requireBytes(`${field}.input`, spec.input, c.limits.maxPayloadBytes);
  const readyAt = requireTimestamp(`${field}.ready_at_ms`, spec.ready_at_ms);
  const flowDeadline = requireTimestamp(`${field}.flow_deadline_ms`, spec.flow_deadline_ms);
  const methodTimeout = requireDuration(`${field}.method_timeout_ms`, spec.method_timeout_ms);
  const heartbeatTimeout = requireDuration(`${field}.heartbeat_timeout_ms`, spec.heartbeat_timeout_ms);
  const rp = spec.retry_policy ?? {};
  const maxAttempts = Number(rp.max_attempts ?? 0);
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 0 || maxAttempts > MAX_ATTEMPTS) {
    throw invalidArgument(`${field}.retry_policy.max_attempts`, `must be between 0 (default) and ${MAX_ATTEMPTS}`);
  }
  const coefficient = Number(rp.backoff_coefficient ?? 0);
  if (!Number.isFinite(coefficient) || (coefficient !== 0 && (coefficient < 1 || coefficient > 100))) {
    throw invalidArgument(`${field}.retry_policy.backoff_coefficient`, 'must be 0 (default) or between 1 and 100');
  }
  const { initialInterval, maxInterval } = backoffBounds(field, rp, c.steps);
  const nonRetryable = rp.non_retryable ?? [];
  if (nonRetryable.length > 64) throw invalidArgument(`${field}.retry_policy.non_retryable`, 'has more than 64 entries');
  nonRetryable.forEach((t, i) => requireId(`${field}.retry_policy.non_retryable[${i}]`, t, 256));
  const sticky = optionalId(`${field}.sticky_worker_id`, spec.sticky_worker_id, m.maxQueueLength);
  const s = c.steps;
  const partition = partitionOf(tenant, flowId, c.cluster.partitions);
  return {
    partition,
    taskId: taskIdIn(partition, tenant, flowId, stepExecutionId),
    queue, tenant, flowId, flowType, stepType, stepExecutionId, input, readyAt, flowDeadline,
    maxAttempts: maxAttempts || s.maxAttempts,
    initialInterval,
    backoffCoefficient: coefficient || s.backoffCoefficient,
    maxInterval,
    nonRetryable: nonRetryable.map(String),
    methodTimeout, heartbeatTimeout, stickyWorkerId: sticky,
  };
}

/**
 * The first and the longest backoff. Both given, the longest may not be the
 * shorter (Temporal refuses that policy too). One given, the default of the
 * other gives way to it: a first backoff past the default longest raises the
 * longest, and a longest below the default first lowers the first, so neither
 * asked-for bound is silently overridden by a server default.
 */
function backoffBounds(field: string, rp: pb.IRetryPolicy, d: Config['steps']): { initialInterval: number; maxInterval: number } {
  const initial = requireDuration(`${field}.retry_policy.initial_interval_ms`, rp.initial_interval_ms);
  const max = requireDuration(`${field}.retry_policy.max_interval_ms`, rp.max_interval_ms);
  if (initial && max && max < initial) {
    throw invalidArgument(`${field}.retry_policy.max_interval_ms`, `must be 0 (default) or at least initial_interval_ms (${initial})`);
  }
  if (initial) return { initialInterval: initial, maxInterval: max || Math.max(d.maxInterval, initial) };
  if (max) return { initialInterval: Math.min(d.initialInterval, max), maxInterval: max };
  return { initialInterval: d.initialInterval, maxInterval: d.maxInterval };
}
