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
  /** A Cancel for it went to the worker. */
  cancelled?: boolean;
  /** Its result is on its way to Redis: that ends the attempt, not the stream's end. */
  recording?: boolean;
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
  /** Register.accepts_task_in_ack: the slot's next Step task may ride in ResultAck.next_task. */
  acceptsTaskInAck: boolean;
  /**
   * An older SDK (Register.protocol_version 3): it sends no Pong while a task runs, so its
   * silence on a busy stream says nothing (matching.busyStreamSilence does not apply).
   */
  quietWhileBusy?: boolean;
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
  /** When it reached this node: what a slot taking it observes as its wait. */
  arrivedAt: number;
  /** Until when a slot may take it (matching.dispatchWait). */
  deadline: number;
  /** Until when the taking worker may run it; the caller gets UNAVAILABLE after. */
  runDeadline: number;
  /** The timer of whichever deadline applies now. */
  timer?: NodeJS.Timeout;
  /** The caller's: it aborts when the caller goes away, wherever the call runs. */
  signal: AbortSignal;
  /** A peer sent it here to run: it does not move on to a third node. */
  pinned?: boolean;
  /** Peers it was handed to that did not run it (unreachable, or their workers lack the name): not handed to again. */
  skipPeers?: Set<string>;
  settle(r: RpcSettlement): void;
  settled: boolean;
  /** Told when it settles without its slot's result (the caller left, its deadline passed). */
  abandoned?: (reason: string) => void;
}

export type RpcSettlement =
  | { kind: 'result'; output?: Buffer; failure?: { message: string; type: string; nonRetryable: boolean }; appWorkerId: string }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'not-found' };

export class Slot {
  attempt: HeldAttempt | undefined;
  rpc: RpcCall | undefined;
  /**
   * The token of `rpc`'s hand-out to this slot: one per hand-out, as a Step's names its
   * attempt's start, so a frame about an earlier hand-out of the same call is stale.
   */
  rpcToken: string | undefined;
  lastSentAt = 0;
  /** When the worker last sent a frame on this stream (Gateway.heardFrom). */
  lastHeardAt = 0;
  readonly out = new Channel<pb.IServerFrame>();
  private slotState: SlotState = 'idle';
  /** Results whose ack is not written yet on a slot freed early: task frames wait behind them. */
  private acksPending = 0;
  private held: pb.IServerFrame[] = [];
  /**
   * An ack kept back while the slot's next start is on its way (a busy slot
   * with no frame held), to go out as one frame with that task. Only while
   * the slot is busy: any other frame, or the slot leaving busy, writes it.
   */
  private deferredAck: pb.IServerFrame | undefined;

  constructor(
    readonly id: string,
    readonly reg: SlotRegistration,
  ) {}

  get state(): SlotState {
    return this.slotState;
  }

  /** Leaving busy means no task follows: a kept-back ack goes out alone. */
  set state(s: SlotState) {
    this.slotState = s;
    if (s !== 'busy') this.writeDeferredAck();
  }

  send(frame: pb.IServerFrame, now: number): boolean {
    this.lastSentAt = now;
    // The ack of a result whose slot was freed early (awaitAck), on a slot bound again.
    if (frame.result_ack && this.acksPending > 0 && this.reg.acceptsTaskInAck && this.slotState === 'busy' && !this.out.isClosed) {
      const next = this.held[0]?.step_task;
      if (next) {
        // The next start finished first: its task rides in this ack.
        this.held.shift();
        return this.out.push({ result_ack: { ...frame.result_ack, next_task: next } });
      }
      // Bound, with neither task nor RPC yet: a start is on its way to Redis.
      if (this.held.length === 0 && !this.deferredAck && !this.attempt && !this.rpc) {
        this.deferredAck = frame;
        return true;
      }
    }
    if (this.deferredAck) {
      if (frame.step_task) {
        const ack = this.deferredAck.result_ack!;
        this.deferredAck = undefined;
        return this.out.push({ result_ack: { ...ack, next_task: frame.step_task } });
      }
      this.writeDeferredAck();
    }
    // A Cancel follows the task it cancels, which may be held behind an ack.
    if ((this.acksPending > 0 && (frame.step_task || frame.rpc_task)) || (frame.cancel && this.held.length > 0)) {
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

  /**
   * Takes back the frame carrying the task of `token` if the stream has not written it yet
   * (the worker reads slowly, or not at all): true when it did, and the worker never saw it.
   */
  takeBackUnread(token: string): boolean {
    return this.out.withdrawWhere((f) => (f.step_task ?? f.result_ack?.next_task)?.task_token === token);
  }

  /** Whether a task frame is held behind an ack (so the worker has not seen it). */
  get holdsTask(): boolean {
    return this.held.length > 0;
  }

  /** Ends the stream after what is queued, a kept-back ack included. */
  close(): void {
    this.writeDeferredAck();
    this.out.close();
  }

  private writeDeferredAck(): void {
    const ack = this.deferredAck;
    if (!ack) return;
    this.deferredAck = undefined;
    this.out.push(ack);
  }
}
