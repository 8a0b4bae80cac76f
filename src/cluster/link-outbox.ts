/**
 * What a node's link to one peer has yet to write. nice-grpc takes the next
 * frame only once the stream has room, so frames for a slow or stopped peer
 * wait here, and this is where they must not pile up:
 *
 * - a capacity snapshot is state, not news: a newer one replaces the queued one;
 * - doorbell notices join the queued doorbell frame, at most MAX_QUEUED_BELL_EVENTS;
 *   past that the oldest go (a lost notice costs latency only: the owner's
 *   backlog count finds the Step, DESIGN §4), and `onBellsDropped` hears it once
 *   the frame is written, so that the peer's fetches and outcome waiters, which
 *   have no such count, can be told to look again;
 * - offer batches are bounded by the link's limit of batches awaiting answers.
 *
 * So the outbox holds at most two one-way frames plus the link's offer batches,
 * however long the peer stalls.
 */
import { Channel } from '../util/channel';
import type { pb } from '../wire';

export const MAX_QUEUED_BELL_EVENTS = 4096;

export class LinkOutbox extends Channel<pb.ILinkFrame> {
  /** The queued, not yet written, frames that later ones merge into. */
  private capacity: pb.ILinkFrame | undefined;
  private doorbell: pb.ILinkFrame | undefined;
  /** One-way frames written before the peer confirmed it serves the link (`confirm`). */
  private written: pb.ILinkFrame[] | undefined = [];
  /** Doorbell notices dropped because the queued frame was full. */
  droppedBellEvents = 0;
  /** The queued doorbell frame lost notices: said when it is written. */
  private bellsDropped = false;
  onBellsDropped: () => void = () => undefined;

  override push(frame: pb.ILinkFrame): boolean {
    if (this.isClosed) return false;
    if (frame.capacity && this.capacity) {
      this.capacity.capacity = frame.capacity;
      return true;
    }
    if (frame.doorbell && this.doorbell) {
      this.mergeBells(this.doorbell.doorbell!, frame.doorbell.events ?? []);
      return true;
    }
    // Copies, so merging never touches a frame the caller also handed elsewhere.
    if (frame.capacity) frame = this.capacity = { capacity: frame.capacity };
    else if (frame.doorbell) {
      const events = frame.doorbell.events ?? [];
      frame = this.doorbell = { doorbell: { ...frame.doorbell, events: [] } };
      this.mergeBells(frame.doorbell!, events);
    }
    return super.push(frame);
  }

  private mergeBells(into: pb.IDoorbellRequest, events: pb.IDoorbellEvent[]): void {
    const all = into.events!;
    all.push(...events);
    const over = all.length - MAX_QUEUED_BELL_EVENTS;
    if (over > 0) {
      all.splice(0, over);
      this.droppedBellEvents += over;
      this.bellsDropped = true;
    }
  }

  /** The peer serves the link: what was written is its to answer for. */
  confirm(): void {
    this.written = undefined;
  }

  /**
   * One-way frames the peer never confirmed, in order: those written before
   * `confirm`, then those never written (handed back when the link ends unserved).
   */
  unconfirmed(): pb.ILinkFrame[] {
    const queued = this.items.filter((f) => !f.offers);
    // Of the snapshots, only the newest means anything to the peer.
    const frames = this.written ? [...this.written, ...queued] : [];
    const last = frames.filter((f) => f.capacity).pop();
    this.items = [];
    this.written = [];
    this.capacity = this.doorbell = undefined;
    return frames.filter((f) => !f.capacity || f === last);
  }

  protected override take(): pb.ILinkFrame | undefined {
    const frame = super.take();
    if (frame === this.capacity) this.capacity = undefined;
    else if (frame === this.doorbell) {
      this.doorbell = undefined;
      if (this.bellsDropped) {
        this.bellsDropped = false;
        this.onBellsDropped();
      }
    }
    if (frame && this.written && !frame.offers) this.written.push(frame);
    return frame;
  }

  /** The call ended: nothing more is written, and what is queued stays for `unconfirmed`. */
  protected override discard(): void {}
}
