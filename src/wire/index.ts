/**
 * The wire contract: generated message classes (namespace `pb`) and the
 * nice-grpc service definitions of every service in proto/zdmatch/v1.
 * Shared by the server and the SDKs; it imports nothing but generated/.
 */
import './runtime';
import { zdmatch } from '../generated/zdmatch';
import { bidi, unary } from './adapter';

export import pb = zdmatch.v1;

/** Version of the worker protocol this build speaks (Register/Registered). */
export const PROTOCOL_VERSION = 4;

/** What a Failure may hold: longer ones are refused (never cut short), so the SDKs keep within them. */
/**
 * A decline's `type` (the gateway's cache, DeclinedType on the mesh) for an RPC
 * name: Step types and RPC names are separate namespaces in a worker (its
 * `steps` and `rpcs`), so lacking the RPC `refund` says nothing of the Step
 * `refund`. No valid name contains ':' (api/validation.ts).
 */
export const rpcDeclineType = (rpcName: string) => `rpc:${rpcName}`;

/** DESIGN §5: a worker sends a Pong this often while a task runs (the SDK's PONG_INTERVAL_MS). */
export const WORKER_PONG_INTERVAL_MS = 20_000;

export const FAILURE_LIMITS = { messageChars: 4096, typeChars: 256, retryAfterMs: 365 * 86_400_000 } as const;

const W = 'zdmatch.v1.WorkerTaskService';
export const WorkerTaskServiceDefinition = {
  connect: bidi(W, 'Connect', pb.WorkerFrame, pb.ServerFrame),
} as const;

const M = 'zdmatch.v1.MatchingService';
export const MatchingServiceDefinition = {
  enqueueStep: unary(M, 'EnqueueStep', pb.EnqueueStepRequest, pb.EnqueueStepResponse),
  enqueueSteps: unary(M, 'EnqueueSteps', pb.EnqueueStepsRequest, pb.EnqueueStepsResponse),
  enqueueStream: bidi(M, 'EnqueueStream', pb.EnqueueStreamRequest, pb.EnqueueStreamResponse),
  getTask: unary(M, 'GetTask', pb.GetTaskRequest, pb.GetTaskResponse),
  waitOutcome: unary(M, 'WaitOutcome', pb.WaitOutcomeRequest, pb.WaitOutcomeResponse),
  consumeOutcomes: unary(M, 'ConsumeOutcomes', pb.ConsumeOutcomesRequest, pb.ConsumeOutcomesResponse),
  ackOutcomes: unary(M, 'AckOutcomes', pb.AckOutcomesRequest, pb.AckOutcomesResponse),
  cancelFlow: unary(M, 'CancelFlow', pb.CancelFlowRequest, pb.CancelFlowResponse),
  describeQueues: unary(M, 'DescribeQueues', pb.DescribeQueuesRequest, pb.DescribeQueuesResponse),
  describeCluster: unary(M, 'DescribeCluster', pb.DescribeClusterRequest, pb.DescribeClusterResponse),
  listOutcomeGroups: unary(M, 'ListOutcomeGroups', pb.ListOutcomeGroupsRequest, pb.ListOutcomeGroupsResponse),
  dropOutcomeGroup: unary(M, 'DropOutcomeGroup', pb.DropOutcomeGroupRequest, pb.DropOutcomeGroupResponse),
  invokeRpc: unary(M, 'InvokeRpc', pb.InvokeRpcRequest, pb.InvokeRpcResponse),
} as const;

const E = 'zdmatch.v1.ExternalTaskService';
export const ExternalTaskServiceDefinition = {
  fetchAndLock: unary(E, 'FetchAndLock', pb.FetchAndLockRequest, pb.FetchAndLockResponse),
  complete: unary(E, 'Complete', pb.CompleteRequest, pb.CompleteResponse),
  fail: unary(E, 'Fail', pb.FailRequest, pb.FailResponse),
  extendLock: unary(E, 'ExtendLock', pb.ExtendLockRequest, pb.ExtendLockResponse),
  unlock: unary(E, 'Unlock', pb.UnlockRequest, pb.UnlockResponse),
} as const;

const O = 'zdmatch.v1.OperatorService';
export const OperatorServiceDefinition = {
  listTerminalTasks: unary(O, 'ListTerminalTasks', pb.ListTerminalTasksRequest, pb.ListTerminalTasksResponse),
  retryTerminalTask: unary(O, 'RetryTerminalTask', pb.RetryTerminalTaskRequest, pb.RetryTerminalTaskResponse),
  abandonTerminalTask: unary(O, 'AbandonTerminalTask', pb.AbandonTerminalTaskRequest, pb.AbandonTerminalTaskResponse),
} as const;

const P = 'zdmatch.v1.PeerService';
export const PeerServiceDefinition = {
  offer: unary(P, 'Offer', pb.OfferRequest, pb.OfferResponse),
  offerBatch: unary(P, 'OfferBatch', pb.OfferBatchRequest, pb.OfferBatchResponse),
  capacity: unary(P, 'Capacity', pb.CapacityUpdate, pb.PeerAck),
  doorbell: unary(P, 'Doorbell', pb.DoorbellRequest, pb.PeerAck),
  cancelAttempts: unary(P, 'CancelAttempts', pb.CancelAttemptsRequest, pb.PeerAck),
  invokeRpc: unary(P, 'InvokeRpc', pb.InvokeRpcRequest, pb.InvokeRpcResponse),
  heldAttempts: unary(P, 'HeldAttempts', pb.HeldAttemptsRequest, pb.HeldAttemptsResponse),
  link: bidi(P, 'Link', pb.LinkFrame, pb.LinkFrame),
} as const;

/** Every public and internal service, by full name (reflection tests, health). */
export const ALL_SERVICES = {
  'zdmatch.v1.WorkerTaskService': WorkerTaskServiceDefinition,
  'zdmatch.v1.MatchingService': MatchingServiceDefinition,
  'zdmatch.v1.ExternalTaskService': ExternalTaskServiceDefinition,
  'zdmatch.v1.OperatorService': OperatorServiceDefinition,
  'zdmatch.v1.PeerService': PeerServiceDefinition,
} as const;
