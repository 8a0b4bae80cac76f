/**
 * PeerService.Link: the mesh's hot messages from this node to one peer
 * (capacity snapshots, doorbells, offer batches) over one long-lived stream
 * instead of a unary call each. A unary call costs both nodes a new HTTP/2
 * stream, headers, trailers and a call context; a message on an open stream
 * a fraction of that (docs/benchmarks.md).
 *
 * The serving peer writes `hello` first. Until it arrives nothing sent is
 * known to be served: when the call ends first (UNIMPLEMENTED from an older
 * build, or any break) the link hands those messages back, and the mesh sends
 * them as unary calls. After it, a break loses what was in flight exactly as
 * failed unary calls would: one-way messages cost only latency, and offer
 * batches fail, which owners settle by the start script's state.
 */
import { ClientError, Status, type CallContext, type Client } from 'nice-grpc';
import { invalidArgument } from '../errors';
import type { Logger } from '../util/logger';
import { Channel } from '../util/channel';
import { pb, type PeerServiceDefinition } from '../wire';
import { decodeProblem } from '../wire/adapter';
import { LinkOutbox } from './link-outbox';

type PeerClient = Client<typeof PeerServiceDefinition>;

/** Offer batches awaiting results on one link; past it offers go as unary calls. */
const MAX_PENDING_BATCHES = 64;

export interface PendingBatch {
  frame: pb.ILinkFrame;
  resolve(r: pb.IOfferBatchResponse): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** What the serving end does with a link's frames (the mesh's handlers). */
export interface LinkHandlers {
  capacity(update: pb.ICapacityUpdate): void;
  doorbell(events: pb.IDoorbellEvent[], from: string): void;
  offerBatch(req: pb.IOfferBatchRequest): Promise<pb.IOfferBatchResponse>;
}

/** The dialing end: this node's link to one peer. */
export class PeerLink {
  /** Bounded however long the peer stalls: see LinkOutbox. */
  private readonly out = new LinkOutbox();
  private readonly abort = new AbortController();
  private readonly pending = new Map<number, PendingBatch>();
  private nextId = 1;
  private served = false;
  private ended = false;
  private warnedDrops = false;

  /**
   * `onEnd` gets the reason the call ended (UNIMPLEMENTED: the peer has no
   * Link) and the frames it never confirmed: one-way ones, and offer batches
   * written before `hello` (an older peer never ran them). `onServed` hears the peer's `hello`;
   * `onBellsDropped`, that the peer's reading fell so far behind that doorbell notices were dropped.
   */
  constructor(
    client: PeerClient,
    private readonly offerTimeoutMs: number,
    private readonly onEnd: (unimplemented: boolean, unsent: pb.ILinkFrame[], unsentBatches: PendingBatch[]) => void,
    private readonly log: Logger,
    private readonly onServed: () => void = () => undefined,
    onBellsDropped: () => void = () => undefined,
  ) {
    this.out.onBellsDropped = onBellsDropped;
    void this.run(client);
  }

  get open(): boolean {
    return !this.ended;
  }

  /** Whether another offer batch may wait on this link. */
  get roomForOffers(): boolean {
    return !this.ended && this.pending.size < MAX_PENDING_BATCHES;
  }

  send(frame: pb.ILinkFrame): void {
    if (this.ended) return;
    this.out.push(frame);
    if (this.out.droppedBellEvents > 0 && !this.warnedDrops) {
      this.warnedDrops = true;
      this.log.warn({ queued: this.out.size }, 'peer is not reading its link: oldest doorbell notices dropped (the backlog count finds their Steps)');
    }
  }

  /** Frames waiting for the stream to take them, and doorbell notices dropped meanwhile. */
  get backlog(): { frames: number; droppedBellEvents: number } {
    return { frames: this.out.size, droppedBellEvents: this.out.droppedBellEvents };
  }

  offers(req: pb.IOfferBatchRequest): Promise<pb.IOfferBatchResponse> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const frame: pb.ILinkFrame = { id, offers: req };
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        // Not written yet (the peer reads slowly or not at all): it never will be. Left queued,
        // timed-out batches piled up past the limit of batches awaiting answers, and a peer that
        // caught up ran every stale one.
        this.out.withdraw(frame);
        reject(new Error(`offer batch ${id}: no answer within ${this.offerTimeoutMs} ms`));
      }, this.offerTimeoutMs);
      this.pending.set(id, { frame, resolve, reject, timer });
      this.out.push(frame);
    });
  }

  /** Ends our side; the peer answers what it read, then the call ends. */
  close(): void {
    this.out.close();
    // A peer that never ends the call must not keep it (and its batches) forever.
    setTimeout(() => this.abort.abort(), this.offerTimeoutMs).unref();
  }

  private async run(client: PeerClient): Promise<void> {
    let unimplemented = false;
    try {
      for await (const frame of client.link(this.out, { signal: this.abort.signal })) {
        if (frame.hello) {
          this.served = true;
          this.out.confirm();
          this.onServed();
        } else if (frame.offer_results) {
          const b = this.pending.get(Number(frame.id));
          if (!b) continue;
          this.pending.delete(Number(frame.id));
          clearTimeout(b.timer);
          b.resolve(frame.offer_results);
        }
      }
    } catch (err) {
      unimplemented = err instanceof ClientError && err.code === Status.UNIMPLEMENTED;
      if (!unimplemented) this.log.debug({ err: (err as Error).message }, 'peer link ended');
    } finally {
      this.ended = true;
      this.out.close();
      const batches = [...this.pending.values()];
      this.pending.clear();
      for (const b of batches) clearTimeout(b.timer);
      // Unserved: the peer never read any of it. Served: in-flight batches fail.
      const unsentBatches = this.served ? [] : batches;
      if (this.served) for (const b of batches) b.reject(new Error('the peer link ended before the offer batch was answered'));
      this.onEnd(unimplemented, this.out.unconfirmed(), unsentBatches);
    }
  }
}

/** The serving end of Link: runs the frames of a peer's link; `close` ends every open link (drain). */
export class LinkServer {
  private readonly open = new Set<Channel<pb.ILinkFrame>>();

  constructor(private readonly h: LinkHandlers, private readonly log: Logger) {}

  closeAll(): void {
    for (const out of this.open) out.close();
  }

  /** Peers' links this node serves now. */
  get size(): number {
    return this.open.size;
  }

  handler() {
    const self = this;
    return async function* link(requests: AsyncIterable<pb.LinkFrame>, ctx: CallContext): AsyncIterable<pb.ILinkFrame> {
      const out = new Channel<pb.ILinkFrame>();
      self.open.add(out);
      out.push({ hello: {} });
      let answering = 0;
      let readerDone = false;
      let refused: Error | undefined;
      const endIfDone = () => {
        if (readerDone && answering === 0) out.close();
      };
      void (async () => {
        try {
          for await (const f of requests) {
            // A frame that did not decode ends the link, naming why: read as an empty frame it was
            // dropped without a word (an offer batch left to time out at its owner).
            const undecoded = decodeProblem(f, 'frame', 'LinkFrame protobuf message');
            if (undecoded) {
              refused = invalidArgument(undecoded.field, undecoded.reason);
              self.log.warn({ err: refused.message }, 'peer link ended over a frame that did not decode');
              break;
            }
            if (f.capacity) self.h.capacity(f.capacity);
            else if (f.doorbell) self.h.doorbell(f.doorbell.events ?? [], f.doorbell.from_node_id ?? '');
            else if (f.offers) {
              answering++;
              const id = f.id;
              self.h.offerBatch(f.offers).then(
                (r) => out.push({ id, offer_results: r }),
                (err: Error) => {
                  self.log.warn({ err: err.message }, 'offer batch from peer failed');
                  out.push({ id, offer_results: { results: (f.offers!.offers ?? []).map(() => pb.OfferResult.OFFER_RESULT_UNSPECIFIED) } });
                },
              ).finally(() => {
                answering--;
                endIfDone();
              });
            }
          }
        } catch (err) {
          if (!ctx.signal.aborted) self.log.debug({ err: (err as Error).message }, 'peer link read failed');
        } finally {
          readerDone = true;
          endIfDone();
        }
      })();
      try {
        yield* out;
      } finally {
        self.open.delete(out);
      }
      if (refused) throw refused;
    };
  }
}
