/**
 * One worker stream = one execution slot. It runs at most one task at a time;
 * `attempt` is the task it holds while busy.
 */
import type { pb } from '../wire';
import { Channel } from '../util/channel';

export type SlotKindName = 'STEP_AND_RPC' | 'RPC_ONLY';
export type SlotState = 'idle' | 'busy' | 'draining' | 'closed';

export interface HeldAttempt {
  partition: number;
  taskId: string;
  attempt: number;
  nonce: string;
  queue: string;
  token: string;
  /** Set once the start script committed and the frame was queued. */
  delivered: boolean;
}

export interface SlotRegistration {
  tenant: string;
  appWorkerId: string;
  flowTypes: string[];
  kind: SlotKindName;
  taskLimit: number;
  sdk: string;
}

/** An RPC call running on a slot, or waiting for one. */
export interface RpcCall {
  token: string;
  tenant: string;
  flowId: string;
  flowType: string;
  rpcName: string;
  input: Buffer;
  /** Preferred app worker: only its slots until `stickyUntil` while it is connected. */
  sticky: string;
  stickyUntil: number;
  deadline: number;
  settle(r: RpcSettlement): void;
  settled: boolean;
}

export type RpcSettlement =
  | { kind: 'result'; output?: Buffer; failure?: { message: string; type: string; nonRetryable: boolean }; appWorkerId: string }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'not-found' };

export class Slot {
  state: SlotState = 'idle';
  attempt: HeldAttempt | undefined;
  rpc: RpcCall | undefined;
  lastSentAt = 0;
  readonly out = new Channel<pb.IServerFrame>();

  constructor(
    readonly id: string,
    readonly reg: SlotRegistration,
  ) {}

  send(frame: pb.IServerFrame, now: number): boolean {
    this.lastSentAt = now;
    return this.out.push(frame);
  }
}
