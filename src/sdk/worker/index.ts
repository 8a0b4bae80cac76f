export { Worker, FLUSH_GRACE_MS, type WorkerState } from './worker';
export type { WorkerOptions } from './options';
export type { Readiness, QueueReadiness } from './readiness';
export { PullRegistrationError, WorkerCapacityError, WorkerStoppedError } from './errors';
export { StepFailure, type StepFailureOptions } from './failure';
export { TaskCancelledError, PONG_INTERVAL_MS } from './task';
export type {
  StepContext, RpcContext, TaskContextBase, StepHandler, RpcHandler, HandlerResult, FlowTypeHandlers, SlotKindName,
} from './types';
