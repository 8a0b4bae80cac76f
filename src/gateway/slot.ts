/**
 * One worker stream = one execution slot. It runs at most one task at a time;
 * `attempt` is the task it holds while busy.
 */
import type { pb } from '../wire';
import { Channel } from './channel';

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

export class Slot {
  state: SlotState = 'idle';
  attempt: HeldAttempt | undefined;
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
