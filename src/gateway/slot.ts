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
  /** Register.accepts_task_after_ack: the slot may be freed when its result arrives (gateway stepResult). */
  acceptsTaskAfterAck: boolean;
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
  /** Results whose ack is not written yet on a slot freed early: task frames wait behind them. */
  private acksPending = 0;
  private held: pb.IServerFrame[] = [];

  constructor(
    readonly id: string,
    readonly reg: SlotRegistration,
  ) {}

  send(frame: pb.IServerFrame, now: number): boolean {
    this.lastSentAt = now;
    if (this.acksPending > 0 && (frame.step_task || frame.rpc_task)) {
      if (this.out.isClosed) return false;
      this.held.push(frame);
      return true;
    }
    return this.out.push(frame);
  }

  /** A result arrived and the slot is freed before its ack is written: hold task frames until then. */
  awaitAck(): void {
    this.acksPending++;
  }

  /** The ack (or the stream's end) came: the task frames held behind it go out. */
  ackWritten(): void {
    if (--this.acksPending > 0 || this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    for (const f of held) this.out.push(f);
  }

  /** Whether a task frame is held behind an ack (so the worker has not seen it). */
  get holdsTask(): boolean {
    return this.held.length > 0;
  }
}
