/** What handlers see and return. */
import type { Payload } from '../common';

/** Fields every task context has. */
export interface TaskContextBase {
  readonly tenant: string;
  readonly flowId: string;
  readonly flowType: string;
  /** The task's input bytes. */
  readonly input: Buffer;
  /**
   * Aborted when the server cancels the task, the stream is lost, or a
   * forced stop passes `stopDrainTimeout`. Long handlers should honour it.
   */
  readonly signal: AbortSignal;
  /**
   * Records progress and keeps the attempt alive. Call it as often as you
   * like: the first goes at once, then at most one Heartbeat frame per third
   * of the heartbeat timeout (per second without one), carrying the latest details.
   * Details that are neither a string nor bytes are a TypeError.
   */
  heartbeat(details?: Payload): void;
}

export interface StepContext extends TaskContextBase {
  readonly taskId: string;
  readonly stepType: string;
  readonly stepExecutionId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly enqueuedAt: Date | undefined;
  readonly startedAt: Date | undefined;
  /** Per-attempt method timeout in ms; 0 = none. */
  readonly methodTimeoutMs: number;
  /** Heartbeat timeout in ms; 0 = none. */
  readonly heartbeatTimeoutMs: number;
  readonly flowDeadline: Date | undefined;
}

export interface RpcContext extends TaskContextBase {
  readonly rpcName: string;
  readonly deadline: Date | undefined;
}

/** The value of a handler becomes the output; a throw becomes a failure (see `StepFailure`). */
export type HandlerResult = Payload | void | null | undefined;

export type StepHandler = (ctx: StepContext) => HandlerResult | Promise<HandlerResult>;
export type RpcHandler = (ctx: RpcContext) => HandlerResult | Promise<HandlerResult>;

/** Handlers of one flow type, by Step type and by RPC name. */
export interface FlowTypeHandlers {
  steps?: Record<string, StepHandler>;
  rpcs?: Record<string, RpcHandler>;
}

/** The slot kinds of DESIGN §5, by their proto names. */
export type SlotKindName = 'STEP_AND_RPC' | 'RPC_ONLY';
