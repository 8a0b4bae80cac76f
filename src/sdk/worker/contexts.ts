/**
 * The contexts handlers get, one per task. Classes, not object literals: a
 * literal with a `get signal()` accessor gave every task's context an
 * accessor pair and a getter closure of its own, and V8 promoted them: the
 * worker's old generation grew by ≈ 1.4 MB per scavenge, scavenges took three
 * times as long and a major GC ran about once a second under load. With the
 * getter once on the prototype the worker's CPU per task fell by ≈ 40 % and
 * its major GCs at 5k tasks/s from four in 4 s to one (docs/benchmarks.md).
 */
import type { pb } from '../../wire';
import { fromEpochMs, toBuffer, toNum, type Payload } from '../common';
import type { RpcContext, StepContext } from './types';

/** What a context needs of its task: the signal, created on first use. */
interface SignalSource {
  readonly signal: AbortSignal;
}

type Heartbeat = (details?: Payload) => void;

/** The fields every context has, from the frame's common fields, and the signal getter. */
abstract class TaskContext {
  readonly tenant: string;
  readonly flowId: string;
  readonly flowType: string;
  readonly input: Buffer;
  readonly #task: SignalSource;

  protected constructor(t: { tenant: string; flow_id: string; flow_type: string; input: Uint8Array }, task: SignalSource, readonly heartbeat: Heartbeat) {
    this.tenant = t.tenant;
    this.flowId = t.flow_id;
    this.flowType = t.flow_type;
    this.input = toBuffer(t.input);
    this.#task = task;
  }

  get signal(): AbortSignal {
    return this.#task.signal;
  }
}

export class StepTaskContext extends TaskContext implements StepContext {
  readonly taskId: string;
  readonly stepType: string;
  readonly stepExecutionId: string;
  readonly attempt: number;
  readonly enqueuedAt: Date | undefined;
  readonly startedAt: Date | undefined;
  readonly methodTimeoutMs: number;
  readonly heartbeatTimeoutMs: number;
  readonly flowDeadline: Date | undefined;

  constructor(t: pb.StepTask, task: SignalSource, heartbeat: Heartbeat) {
    super(t, task, heartbeat);
    this.taskId = t.task_id;
    this.stepType = t.step_type;
    this.stepExecutionId = t.step_execution_id;
    this.attempt = t.attempt;
    this.enqueuedAt = fromEpochMs(t.enqueued_at_ms);
    this.startedAt = fromEpochMs(t.started_at_ms);
    this.methodTimeoutMs = toNum(t.method_timeout_ms);
    this.heartbeatTimeoutMs = toNum(t.heartbeat_timeout_ms);
    this.flowDeadline = fromEpochMs(t.flow_deadline_ms);
  }
}

export class RpcTaskContext extends TaskContext implements RpcContext {
  readonly rpcName: string;
  readonly deadline: Date | undefined;

  constructor(t: pb.RpcTask, task: SignalSource, heartbeat: Heartbeat) {
    super(t, task, heartbeat);
    this.rpcName = t.rpc_name;
    this.deadline = fromEpochMs(t.deadline_ms);
  }
}
